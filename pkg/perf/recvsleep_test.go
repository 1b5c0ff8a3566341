package perf

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// tickingCQ is a receive CQ with a message every gap: Await sleeps until
// the next one is due (or its timeout) and Poll takes one only when due,
// as a CQ fed by a steady sender.
type tickingCQ struct {
	rdma.CQ
	gap       time.Duration
	mu        sync.Mutex
	next      time.Time
	polls     int
	awaits    int
	longest   time.Duration // the longest timeout Await was given after the first message
	negatives int           // Await timeouts below zero
}

func (q *tickingCQ) take(wc []rdma.WC, now time.Time) int {
	if q.next.IsZero() {
		q.next = now
	}
	if now.Before(q.next) {
		return 0
	}
	q.next = q.next.Add(q.gap)
	wc[0] = rdma.WC{Status: rdma.WCSuccess, WRID: 0}
	return 1
}

func (q *tickingCQ) Poll(wc []rdma.WC) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.polls++
	return q.take(wc, time.Now()), nil
}

func (q *tickingCQ) Await(wc []rdma.WC, _ rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.awaits++
	if !q.next.IsZero() {
		q.longest = max(q.longest, timeout)
	}
	if timeout < 0 {
		q.negatives++
	}
	now := time.Now()
	if n := q.take(wc, now); n > 0 {
		return n, false, nil
	}
	if wait := q.next.Sub(now); wait > timeout {
		time.Sleep(timeout)
		return 0, false, rdma.ErrTimeout
	}
	time.Sleep(q.next.Sub(now))
	return q.take(wc, q.next), false, nil
}

// tickingEndpoint receives on a tickingCQ and takes every re-post.
type tickingEndpoint struct {
	rdma.PerfEndpoint
	cq *tickingCQ
}

func (e tickingEndpoint) RecvCQ() rdma.CQ                    { return e.cq }
func (e tickingEndpoint) PostRecvs(int, int, rdma.SGE) error { return nil }

// TestTimedReceiveSleeps: send_bw's server with -D and --run_infinitely
// sleeps on its CQ's channel when its run says so (one CPU) and never
// polls then, each sleep bounded by the next change of the run's state
// (and only that: the bound on the wait for the first message, shorter
// than the run here, is no bound after it); without, it polls as
// perftest's. Both count the messages of the window.
func TestTimedReceiveSleeps(t *testing.T) {
	for _, events := range []bool{true, false} {
		cq := &tickingCQ{gap: 2 * time.Millisecond}
		ep := tickingEndpoint{cq: cq}
		run := recvRun{RxDepth: 4, PostList: 1, Size: 64, SGEs: []rdma.SGE{{}}, Timeout: 150 * time.Millisecond, Events: events}
		var clock int64
		tick := func() int64 { clock++; return clock }
		got, err := receiveFor(ep, tick, run, 300*time.Millisecond, 100*time.Millisecond)
		if err != nil {
			t.Fatalf("events=%v: %v", events, err)
		}
		// the window is 100 ms of messages every 2 ms
		if got.Count < 25 || got.Count > 55 {
			t.Errorf("events=%v: %d messages in the window, want about 50", events, got.Count)
		}
		// a wait per message of the run (three times the window's), and
		// one more at each change of state
		if events && (cq.polls != 0 || cq.awaits == 0 || cq.awaits > 4*int(got.Count)+20 || cq.longest > 100*time.Millisecond || cq.negatives != 0) {
			t.Errorf("-D sleeping: %d polls, %d awaits for %d messages, longest timeout %v, %d negative", cq.polls, cq.awaits, got.Count, cq.longest, cq.negatives)
		}
		if !events && (cq.awaits != 0 || cq.polls == 0) {
			t.Errorf("-D polling: %d polls, %d awaits", cq.polls, cq.awaits)
		}

		cq = &tickingCQ{gap: 2 * time.Millisecond}
		ep = tickingEndpoint{cq: cq}
		rows := 0
		err = receiveForever(ep, tick, run, 50*time.Millisecond, func(t BWTiming) error {
			rows++
			return nil
		}, func() bool { return rows == 3 })
		if !errors.Is(err, errPeerLeft) || rows != 3 {
			t.Errorf("events=%v --run_infinitely: %d rows, %v", events, rows, err)
		}
		if events && (cq.polls != 0 || cq.longest > 50*time.Millisecond || cq.negatives != 0) {
			t.Errorf("--run_infinitely sleeping: %d polls, longest timeout %v, %d negative", cq.polls, cq.longest, cq.negatives)
		}
	}
}
