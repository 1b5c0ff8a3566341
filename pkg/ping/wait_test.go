package ping

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// pipeCQ completes one work request per byte in its pipe; its
// completion channel is the pipe's read end.
type pipeCQ struct {
	rdma.CQ
	r, w         int
	blocking     []time.Duration // timeouts of the Await calls that may block
	blockedAt    []time.Duration // when they came, since born
	born         time.Time
	zeroCalls    int // Await calls with a zero timeout
	rawRounds    int // ReadyToSleep calls
	emptyWakeups int // Woken calls that find nothing
}

func newPipeCQ(t *testing.T) *pipeCQ {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return &pipeCQ{r: p[0], w: p[1], born: time.Now()}
}

func (q *pipeCQ) Await(wc []rdma.WC, also rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	if timeout != 0 {
		q.blocking = append(q.blocking, timeout)
		q.blockedAt = append(q.blockedAt, time.Since(q.born))
		return 0, false, rdma.ErrTimeout
	}
	q.zeroCalls++
	if q.take(wc) == 1 {
		return 1, false, nil
	}
	return 0, false, rdma.ErrTimeout
}

func (q *pipeCQ) WaitFds(rdma.EventChannel) (int, int) { return q.r, -1 }

// ReadyToSleep finds nothing while an empty wakeup is due, so that the
// byte wakes the sleep first.
func (q *pipeCQ) ReadyToSleep(wc []rdma.WC) (int, error) {
	q.rawRounds++
	if q.emptyWakeups > 0 {
		return 0, nil
	}
	return q.take(wc), nil
}

// Woken finds nothing emptyWakeups times.
func (q *pipeCQ) Woken(wc []rdma.WC) (int, error) {
	if q.emptyWakeups > 0 {
		q.emptyWakeups--
		return 0, nil
	}
	return q.take(wc), nil
}

func (q *pipeCQ) take(wc []rdma.WC) int {
	var b [1]byte
	if n, _ := unix.Read(q.r, b[:]); n == 1 {
		wc[0] = rdma.WC{WRID: wrRecv}
		return 1
	}
	return 0
}

func TestRawWaitTakesWhatArrived(t *testing.T) {
	q := newPipeCQ(t)
	w := newWaiter(pollwait.NoSpin, nil, true)
	unix.Write(q.w, []byte{1})
	n, _, err := w.await(q, nil, make([]rdma.WC, 4), time.Second)
	if n != 1 || err != nil || len(q.blocking) != 0 {
		t.Fatalf("n %d err %v, blocking calls %v", n, err, q.blocking)
	}
}

func TestRawWaitTimesOutWithoutBlockingInC(t *testing.T) {
	q := newPipeCQ(t)
	w := newWaiter(pollwait.NoSpin, nil, true)
	start := time.Now()
	n, _, err := w.await(q, nil, make([]rdma.WC, 4), 5*time.Millisecond)
	if n != 0 || err != rdma.ErrTimeout || len(q.blocking) != 0 || time.Since(start) < 5*time.Millisecond {
		t.Fatalf("n %d err %v after %v, blocking calls %v", n, err, time.Since(start), q.blocking)
	}
}

// A raw sleep that ends without a completion (after rawWaitSlice, or
// sooner when the scheduler's preemption signal cuts it short) gives the
// P back: the rest is one blocking Await with what is left of the
// timeout (forever stays forever).
func TestRawWaitFallsBackToBlocking(t *testing.T) {
	for _, timeout := range []time.Duration{-1, time.Second} {
		w := newWaiter(pollwait.NoSpin, nil, true)
		q := newPipeCQ(t) // born just before the wait starts its clock
		w.await(q, nil, make([]rdma.WC, 4), timeout)
		if len(q.blocking) != 1 || q.rawRounds == 0 {
			t.Fatalf("timeout %v: blocking calls %v, raw rounds %d", timeout, q.blocking, q.rawRounds)
		}
		// A loaded machine delays the fall-back by scheduling alone:
		// the bound is a raw slice plus that slack, far below the 1s
		// timeout a raw wait must not sleep through.
		const slack = 100 * time.Millisecond
		got, at := q.blocking[0], q.blockedAt[0]
		if at > rawWaitSlice+slack {
			t.Errorf("timeout %v: slept raw for %v, want at most %v", timeout, at, rawWaitSlice)
		}
		if timeout < 0 {
			if got >= 0 {
				t.Errorf("timeout forever: fell back after %v with %v", at, got)
			}
			continue
		}
		// The waiter's clock starts after q's birth and stops before the
		// Await that records at, and a bounded wait sleeps out a whole
		// raw slice first: both bounds hold however late either clock
		// read is scheduled.
		if got < timeout-at || got > timeout-rawWaitSlice {
			t.Errorf("timeout %v: fell back after %v with %v, want between %v and %v", timeout, at, got, timeout-at, timeout-rawWaitSlice)
		}
	}
}

// A completion after an event that found nothing (its completion taken
// by an earlier poll) is still caught by the raw sleep.
func TestRawWaitArmsAgainAfterAnEmptyWakeup(t *testing.T) {
	q := newPipeCQ(t)
	q.emptyWakeups = 1
	w := newWaiter(pollwait.NoSpin, nil, true)
	unix.Write(q.w, []byte{1})
	n, _, err := w.await(q, nil, make([]rdma.WC, 4), time.Second)
	if n != 1 || err != nil || len(q.blocking) != 0 || q.rawRounds != 2 {
		t.Fatalf("n %d err %v, blocking calls %v, raw rounds %d", n, err, q.blocking, q.rawRounds)
	}
}

func TestPersistentServersBlockInC(t *testing.T) {
	q := newPipeCQ(t)
	w := newWaiter(pollwait.NoSpin, nil, false)
	w.await(q, nil, make([]rdma.WC, 4), time.Second)
	if len(q.blocking) != 1 || q.blocking[0] != time.Second || q.rawRounds != 0 {
		t.Fatalf("blocking calls %v, raw rounds %d", q.blocking, q.rawRounds)
	}
}
