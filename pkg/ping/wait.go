package ping

import (
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// How a connection waits for its next completion or CM event: the one
// place to change the waiting policy.

// spinPolls is how many times a wait polls the CQ before it sleeps on the
// completion channel. The peer usually answers within that (microseconds
// on hardware, a millisecond under emulation), which saves the interrupt
// and wake-up; past it the thread sleeps as rping's does. Measured in the
// lab: about a third off each ping.
const spinPolls = 2000

// prepareWait sets up a new CQ for awaitWork.
func prepareWait(cq rdma.CQ) { cq.SetSpin(spinPolls) }

// awaitWork waits at most timeout (negative: forever) for completions on
// cq, which fill wc[:n], and for one CM event on ec (gotEvent). With cq nil
// — none yet, or its completions no longer handled — it waits for a CM
// event alone. Completions and an event may both arrive; err is
// rdma.ErrTimeout when neither did.
func awaitWork(cq rdma.CQ, ec rdma.EventChannel, wc []rdma.WC, timeout time.Duration) (n int, ev rdma.CMEvent, gotEvent bool, err error) {
	if cq == nil {
		ev, err = ec.GetEvent(timeout)
		return 0, ev, err == nil, err
	}
	n, cmReady, err := cq.Await(wc, ec, timeout)
	if err != nil || !cmReady {
		return n, ev, false, err
	}
	ev, err = ec.GetEvent(0)
	return n, ev, err == nil, err
}
