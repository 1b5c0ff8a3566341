package perf

import (
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestServiceLevel: -S goes into the path of both sides' RTR (for UD,
// the address handle made from it), on every transport.
func TestServiceLevel(t *testing.T) {
	for _, o := range []Options{
		{Test: WriteBW, SL: 5},
		{Test: SendBW, Conn: rdma.QPTypeUC, SL: 15},
		{Test: SendLat, Conn: rdma.QPTypeUD, SL: 1, Size: 64},
	} {
		v := newFabric()
		o.GIDIndex, o.IBPort, o.Iters = 1, 1, 50
		if _, _, serr, cerr := runPair(t, v, o); serr != nil || cerr != nil {
			t.Fatalf("%s -S %d: server %v, client %v", o.Test, o.SL, serr, cerr)
		}
		qps := perfQPs(v)
		if len(qps) != 2 {
			t.Fatalf("%s: %d QPs readied, want 2", o.Test, len(qps))
		}
		for _, q := range qps {
			if q.RTR.SL != uint8(o.SL) {
				t.Errorf("%s -S %d: QP 0x%x's RTR has SL %d", o.Test, o.SL, q.Num, q.RTR.SL)
			}
		}
	}
}
