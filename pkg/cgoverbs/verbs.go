package cgoverbs

/*
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <endian.h>
#include <infiniband/verbs.h>
#include "cverrno.h"

// cv_wc is a flat copy of struct ibv_wc (whose immediate sits in an
// anonymous union cgo cannot name), with the immediate in host order.
struct cv_wc {
	uint64_t wr_id;
	uint32_t status, opcode, vendor_err, byte_len, imm, flags;
};

enum { CV_WC_BATCH = 16 };

// cv_cq_state lives in C memory beside each CQ: the poll batch, whether a
// notification is requested, and the out-flag of cv_await.
struct cv_cq_state {
	int armed;
	int other_ready;
	int spin; // polls to try before arming and blocking
	struct ibv_wc raw[CV_WC_BATCH];
	struct cv_wc wc[CV_WC_BATCH];
};

static struct ibv_mr *cv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access) {
	return ibv_reg_mr(pd, addr, len, access);
}

static int cv_poll(struct ibv_cq *cq, struct cv_cq_state *st, int max) {
	if (max > CV_WC_BATCH)
		max = CV_WC_BATCH;
	int n = ibv_poll_cq(cq, max, st->raw);
	if (n < 0)
		return cv_neg(n);
	for (int i = 0; i < n; i++) {
		struct ibv_wc *r = &st->raw[i];
		struct cv_wc *w = &st->wc[i];
		w->wr_id = r->wr_id;
		w->status = r->status;
		w->opcode = r->opcode;
		w->vendor_err = r->vendor_err;
		w->byte_len = r->byte_len;
		w->imm = (r->wc_flags & IBV_WC_WITH_IMM) ? be32toh(r->imm_data) : 0;
		w->flags = r->wc_flags;
	}
	return n;
}

static long cv_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

// cv_wait_fds polls fd a (and b when >= 0) for input, retrying on EINTR
// until timeout_ms (-1 = forever) has passed. Returns a bitmask of ready fds
// (1 = a, 2 = b), 0 on timeout, -errno on failure.
static int cv_wait_fds(int a, int b, int timeout_ms) {
	struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
	long deadline = timeout_ms >= 0 ? cv_now_ms() + timeout_ms : 0;
	for (;;) {
		int left = -1;
		if (timeout_ms >= 0) {
			long l = deadline - cv_now_ms();
			left = l > 0 ? (int)l : 0;
		}
		int n = poll(p, b >= 0 ? 2 : 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		return (p[0].revents ? 1 : 0) | (b >= 0 && p[1].revents ? 2 : 0);
	}
}

// cv_take_event reads and acknowledges one completion event of cq.
static int cv_take_event(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st) {
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return -errno;
	ibv_ack_cq_events(ev_cq, 1);
	if (ev_cq != cq)
		return -EINVAL;
	st->armed = 0;
	return 0;
}

// cv_await returns up to max completions of cq, blocking on its channel
// (and on other_fd when >= 0) for at most timeout_ms. Returns the number
// of completions; 0 with st->other_ready set when other_fd became readable
// first; -ETIMEDOUT; or -errno.
static int cv_await(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st,
		    int max, int other_fd, int timeout_ms) {
	long deadline = timeout_ms >= 0 ? cv_now_ms() + timeout_ms : 0;
	st->other_ready = 0;
	for (int i = 0; i < st->spin; i++) {
		int n = cv_poll(cq, st, max);
		if (n != 0)
			return n;
	}
	for (;;) {
		int n = cv_poll(cq, st, max);
		if (n != 0)
			return n;
		if (!st->armed) {
			// Arm, then look again: a completion that arrived between the
			// poll and the arming raises no event.
			int rc = ibv_req_notify_cq(cq, 0);
			if (rc)
				return cv_neg(rc);
			st->armed = 1;
			continue;
		}
		int left = -1;
		if (timeout_ms >= 0) {
			long l = deadline - cv_now_ms();
			left = l > 0 ? (int)l : 0;
		}
		int ready = cv_wait_fds(ch->fd, other_fd, left);
		if (ready < 0)
			return ready;
		if (ready == 0)
			return -ETIMEDOUT;
		if (ready & 1) {
			int rc = cv_take_event(cq, ch, st);
			if (rc)
				return rc;
		}
		if (ready & 2) {
			st->other_ready = 1;
			n = cv_poll(cq, st, max);
			return n;
		}
	}
}

static int cv_post_send(struct ibv_qp *qp, uint64_t id, int opcode, unsigned flags,
			uint64_t addr, uint32_t len, uint32_t lkey,
			uint64_t raddr, uint32_t rkey, uint32_t imm) {
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = id;
	wr.opcode = opcode;
	wr.send_flags = flags;
	if (len || addr) {
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	wr.imm_data = htobe32(imm);
	return cv_neg(ibv_post_send(qp, &wr, &bad));
}

static int cv_post_recv(struct ibv_qp *qp, uint64_t id, uint64_t addr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad;
	return cv_neg(ibv_post_recv(qp, &wr, &bad));
}

static int cv_qp_to_error(struct ibv_qp *qp) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_ERR;
	return cv_neg(ibv_modify_qp(qp, &a, IBV_QP_STATE));
}
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// ErrTimeout is returned by the waiting calls when their timeout passed.
var ErrTimeout error = syscall.ETIMEDOUT

// PD is a protection domain.
type PD struct {
	pd *C.struct_ibv_pd
}

// AllocPD allocates a protection domain on the device.
func (c *Context) AllocPD() (*PD, error) {
	pd, err := C.ibv_alloc_pd(c.c)
	if pd == nil {
		return nil, errnoErr("ibv_alloc_pd", err, syscall.ENOMEM)
	}
	return &PD{pd: pd}, nil
}

// Close deallocates the protection domain.
func (pd *PD) Close() error {
	if pd == nil || pd.pd == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_dealloc_pd(pd.pd))
	pd.pd = nil
	return callErr("ibv_dealloc_pd", rc)
}

// Buffer is page-aligned, zeroed C memory: memory regions must not point
// into the Go heap, which the collector may move or reuse.
type Buffer struct {
	p     unsafe.Pointer
	bytes []byte
}

// AllocBuffer allocates n bytes of C memory.
func AllocBuffer(n int) (*Buffer, error) {
	if n <= 0 {
		return nil, fmt.Errorf("buffer size %d: must be positive", n)
	}
	var p unsafe.Pointer
	if rc := C.posix_memalign(&p, C.size_t(syscall.Getpagesize()), C.size_t(n)); rc != 0 {
		return nil, rdma.Errorf(fmt.Sprintf("posix_memalign(%d)", n), syscall.Errno(rc))
	}
	C.memset(p, 0, C.size_t(n))
	return &Buffer{p: p, bytes: unsafe.Slice((*byte)(p), n)}, nil
}

// Bytes is the buffer's memory; valid until Close.
func (b *Buffer) Bytes() []byte { return b.bytes }

// Addr is the buffer's address as the verbs see it.
func (b *Buffer) Addr() uint64 { return uint64(uintptr(b.p)) }

// Close frees the memory; deregister every MR on it first.
func (b *Buffer) Close() {
	if b == nil || b.p == nil {
		return
	}
	C.free(b.p)
	b.p, b.bytes = nil, nil
}

// Access is a set of IBV_ACCESS_* flags for memory registration.
type Access = rdma.Access

const (
	AccessLocalWrite  Access = C.IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite Access = C.IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead  Access = C.IBV_ACCESS_REMOTE_READ
)

// MR is a registered memory region covering a whole Buffer.
type MR struct {
	mr         *C.struct_ibv_mr
	addr       uint64
	n          int
	lkey, rkey uint32
}

// RegMR registers b with the given remote/local access rights.
func (pd *PD) RegMR(b *Buffer, access Access) (*MR, error) {
	mr, err := C.cv_reg_mr(pd.pd, b.p, C.size_t(len(b.bytes)), C.int(access))
	if mr == nil {
		return nil, errnoErr(fmt.Sprintf("ibv_reg_mr(%d bytes)", len(b.bytes)), err, syscall.ENOMEM)
	}
	return &MR{mr: mr, addr: b.Addr(), n: len(b.bytes), lkey: uint32(mr.lkey), rkey: uint32(mr.rkey)}, nil
}

func (m *MR) LKey() uint32 { return m.lkey }
func (m *MR) RKey() uint32 { return m.rkey }
func (m *MR) Addr() uint64 { return m.addr }
func (m *MR) Len() int     { return m.n }

// SGE returns a scatter/gather entry for the first n bytes of the region.
func (m *MR) SGE(n uint32) SGE { return SGE{Addr: m.addr, Len: n, LKey: m.lkey} }

// Close deregisters the region.
func (m *MR) Close() error {
	if m == nil || m.mr == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_dereg_mr(m.mr))
	m.mr = nil
	return callErr("ibv_dereg_mr", rc)
}

// CompChannel delivers completion events; its fd can be polled.
type CompChannel struct {
	ch *C.struct_ibv_comp_channel
}

// CreateCompChannel creates a completion event channel on the device.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	ch, err := C.ibv_create_comp_channel(c.c)
	if ch == nil {
		return nil, errnoErr("ibv_create_comp_channel", err, syscall.ENOMEM)
	}
	return &CompChannel{ch: ch}, nil
}

// Fd is the channel's file descriptor, readable when an event is pending.
func (ch *CompChannel) Fd() int { return int(ch.ch.fd) }

// Close destroys the channel; destroy its CQs first.
func (ch *CompChannel) Close() error {
	if ch == nil || ch.ch == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_destroy_comp_channel(ch.ch))
	ch.ch = nil
	return callErr("ibv_destroy_comp_channel", rc)
}

// CQ is a completion queue, optionally tied to a CompChannel.
type CQ struct {
	cq *C.struct_ibv_cq
	ch *CompChannel
	st *C.struct_cv_cq_state
}

// CreateCQ creates a CQ with at least cqe entries; ch may be nil when the
// CQ is only ever polled.
func (c *Context) CreateCQ(cqe int, ch *CompChannel) (*CQ, error) {
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.ch
	}
	st := (*C.struct_cv_cq_state)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_cv_cq_state{}))))
	if st == nil {
		return nil, rdma.Errorf("ibv_create_cq", syscall.ENOMEM)
	}
	cq, err := C.ibv_create_cq(c.c, C.int(cqe), nil, cch, 0)
	if cq == nil {
		C.free(unsafe.Pointer(st))
		return nil, errnoErr(fmt.Sprintf("ibv_create_cq(%d)", cqe), err, syscall.ENOMEM)
	}
	return &CQ{cq: cq, ch: ch, st: st}, nil
}

// Poll takes up to len(wc) (at most 16) completions without blocking.
func (cq *CQ) Poll(wc []rdma.WC) (int, error) {
	n := int(C.cv_poll(cq.cq, cq.st, C.int(len(wc))))
	if n < 0 {
		return 0, callErr("ibv_poll_cq", C.int(n))
	}
	cq.copyWC(wc, n)
	return n, nil
}

func (cq *CQ) copyWC(dst []rdma.WC, n int) {
	for i := 0; i < n; i++ {
		w := &cq.st.wc[i]
		dst[i] = rdma.WC{
			WRID:      uint64(w.wr_id),
			Status:    rdma.WCStatus(w.status),
			Opcode:    rdma.WCOpcode(w.opcode),
			VendorErr: uint32(w.vendor_err),
			ByteLen:   uint32(w.byte_len),
			Imm:       uint32(w.imm),
			HasImm:    w.flags&C.IBV_WC_WITH_IMM != 0,
		}
	}
}

// Await returns completions, blocking on the completion channel — and on
// otherFd too when it is >= 0 — for at most timeout (negative = forever).
// It polls first and arms notification itself. otherReady reports that otherFd became
// readable (n may then be 0). On timeout err is ErrTimeout.
// One cgo call per wait; nothing is allocated.
func (cq *CQ) Await(wc []rdma.WC, otherFd int, timeout time.Duration) (n int, otherReady bool, err error) {
	if cq.ch == nil {
		return 0, false, errors.New("CQ has no completion channel")
	}
	rc := int(C.cv_await(cq.cq, cq.ch.ch, cq.st, C.int(len(wc)), C.int(otherFd), timeoutMillis(timeout)))
	if rc < 0 {
		if syscall.Errno(-rc) == syscall.ETIMEDOUT {
			return 0, false, ErrTimeout
		}
		return 0, false, callErr("waiting for completions", C.int(rc))
	}
	cq.copyWC(wc, rc)
	return rc, cq.st.other_ready != 0, nil
}

// SetSpin makes Await poll the CQ up to n times before it blocks.
func (cq *CQ) SetSpin(n int) { cq.st.spin = C.int(n) }

// Close destroys the CQ; destroy the QPs using it first.
func (cq *CQ) Close() error {
	if cq == nil || cq.cq == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_destroy_cq(cq.cq))
	C.free(unsafe.Pointer(cq.st))
	cq.cq, cq.st = nil, nil
	return callErr("ibv_destroy_cq", rc)
}

// QPCap sizes a queue pair. SigAll makes every send signalled.
type QPCap struct {
	MaxSendWR, MaxRecvWR, MaxSendSGE, MaxRecvSGE, MaxInlineData uint32
	SigAll                                                      bool
}

// QP is a reliable-connected queue pair.
type QP struct {
	qp *C.struct_ibv_qp
	// cm is set when rdma_cm created the QP, which must then destroy it.
	cm *CMID
}

// CreateRCQP creates an RC QP in RESET state.
func (pd *PD) CreateRCQP(send, recv *CQ, cap QPCap) (*QP, error) {
	attr := cap.initAttr(send, recv)
	qp, err := C.ibv_create_qp(pd.pd, &attr)
	if qp == nil {
		return nil, errnoErr("ibv_create_qp", err, syscall.EINVAL)
	}
	return &QP{qp: qp}, nil
}

// initAttr is the creation record of an RC QP with these capabilities,
// shared by CreateRCQP and the CM's CreateQP.
func (cap QPCap) initAttr(send, recv *CQ) C.struct_ibv_qp_init_attr {
	var a C.struct_ibv_qp_init_attr
	a.send_cq, a.recv_cq = send.cq, recv.cq
	a.cap.max_send_wr = C.uint32_t(cap.MaxSendWR)
	a.cap.max_recv_wr = C.uint32_t(cap.MaxRecvWR)
	a.cap.max_send_sge = C.uint32_t(cap.MaxSendSGE)
	a.cap.max_recv_sge = C.uint32_t(cap.MaxRecvSGE)
	a.cap.max_inline_data = C.uint32_t(cap.MaxInlineData)
	a.qp_type = C.IBV_QPT_RC
	a.sq_sig_all = cBool(cap.SigAll)
	return a
}

// Num is the QP number.
func (qp *QP) Num() uint32 { return uint32(qp.qp.qp_num) }

// ToError moves the QP to the error state, flushing its outstanding work.
func (qp *QP) ToError() error {
	return callErr("ibv_modify_qp(ERR)", C.cv_qp_to_error(qp.qp))
}

// Close destroys the QP.
func (qp *QP) Close() error {
	if qp == nil || qp.qp == nil {
		return nil
	}
	if qp.cm != nil {
		qp.cm.destroyQP()
		qp.qp, qp.cm = nil, nil
		return nil
	}
	rc := C.cv_neg(C.ibv_destroy_qp(qp.qp))
	qp.qp = nil
	return callErr("ibv_destroy_qp", rc)
}

// SGE is one scatter/gather entry.
type SGE struct {
	Addr uint64
	Len  uint32
	LKey uint32
}

// Opcode is a send work request opcode (enum ibv_wr_opcode).
type Opcode uint32

const (
	OpRDMAWrite        Opcode = C.IBV_WR_RDMA_WRITE
	OpRDMAWriteWithImm Opcode = C.IBV_WR_RDMA_WRITE_WITH_IMM
	OpSend             Opcode = C.IBV_WR_SEND
	OpSendWithImm      Opcode = C.IBV_WR_SEND_WITH_IMM
	OpRDMARead         Opcode = C.IBV_WR_RDMA_READ
)

// SendWR is one send work request with a single SGE (none when Local is
// zero). RemoteAddr/RKey are for RDMA reads and writes; Imm (host order)
// for the *WithImm opcodes.
type SendWR struct {
	ID         uint64
	Op         Opcode
	Local      SGE
	RemoteAddr uint64
	RKey       uint32
	Imm        uint32
	Signaled   bool
}

// PostSend posts wr to the send queue: one cgo call, no allocation.
func (qp *QP) PostSend(wr SendWR) error {
	var flags C.unsigned
	if wr.Signaled {
		flags |= C.IBV_SEND_SIGNALED
	}
	rc := C.cv_post_send(qp.qp, C.uint64_t(wr.ID), C.int(wr.Op), flags,
		C.uint64_t(wr.Local.Addr), C.uint32_t(wr.Local.Len), C.uint32_t(wr.Local.LKey),
		C.uint64_t(wr.RemoteAddr), C.uint32_t(wr.RKey), C.uint32_t(wr.Imm))
	return callErr("ibv_post_send", rc)
}

// PostRecv posts one receive buffer.
func (qp *QP) PostRecv(id uint64, sge SGE) error {
	rc := C.cv_post_recv(qp.qp, C.uint64_t(id), C.uint64_t(sge.Addr), C.uint32_t(sge.Len), C.uint32_t(sge.LKey))
	return callErr("ibv_post_recv", rc)
}

// timeoutMillis turns a Go timeout into poll(2)'s: negative = forever,
// rounded up so that a sub-millisecond timeout still waits.
func timeoutMillis(d time.Duration) C.int {
	if d < 0 {
		return -1
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > 1<<31-1 {
		ms = 1<<31 - 1
	}
	return C.int(ms)
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// callErr wraps what a C helper returned, 0 or -errno, as rdma.Error.
func callErr(op string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return rdma.Errorf(op, syscall.Errno(-rc))
}

// errnoErr wraps the errno a C call that returns a pointer left behind
// (cgo's second result) as rdma.Error; fallback only when it set none.
func errnoErr(op string, err error, fallback syscall.Errno) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 {
		errno = fallback
	}
	return rdma.Errorf(op, errno)
}
