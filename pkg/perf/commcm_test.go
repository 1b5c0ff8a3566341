package perf

import (
	"strings"
	"testing"
)

// TestCommRDMACM: with -z the exchange runs over an rdma_cm control
// connection while the test's QPs are made and connected with the
// records it carries; both headers say so as perftest's do, and the
// addresses print with the exchange's settings (no RKey or VAddr).
func TestCommRDMACM(t *testing.T) {
	for _, test := range []Test{WriteBW, SendLat, ReadBW} {
		v := newFabric()
		srv, cli, serr, cerr := runPair(t, v, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50, CommRDMACM: true, QPs: 1})
		if serr != nil || cerr != nil {
			t.Fatalf("%v -z: server %v, client %v", test, serr, cerr)
		}
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if !strings.Contains(out, " rdma_cm QPs\t : OFF\n Data ex. method : rdma_cm\n") || strings.Contains(out, "RKey") ||
				strings.Contains(out, "Waiting for client rdma_cm QP") {
				t.Errorf("%v -z, the %s:\n%s", test, side, out)
			}
		}
		cm, verbs := 0, len(perfQPs(v))
		for _, r := range v.QPRecords() {
			if r.CM {
				cm++
			}
		}
		// A client that came before the server listened made a control
		// QP of its own too.
		if cm < 2 || verbs != 2 {
			t.Errorf("%v -z: %d QPs made by rdma_cm (want the control connection's), %d connected with the records (want 2)", test, cm, verbs)
		}
	}
}
