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
	uint32_t status, opcode, vendor_err, byte_len, imm, flags, qp_num;
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
		w->qp_num = r->qp_num;
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

// cv_ready_to_sleep takes up to max completions of cq or, when there are
// none, arms notification so that the next one makes the channel
// readable: 0 means the caller may sleep on the channel's fd now. No
// clock is read and nothing waits: a caller that sleeps in its own poll
// pays one system call to arm and none else.
static int cv_ready_to_sleep(struct ibv_cq *cq, struct cv_cq_state *st, int max) {
	int n = cv_poll(cq, st, max);
	if (n != 0 || st->armed)
		return n;
	int rc = ibv_req_notify_cq(cq, 0);
	if (rc)
		return cv_neg(rc);
	st->armed = 1;
	// A completion that arrived between the poll and the arming raises
	// no event.
	return cv_poll(cq, st, max);
}

// cv_woken consumes the event that made the channel readable and takes
// up to max completions.
static int cv_woken(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st, int max) {
	int rc = cv_take_event(cq, ch, st);
	if (rc)
		return rc;
	return cv_poll(cq, st, max);
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
			QPNum:     uint32(w.qp_num),
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

// ReadyToSleep takes completions or, when there are none, arms
// notification so that the next completion makes the channel's fd
// readable: 0 means the caller may sleep on that fd now.
func (cq *CQ) ReadyToSleep(wc []rdma.WC) (int, error) {
	if cq.ch == nil {
		return 0, errors.New("CQ has no completion channel")
	}
	return cq.took(wc, C.cv_ready_to_sleep(cq.cq, cq.st, C.int(len(wc))), "ibv_req_notify_cq")
}

// Woken consumes the event that made the channel's fd readable and takes
// completions.
func (cq *CQ) Woken(wc []rdma.WC) (int, error) {
	if cq.ch == nil {
		return 0, errors.New("CQ has no completion channel")
	}
	return cq.took(wc, C.cv_woken(cq.cq, cq.ch.ch, cq.st, C.int(len(wc))), "ibv_get_cq_event")
}

// took copies out rc completions, or turns rc < 0 into call's error.
func (cq *CQ) took(wc []rdma.WC, rc C.int, call string) (int, error) {
	if rc < 0 {
		return 0, callErr(call, rc)
	}
	cq.copyWC(wc, int(rc))
	return int(rc), nil
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
