package ping

import (
	"time"

	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// How a connection waits for its next completion or CM event: the one
// place that decides between polling and sleeping. Each wait step has its
// own adaptive policy (pkg/pollwait), since the steps' completions arrive
// after very different times (a server waiting for the next ping waits for
// the client's whole turn): a wait polls the CQ only for the time the
// policy grants — never on one CPU, where polling would starve the peer and
// rxe's kernel work — then sleeps on the completion channel.

// busyPollSlice is how long a --busy-poll wait polls before it looks at the
// CM channel, the deadline and the interrupt flag.
const busyPollSlice = 10 * time.Millisecond

// rawWaitSlice is pollwait.RawWaitSlice, named here for the tests.
const rawWaitSlice = pollwait.RawWaitSlice

// prepareWait sets up a new CQ: the C side never polls before it sleeps,
// the policy decides in awaitWork.
func prepareWait(cq rdma.CQ) { cq.SetSpin(0) }

// waiter holds a connection's per-step policies and the optional trace.
type waiter struct {
	policies []*pollwait.Policy
	trace    *pollwait.Trace
	rawWaits bool // sleep in raw polls: this goroutine is the only one that waits
	raw      pollwait.RawWaiter
}

func newWaiter(mode pollwait.Mode, trace *pollwait.Trace, rawWaits bool) *waiter {
	cpus := pollwait.AvailableCPUs()
	w := &waiter{policies: make([]*pollwait.Policy, stepWriteDone+1), trace: trace, rawWaits: rawWaits}
	for i := range w.policies {
		w.policies[i] = pollwait.New(pollwait.Config{Mode: mode, CPUs: cpus})
	}
	return w
}

// awaitWork waits at most timeout (negative: forever) for completions on
// cq, which fill wc[:n], and for one CM event on ec (gotEvent). With cq nil
// — none yet, or its completions no longer handled — it waits for a CM
// event alone. Completions and an event may both arrive; err is
// rdma.ErrTimeout when neither did.
func (w *waiter) awaitWork(step waitStep, cq rdma.CQ, ec rdma.EventChannel, wc []rdma.WC, timeout time.Duration) (n int, ev rdma.CMEvent, gotEvent bool, err error) {
	if cq == nil {
		ev, err = ec.GetEvent(timeout)
		return 0, ev, err == nil, err
	}
	p := w.policies[step]
	budget := p.Spin()
	// Timing the wait costs two clock reads, wasted where nothing learns
	// from it.
	measured := p.Learns() || w.trace != nil
	var start time.Time
	if measured {
		start = time.Now()
	}
	busy := budget == pollwait.Forever
	if busy {
		budget = busyPollSlice
	}
	if timeout >= 0 {
		budget = min(budget, timeout)
	}
	var spun time.Duration
	if budget > 0 {
		n, spun, err = pollwait.SpinPoll(budget, func() (int, error) { return cq.Poll(wc) })
		if n != 0 || err != nil {
			if measured {
				w.observe(step, time.Since(start), spun, true)
			}
			return n, ev, false, err
		}
		if timeout >= 0 {
			timeout = max(timeout-spun, 0)
		}
		if busy {
			timeout = 0 // only look at the CM channel; waitPost loops
		}
	}
	n, cmReady, err := w.await(cq, ec, wc, timeout)
	if n > 0 && measured {
		w.observe(step, time.Since(start), spun, false)
	}
	if err != nil || !cmReady {
		return n, ev, false, err
	}
	ev, err = ec.GetEvent(0)
	return n, ev, err == nil, err
}

func (w *waiter) observe(step waitStep, latency, spun time.Duration, hit bool) {
	w.policies[step].Observe(latency, spun, hit)
	w.trace.Add(pollwait.Wait{Site: stepSites[step], Latency: latency, Spun: spun, Hit: hit})
}

// stepSites name the wait steps in traces.
var stepSites = [...]string{
	stepResolve: "resolve", stepConnect: "connect", stepRead: "read", stepEcho: "echo",
	stepNextPing: "next-ping", stepReadDone: "read-done", stepSinkAdv: "sink-adv", stepWriteDone: "write-done",
}

// await is cq.Await, sleeping in raw polls first where the waiter may
// (pollwait.RawWaiter).
func (w *waiter) await(cq rdma.CQ, ec rdma.EventChannel, wc []rdma.WC, timeout time.Duration) (int, bool, error) {
	if !w.rawWaits {
		return cq.Await(wc, ec, timeout)
	}
	return w.raw.Await(cq, ec, wc, timeout)
}
