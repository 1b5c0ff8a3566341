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
	r, w      int
	blocking  []time.Duration // timeouts of the Await calls that may block
	zeroCalls int
}

func newPipeCQ(t *testing.T) *pipeCQ {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return &pipeCQ{r: p[0], w: p[1]}
}

func (q *pipeCQ) Await(wc []rdma.WC, also rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	if timeout != 0 {
		q.blocking = append(q.blocking, timeout)
		return 0, false, rdma.ErrTimeout
	}
	q.zeroCalls++
	var b [1]byte
	if n, _ := unix.Read(q.r, b[:]); n == 1 {
		wc[0] = rdma.WC{WRID: wrRecv}
		return 1, false, nil
	}
	return 0, false, rdma.ErrTimeout
}

func (q *pipeCQ) WaitFds(rdma.EventChannel) (int, int) { return q.r, -1 }

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

// A wait longer than rawWaitSlice gives the P back: the rest is one
// blocking Await with what is left of the timeout (forever stays forever).
func TestRawWaitFallsBackToBlocking(t *testing.T) {
	for _, timeout := range []time.Duration{-1, time.Second} {
		q := newPipeCQ(t)
		w := newWaiter(pollwait.NoSpin, nil, true)
		w.await(q, nil, make([]rdma.WC, 4), timeout)
		if len(q.blocking) != 1 || q.zeroCalls == 0 {
			t.Fatalf("timeout %v: blocking calls %v, raw rounds %d", timeout, q.blocking, q.zeroCalls)
		}
		got := q.blocking[0]
		if timeout < 0 && got >= 0 || timeout >= 0 && (got <= 0 || got > timeout-rawWaitSlice+time.Millisecond) {
			t.Errorf("timeout %v: fell back with %v", timeout, got)
		}
	}
}

func TestPersistentServersBlockInC(t *testing.T) {
	q := newPipeCQ(t)
	w := newWaiter(pollwait.NoSpin, nil, false)
	w.await(q, nil, make([]rdma.WC, 4), time.Second)
	if len(q.blocking) != 1 || q.blocking[0] != time.Second || q.zeroCalls != 0 {
		t.Fatalf("blocking calls %v, raw rounds %d", q.blocking, q.zeroCalls)
	}
}
