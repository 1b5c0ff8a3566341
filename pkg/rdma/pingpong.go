package rdma

import (
	"context"
	"time"
)

// PingPong is the measured loop of the ibv_*_pingpong tools: each side
// keeps one send per QP and RxDepth receives in flight, and sends again on
// a QP once a receive on it and its last signaled send completed. All QPs
// share one CQ, the one that runs the loop. When a receive completion
// leaves one receive per QP, the loop tops them up after the answer it
// calls for, where the tools do before: the peer works on the answer
// meanwhile.
type PingPong struct {
	QPs []QP
	// SRQ, when set, takes the receives; else QPs[0] does.
	SRQ SRQ
	// Send is each message; Recv each receive buffer.
	Send, Recv SGE
	Inline     bool
	// UD is the destination of a UD QP's sends.
	UD      *UDDest
	SendID  uint64 // the work request ids the tools use
	RecvID  uint64
	Iters   int
	RxDepth int
	// Client posts the first sends.
	Client bool
	// Events sleeps on the CQ's completion channel instead of polling.
	Events bool
	// SignalEvery is how many sends of a single QP make one signaled
	// send (0 or 1: each send, as the tools do). A QP completes its sends
	// in order, so the completion of every SignalEvery-th one (and of the
	// last) stands for those before it, and the others cost neither the
	// kernel a completion nor the loop a poll. The QP's send queue must
	// hold SignalEvery sends. With several QPs each send is signaled: a
	// QP's last send is not known in advance, and its completion must
	// come for the run to end.
	SignalEvery int
	// YieldAfter is how many empty polls in a row the loop makes before it
	// gives the CPU away between polls (0: from the first). A peer that
	// does not answer within them may be waiting for this CPU: on one CPU
	// it always is, and on more the scheduler can still put two spinning
	// peers on one.
	YieldAfter int
	// Stamps, when not nil (len Iters+1), gets the CLOCK_MONOTONIC
	// nanoseconds of Began and of each receive.
	Stamps []int64
	// Began and Ended are the CLOCK_MONOTONIC nanoseconds where the tools
	// read their clock: once the first sends are posted, and once the last
	// completion is taken (Stop is PingPongDone).
	Began, Ended int64

	// The run's state when the call returned. Sent counts the sends known
	// complete, Posted those posted.
	Sent, Received, Posted int
	// Outstanding is the receives posted and not yet completed: the
	// caller posts RxDepth before the run.
	Outstanding int
	// Stop says why the last call returned; on a failure, WC is the
	// completion that caused it and Polled the size of its batch.
	Stop   PingPongStop
	WC     WC
	Polled int
}

// PingPongStop is why PingPonger.PingPong returned.
type PingPongStop int

const (
	// PingPongDone: Iters sends and receives completed.
	PingPongDone PingPongStop = iota
	// PingPongIdle: the call's idle bound passed without a completion.
	PingPongIdle
	// PingPongCancelled: the call's context was done first.
	PingPongCancelled
	// PingPongFailedStatus: WC completed with an error status.
	PingPongFailedStatus
	// PingPongUnknownWRID: WC carries an id that is neither SendID nor RecvID.
	PingPongUnknownWRID
	// PingPongUnknownQPN: WC came from a QP that is not in QPs.
	PingPongUnknownQPN
	// PingPongRecvsShort: the receives could not be topped up;
	// Outstanding says how many are posted.
	PingPongRecvsShort
	// PingPongSendFailed: a send could not be posted.
	PingPongSendFailed
)

// PingPonger is a CQ that runs the ping-pong loop itself, where cheapest:
// cgoverbs's in C, with no Go code between two round trips. It returns
// when the loop is done or failed, when ctx is done, or once idle
// (negative: no bound) passed without a completion (p.Stop says which);
// err is a failure of the verbs themselves (polling, waiting).
type PingPonger interface {
	PingPong(ctx context.Context, p *PingPong, idle time.Duration) error
}
