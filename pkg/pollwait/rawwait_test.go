package pollwait

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// byteCQ completes one work request per byte in its pipe, whose read end
// is its completion channel; it never blocks in Await.
type byteCQ struct {
	rdma.CQ
	r, w   int
	awaits int
}

func newByteCQ(t *testing.T) *byteCQ {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return &byteCQ{r: p[0], w: p[1]}
}

func (q *byteCQ) Await([]rdma.WC, rdma.EventChannel, time.Duration) (int, bool, error) {
	q.awaits++
	return 0, false, rdma.ErrTimeout
}
func (q *byteCQ) WaitFds(rdma.EventChannel) (int, int)   { return q.r, -1 }
func (q *byteCQ) ReadyToSleep(wc []rdma.WC) (int, error) { return 0, nil }
func (q *byteCQ) Woken(wc []rdma.WC) (int, error) {
	var b [1]byte
	if n, _ := unix.Read(q.r, b[:]); n == 1 {
		wc[0] = rdma.WC{WRID: 7}
		return 1, nil
	}
	return 0, nil
}

func TestOnceTakesWhatWakesItAndNeverBlocksInC(t *testing.T) {
	q := newByteCQ(t)
	var w RawWaiter
	wc := make([]rdma.WC, 2)
	unix.Write(q.w, []byte{1})
	if n, err := w.Once(q, wc); n != 1 || err != nil || wc[0].WRID != 7 {
		t.Fatalf("a byte written: %d %v %v", n, err, wc[0])
	}
	// Nothing comes: one raw slice (or less, cut by a signal), then 0.
	start := time.Now()
	if n, err := w.Once(q, wc); n != 0 || err != nil || q.awaits != 0 {
		t.Fatalf("nothing written: %d %v, %d blocking awaits", n, err, q.awaits)
	}
	if d := time.Since(start); d > RawWaitSlice+time.Second {
		t.Errorf("an empty Once took %v, want at most about %v", d, RawWaitSlice)
	}
}
