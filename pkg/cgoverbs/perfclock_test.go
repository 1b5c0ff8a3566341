package cgoverbs

import (
	"slices"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/perf"
)

// TestTickClockKeepsUnwrittenStamps: with CQ moderation only every
// cq_mod-th completed slot is stamped; the others must stay 0 and not
// become a time before the run began (they did, and the peak bandwidth
// read 3906250 MB/s).
func TestTickClockKeepsUnwrittenStamps(t *testing.T) {
	c := tickClock{ns0: 5_000_000_000, ticks0: 9_000_000, perTick: 0.5}
	completed := []int64{0, 0, 0, 9_000_400, 0, 0, 0, 9_000_800}
	c.toNs(completed)
	want := []int64{0, 0, 0, 5_000_000_200, 0, 0, 0, 5_000_000_400}
	if !slices.Equal(completed, want) {
		t.Fatalf("got %v, want %v", completed, want)
	}
	if got := c.ns(9_000_000); got != c.ns0 {
		t.Errorf("the start tick is %d ns, want %d", got, c.ns0)
	}
}

// TestModeratedRunPeakIsItsRate: the stamps of a write_bw -s 4096 -n 100
// run as pf_stream leaves them (TSC ticks; cq_mod 100, so one completion
// stamped), through the conversion and perftest's arithmetic: the peak is
// the run's rate, not the message size over one nanosecond.
func TestModeratedRunPeakIsItsRate(t *testing.T) {
	const n, gap = 100, 250_000 // ticks between posts: 100 us at 0.4 ns a tick
	c := tickClock{ns0: 81_000_000_000, ticks0: 1_900_000_000_000, perTick: 0.4}
	posted, completed := make([]int64, n), make([]int64, n)
	for i := range posted {
		posted[i] = c.ticks0 + 1000 + int64(i)*gap
	}
	completed[n-1] = posted[n-1] + 2*gap
	c.toNs(posted)
	c.toNs(completed)
	r := perf.BWTiming{Size: 4096, CQMod: 100, Posted: posted, Completed: completed}.Report()
	// 10.1 ms for 100 messages of 4096 bytes: 38.68 MB/s; the peak window
	// is the whole run.
	if r.BWAvg < 38 || r.BWAvg > 39.5 || r.BWPeak < r.BWAvg || r.BWPeak > 1.01*r.BWAvg {
		t.Fatalf("BW peak %.2f, average %.2f MB/s; want both about 38.7", r.BWPeak, r.BWAvg)
	}
}
