package rdma

import (
	"net/netip"
	"time"
)

// CMTimer is an optional capability of a CM (found by type assertion):
// cmtime's client, each step over all its connections in one call, the
// events taken by a thread of their own as they come, as cmtime's are,
// so that the steps time rdma_cm and not the caller.
type CMTimer interface {
	// OpenCMTiming makes the event channel and n connection slots.
	// When the system has no RDMA device the error wraps syscall.ENODEV.
	OpenCMTiming(n int) (CMTiming, error)
}

// CMStep is one step of cmtime's table, in its order.
type CMStep int

const (
	CMStepCreateID CMStep = iota
	CMStepBind
	CMStepResolveAddr
	CMStepResolveRoute
	CMStepCreateQP
	CMStepConnect
	CMStepDisconnect
	CMStepDestroy
	CMSteps
)

// CMTiming runs cmtime's client steps over its connections.
type CMTiming interface {
	// Step runs one step on every connection that has not failed (every
	// connection for CMStepCreateID and CMStepDestroy). The steps that
	// end in an event (resolve addr, resolve route, connect, disconnect)
	// wait for all of them, at most a.Idle between two (negative: for
	// ever): ErrTimeout when that passed. Create id stops at the first id
	// that could not be made, destroying those made. Create qp makes RC
	// QPs that share one pair of CQs, as cmtime's do; disconnect
	// destroys each QP after its rdma_disconnect.
	Step(s CMStep, a CMStepArgs) (CMStepResult, error)
	// Close destroys what is left: QPs, ids, CQs, the channel.
	Close() error
}

// CMStepArgs are what the steps take: Src (when valid) for bind and
// resolve addr, Dst for resolve addr, Retries of an ADDR_ERROR or
// ROUTE_ERROR (resolved again that many times), ResolveTimeout for the
// resolve calls, RetryCount for the connect's parameters.
type CMStepArgs struct {
	Src            netip.Addr
	Dst            netip.AddrPort
	Retries        int
	ResolveTimeout time.Duration
	RetryCount     uint8
	Idle           time.Duration
}

// CMStepResult is one step's span and each connection's (zero times:
// not started, or not ended), and its failures in the order they
// happened.
type CMStepResult struct {
	Start, End time.Time
	Conns      []CMSpan
	Failures   []CMFailure
}

// CMSpan is a start and an end.
type CMSpan struct{ Start, End time.Time }

// CMFailure is connection Conn's call that failed (Err) or its error
// event (Event: the type and status).
type CMFailure struct {
	Conn  int
	Err   error
	Event *CMEvent
}
