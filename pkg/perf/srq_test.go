package perf

import (
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestUseSRQ: with --use-srq the QPs that receive share a receive queue
// where perftest makes one (the send tests' server, both sides of a
// latency test) and the messages still arrive; both headers say so.
// (The fake refuses a receive posted on a QP of a shared queue, so a
// receive that missed the queue fails the run.)
func TestUseSRQ(t *testing.T) {
	for _, c := range []struct {
		o           Options
		srqQPs, all int // QPs on a shared queue, of all made
	}{
		{Options{Test: SendBW, QPs: 2}, 2, 4},
		{Options{Test: SendBW, Conn: rdma.QPTypeUD}, 1, 2},
		{Options{Test: SendBW, RecvPostList: 2}, 1, 2},
		{Options{Test: SendLat}, 2, 2},
		{Options{Test: SendLat, BusyPoll: true}, 2, 2},
	} {
		o := c.o
		o.GIDIndex, o.IBPort, o.Iters, o.SRQ = 1, 1, 40, true
		f := newFabric()
		srv, cli, serr, cerr := runPair(t, f, o)
		if serr != nil || cerr != nil {
			t.Errorf("%+v: server %v, client %v", c.o, serr, cerr)
			continue
		}
		onSRQ, made := 0, 0
		for _, q := range perfQPs(f) {
			made++
			if q.SRQ {
				onSRQ++
			}
		}
		if onSRQ != c.srqQPs || made != c.all {
			t.Errorf("%+v: %d of %d QPs on a shared queue, want %d of %d", c.o, onSRQ, made, c.srqQPs, c.all)
		}
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if !strings.Contains(out, "Using SRQ      : ON\n") {
				t.Errorf("%+v, the %s's header:\n%s", c.o, side, out)
			}
		}
	}
}
