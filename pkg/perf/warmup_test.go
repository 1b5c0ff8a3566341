package perf

import (
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestWarmUp: --perform_warm_up posts one round of -t requests per QP
// before the measured run (with -a, before each size) in write_bw, read_bw
// and atomic_bw; send_bw takes the flag and does nothing, as perftest.
func TestWarmUp(t *testing.T) {
	for _, c := range []struct {
		o    Options
		op   rdma.WROpcode
		want int
	}{
		{Options{Test: WriteBW, Iters: 50, TxDepth: 16, QPs: 2}, rdma.WRRDMAWrite, 2 * (50 + 16)},
		{Options{Test: ReadBW, Iters: 50, TxDepth: 16}, rdma.WRRDMARead, 50 + 16},
		{Options{Test: AtomicBW, Iters: 50, TxDepth: 8}, rdma.WRAtomicFetchAndAdd, 50 + 8},
		{Options{Test: WriteBW, Iters: 40, TxDepth: 16, PostList: 4}, rdma.WRRDMAWrite, 40 + 4},
		{Options{Test: SendBW, Iters: 50, TxDepth: 16}, rdma.WRSend, 50},
	} {
		v := newFabric()
		o := c.o
		o.GIDIndex, o.IBPort, o.WarmUp = 1, 1, true
		if _, _, serr, cerr := runPair(t, v, o); serr != nil || cerr != nil {
			t.Fatalf("%v with warm-up: server %v, client %v", o.Test, serr, cerr)
		}
		if got := v.Posts(c.op); got != c.want {
			t.Errorf("%v -n %d -t %d -q %d -l %d --perform_warm_up: %d requests posted, want %d", o.Test, o.Iters, o.TxDepth, o.QPs, o.PostList, got, c.want)
		}
	}
}
