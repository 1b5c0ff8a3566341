package cgoverbs

/*
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <infiniband/verbs.h>

enum { PF_POLL_MAX = 64 };

// pf_list is a chain of identical send work requests in C memory, built
// once and re-posted with new ids: one ibv_post_send per burst, nothing
// allocated per message.
struct pf_list {
	int cap;
	struct ibv_sge sge;
	struct ibv_send_wr *wr;
};

static struct pf_list *pf_list_new(int cap, int opcode, uint64_t addr, uint32_t len, uint32_t lkey,
				   uint64_t raddr, uint32_t rkey, int inl) {
	struct pf_list *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->wr = calloc(cap, sizeof *l->wr);
	if (!l->wr) {
		free(l);
		return NULL;
	}
	l->cap = cap;
	l->sge.addr = addr;
	l->sge.length = len;
	l->sge.lkey = lkey;
	for (int i = 0; i < cap; i++) {
		struct ibv_send_wr *w = &l->wr[i];
		w->sg_list = &l->sge;
		w->num_sge = 1;
		w->opcode = opcode;
		w->send_flags = inl ? IBV_SEND_INLINE : 0;
		w->wr.rdma.remote_addr = raddr;
		w->wr.rdma.rkey = rkey;
	}
	return l;
}

static void pf_list_free(struct pf_list *l) {
	if (l) {
		free(l->wr);
		free(l);
	}
}

// pf_post posts n requests with ids first..first+n-1; request i asks for
// a completion when its count (id+1) is a multiple of cq_mod or the last
// of total.
static int pf_post(struct ibv_qp *qp, struct pf_list *l, uint64_t first, int n, int cq_mod, uint64_t total) {
	if (n > l->cap)
		return EINVAL;
	for (int i = 0; i < n; i++) {
		struct ibv_send_wr *w = &l->wr[i];
		uint64_t id = first + i;
		w->wr_id = id;
		w->next = i + 1 < n ? &l->wr[i + 1] : NULL;
		if ((id + 1) % cq_mod == 0 || id + 1 == total)
			w->send_flags |= IBV_SEND_SIGNALED;
		else
			w->send_flags &= ~IBV_SEND_SIGNALED;
	}
	struct ibv_send_wr *bad;
	return ibv_post_send(qp, l->wr, &bad);
}

// pf_post_recvs posts n receives of the same buffer in one call.
static int pf_post_recvs(struct ibv_qp *qp, int n, uint64_t addr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr[32], *bad;
	while (n > 0) {
		int k = n < 32 ? n : 32;
		for (int i = 0; i < k; i++) {
			wr[i].wr_id = 0;
			wr[i].sg_list = &sge;
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		int rc = ibv_post_recv(qp, wr, &bad);
		if (rc)
			return rc;
		n -= k;
	}
	return 0;
}

// pf_poll takes up to max completions, storing their ids. It stops at the
// first failed one: its status and vendor error go to *bad_status and
// *bad_vendor and the return value counts the good ones before it, negated
// minus one.
static int pf_poll(struct ibv_cq *cq, int max, uint64_t *ids, uint32_t *bad_status, uint32_t *bad_vendor) {
	struct ibv_wc wc[PF_POLL_MAX];
	if (max > PF_POLL_MAX)
		max = PF_POLL_MAX;
	int n = ibv_poll_cq(cq, max, wc);
	if (n < 0)
		return -1 - 0;
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			*bad_status = wc[i].status;
			*bad_vendor = wc[i].vendor_err;
			return -1 - i;
		}
		ids[i] = wc[i].wr_id;
	}
	return n;
}

static long pf_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

// pf_spin_byte waits until *p == want, for at most timeout_ms; with yield
// it gives the CPU away between looks. Returns 0, or ETIMEDOUT.
static int pf_spin_byte(const volatile uint8_t *p, uint8_t want, int timeout_ms, int yield) {
	long deadline = pf_now_ms() + timeout_ms;
	for (unsigned i = 0;; i++) {
		if (*p == want)
			return 0;
		if (timeout_ms >= 0 && (i & 1023) == 1023 && pf_now_ms() > deadline)
			return ETIMEDOUT;
		if (yield)
			sched_yield();
	}
}

static int64_t pf_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// pf_stream is a whole bandwidth run in one call, so that no scheduler
// sits between a completion and the next post: keep tx_depth requests in
// flight until iters have completed, stamping posted[i] and, for each
// signalled request, completed[i] (CLOCK_MONOTONIC ns). Returns the number
// completed; on a failed completion -1 with *bad_status set, -2 when
// idle_ms passed without a completion, -3 - errno when posting failed.
static int64_t pf_stream(struct ibv_qp *qp, struct ibv_cq *cq, struct pf_list *l, int64_t iters,
			 int tx_depth, int cq_mod, int64_t *posted, int64_t *completed, int idle_ms,
			 uint32_t *bad_status, uint32_t *bad_vendor) {
	struct ibv_wc wc[PF_POLL_MAX];
	int64_t scnt = 0, ccnt = 0;
	int64_t deadline = pf_now_ns() + (int64_t)idle_ms * 1000000;
	unsigned spins = 0;
	while (ccnt < iters) {
		while (scnt < iters && scnt - ccnt < tx_depth) {
			int64_t n = iters - scnt;
			if (n > tx_depth - (scnt - ccnt))
				n = tx_depth - (scnt - ccnt);
			if (n > l->cap)
				n = l->cap;
			int64_t t = pf_now_ns();
			for (int64_t k = scnt; k < scnt + n; k++)
				posted[k] = t;
			int rc = pf_post(qp, l, scnt, (int)n, cq_mod, iters);
			if (rc)
				return -3 - rc;
			scnt += n;
		}
		int ne = ibv_poll_cq(cq, PF_POLL_MAX, wc);
		if (ne < 0)
			return -3 - EIO;
		if (ne == 0) {
			if ((++spins & 0xffff) == 0 && pf_now_ns() > deadline)
				return -2;
			continue;
		}
		int64_t t = pf_now_ns();
		deadline = t + (int64_t)idle_ms * 1000000;
		for (int i = 0; i < ne; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				*bad_status = wc[i].status;
				*bad_vendor = wc[i].vendor_err;
				return -1;
			}
			int64_t id = (int64_t)wc[i].wr_id;
			if (id >= 0 && id < iters) {
				completed[id] = t;
				if (id + 1 > ccnt)
					ccnt = id + 1;
			}
		}
	}
	return ccnt;
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// SendList is a reusable chain of identical send work requests for the
// bandwidth loops: Post sends a burst of them with one ibv_post_send.
type SendList struct {
	l *C.struct_pf_list
}

// NewSendList builds a chain of up to capacity requests of op over local,
// aimed at remoteAddr/rkey (ignored for sends); inline asks the device to
// copy the payload at post time.
func NewSendList(capacity int, op Opcode, local SGE, remoteAddr uint64, rkey uint32, inline bool) (*SendList, error) {
	l := C.pf_list_new(C.int(capacity), C.int(op), C.uint64_t(local.Addr), C.uint32_t(local.Len),
		C.uint32_t(local.LKey), C.uint64_t(remoteAddr), C.uint32_t(rkey), cBool(inline))
	if l == nil {
		return nil, fmt.Errorf("send list of %d: %w", capacity, syscall.ENOMEM)
	}
	return &SendList{l: l}, nil
}

// Post sends n requests with ids first, first+1, …; a request is signalled
// when its count (id+1) is a multiple of cqMod or equals total.
func (s *SendList) Post(qp *QP, first uint64, n, cqMod int, total uint64) error {
	if rc := C.pf_post(qp.qp, s.l, C.uint64_t(first), C.int(n), C.int(cqMod), C.uint64_t(total)); rc != 0 {
		return rdma.Errorf("ibv_post_send", syscall.Errno(rc))
	}
	return nil
}

// StreamRun is Stream in one cgo call: it keeps txDepth requests of the
// list in flight on qp until len(posted) have completed on cq, stamping
// posted[i] and, for signalled requests, completed[i] with CLOCK_MONOTONIC
// nanoseconds. idle bounds the wait for any completion.
func (s *SendList) StreamRun(qp *QP, cq *CQ, txDepth, cqMod int, posted, completed []int64, idle time.Duration) (int, error) {
	if len(posted) == 0 || len(completed) < len(posted) {
		return 0, fmt.Errorf("stream of %d with %d completion slots", len(posted), len(completed))
	}
	var st, vendor C.uint32_t
	rc := int64(C.pf_stream(qp.qp, cq.cq, s.l, C.int64_t(len(posted)), C.int(txDepth), C.int(cqMod),
		(*C.int64_t)(unsafe.Pointer(&posted[0])), (*C.int64_t)(unsafe.Pointer(&completed[0])),
		timeoutMillis(idle), &st, &vendor))
	switch {
	case rc >= 0:
		return int(rc), nil
	case rc == -1:
		return 0, &rdma.WCError{Status: rdma.WCStatus(st), VendorErr: uint32(vendor)}
	case rc == -2:
		return 0, ErrTimeout
	}
	return 0, rdma.Errorf("ibv_post_send", syscall.Errno(-3-rc))
}

// Close frees the chain.
func (s *SendList) Close() {
	if s != nil && s.l != nil {
		C.pf_list_free(s.l)
		s.l = nil
	}
}

// PostRecvs posts n receives of sge, in lists of up to 32 per call.
func (qp *QP) PostRecvs(n int, sge SGE) error {
	if rc := C.pf_post_recvs(qp.qp, C.int(n), C.uint64_t(sge.Addr), C.uint32_t(sge.Len), C.uint32_t(sge.LKey)); rc != 0 {
		return rdma.Errorf("ibv_post_recv", syscall.Errno(rc))
	}
	return nil
}

// PollIDs takes up to len(ids) (at most 64) completions in one call and
// stores their work request ids. A failed completion ends the batch: the
// good ones before it are counted and err is an *rdma.WCError.
func (cq *CQ) PollIDs(ids []uint64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var st, vendor C.uint32_t
	rc := int(C.pf_poll(cq.cq, C.int(len(ids)), (*C.uint64_t)(unsafe.Pointer(&ids[0])), &st, &vendor))
	if rc >= 0 {
		return rc, nil
	}
	if st == 0 && vendor == 0 {
		return 0, rdma.Errorf("ibv_poll_cq", syscall.EIO)
	}
	return -1 - rc, &rdma.WCError{Status: rdma.WCStatus(st), VendorErr: uint32(vendor)}
}

// SpinByte waits until byte off of b reads want — the peer's RDMA write
// arriving — for at most timeout. yield gives the CPU away between looks.
func (b *Buffer) SpinByte(off int, want byte, timeout time.Duration, yield bool) error {
	if off < 0 || off >= len(b.bytes) {
		return fmt.Errorf("spin at %d outside a %d-byte buffer", off, len(b.bytes))
	}
	p := (*C.uint8_t)(unsafe.Add(b.p, off))
	if rc := C.pf_spin_byte(p, C.uint8_t(want), timeoutMillis(timeout), cBool(yield)); rc != 0 {
		return ErrTimeout
	}
	return nil
}
