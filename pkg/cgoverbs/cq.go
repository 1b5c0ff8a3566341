package cgoverbs

/*
#include <stdlib.h>
#include <infiniband/verbs.h>
#include "cverrno.h"
#include "cq.h"
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

// PollCount busy-polls in C until n completions came or slice passed
// (see rdma.CountPoller).
func (cq *CQ) PollCount(n int, slice time.Duration) (int, error) {
	got := int(C.cv_poll_count(cq.cq, cq.st, C.int(n), timeoutMillis(slice)))
	if got < 0 {
		return 0, callErr("ibv_poll_cq", C.int(got))
	}
	return got, nil
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
// readable (n may then be 0). On timeout err is rdma.ErrTimeout.
// One cgo call per wait; nothing is allocated.
func (cq *CQ) Await(wc []rdma.WC, otherFd int, timeout time.Duration) (n int, otherReady bool, err error) {
	if cq.ch == nil {
		return 0, false, errors.New("CQ has no completion channel")
	}
	rc := int(C.cv_await(cq.cq, cq.ch.ch, cq.st, C.int(len(wc)), C.int(otherFd), timeoutMillis(timeout)))
	if rc < 0 {
		if syscall.Errno(-rc) == syscall.ETIMEDOUT {
			return 0, false, rdma.ErrTimeout
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
