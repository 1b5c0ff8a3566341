package cgoverbs

/*
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include "cmtimer.h"
*/
import "C"

import (
	"fmt"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

var _ rdma.CMTimer = Stack{}

// cmTiming is a struct ct in C memory: its event thread holds a pointer
// to it for its whole life.
type cmTiming struct {
	t *C.struct_ct
	n int
}

// cmtimer.h numbers the steps as rdma.CMStep does: where a pair differs,
// its index is out of range and the build fails.
var (
	_ = [1]struct{}{}[int(C.CT_CREATE_ID)-int(rdma.CMStepCreateID)]
	_ = [1]struct{}{}[int(C.CT_BIND)-int(rdma.CMStepBind)]
	_ = [1]struct{}{}[int(C.CT_RESOLVE_ADDR)-int(rdma.CMStepResolveAddr)]
	_ = [1]struct{}{}[int(C.CT_RESOLVE_ROUTE)-int(rdma.CMStepResolveRoute)]
	_ = [1]struct{}{}[int(C.CT_CREATE_QP)-int(rdma.CMStepCreateQP)]
	_ = [1]struct{}{}[int(C.CT_CONNECT)-int(rdma.CMStepConnect)]
	_ = [1]struct{}{}[int(C.CT_DISCONNECT)-int(rdma.CMStepDisconnect)]
	_ = [1]struct{}{}[int(C.CT_DESTROY)-int(rdma.CMStepDestroy)]
	_ = [1]struct{}{}[int(C.CT_STEPS)-int(rdma.CMSteps)]
)

// The call each step makes, named in its failures.
var cmStepVerbs = [rdma.CMSteps]string{
	"rdma_create_id", "rdma_bind_addr", "rdma_resolve_addr", "rdma_resolve_route",
	"rdma_create_qp", "rdma_connect", "rdma_disconnect", "rdma_destroy_id",
}

// OpenCMTiming makes the channel, n connection slots and the event thread.
func (Stack) OpenCMTiming(n int) (rdma.CMTiming, error) {
	if n < 0 {
		return nil, &rdma.Error{Op: "rdma_create_id", Errno: syscall.EINVAL}
	}
	t := (*C.struct_ct)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ct{}))))
	if t == nil {
		return nil, &rdma.Error{Op: rdma.OpMalloc, Errno: syscall.ENOMEM}
	}
	if rc := C.ct_open(t, C.int(n)); rc != 0 {
		C.ct_close(t)
		C.free(unsafe.Pointer(t))
		return nil, cmError("rdma_create_event_channel", rc)
	}
	return &cmTiming{t: t, n: n}, nil
}

func (m *cmTiming) Step(s rdma.CMStep, a rdma.CMStepArgs) (rdma.CMStepResult, error) {
	if m.t == nil || s < 0 || s >= rdma.CMSteps {
		return rdma.CMStepResult{}, &rdma.Error{Op: "cmtime step", Errno: syscall.EINVAL}
	}
	var src, dst C.struct_cm_addr
	var err error
	if a.Src.IsValid() {
		if src, err = toCMAddr(netip.AddrPortFrom(a.Src, 0)); err != nil {
			return rdma.CMStepResult{}, err
		}
	}
	if a.Dst.IsValid() {
		if dst, err = toCMAddr(a.Dst); err != nil {
			return rdma.CMStepResult{}, err
		}
	}
	var start, end C.int64_t
	rc := C.ct_step(m.t, C.int(s), &src, &dst, C.int(a.Retries), timeoutMillis(a.ResolveTimeout),
		C.uint8_t(a.RetryCount), timeoutMillis(a.Idle), &start, &end)
	res := rdma.CMStepResult{Start: usTime(start), End: usTime(end), Conns: make([]rdma.CMSpan, m.n)}
	conns := unsafe.Slice(m.t.conns, m.n)
	for i := range res.Conns {
		res.Conns[i] = rdma.CMSpan{Start: usTime(conns[i].start_us), End: usTime(conns[i].end_us)}
	}
	for _, n := range unsafe.Slice(m.t.notes, m.t.nnotes) {
		f := rdma.CMFailure{Conn: int(n.conn)}
		if n.event != 0 {
			f.Event = &rdma.CMEvent{Type: rdma.CMEventType(n.event), Status: int(n.err)}
		} else {
			f.Err = cmError(cmStepVerbs[s], n.err)
		}
		res.Failures = append(res.Failures, f)
	}
	switch {
	case rc == 0:
		return res, nil
	case syscall.Errno(-rc) == syscall.ETIMEDOUT:
		return res, rdma.ErrTimeout
	}
	return res, fmt.Errorf("cmtime's event thread: %w", cmError("rdma_get_cm_event", rc))
}

func usTime(us C.int64_t) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(int64(us))
}

func (m *cmTiming) Close() error {
	if m.t != nil {
		C.ct_close(m.t)
		C.free(unsafe.Pointer(m.t))
		m.t = nil
	}
	return nil
}
