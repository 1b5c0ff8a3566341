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

static struct ibv_mr *cv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access) {
	return ibv_reg_mr(pd, addr, len, access);
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
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

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
