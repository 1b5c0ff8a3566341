package perf

import (
	"strings"
	"testing"
)

// TestReversed: with --reversed on both sides the listening side runs the
// test's client part (it writes or sends, its header has the TX depth)
// and the connecting side the server part, as perftest's fan-in mode.
func TestReversed(t *testing.T) {
	for _, test := range []Test{WriteBW, SendBW, SendLat, ReadLat} {
		v := newFabric()
		listening, connecting, lerr, cerr := runPair(t, v, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50, Reversed: true})
		if lerr != nil || cerr != nil {
			t.Fatalf("%v --reversed: listening side %v, connecting side %v", test, lerr, cerr)
		}
		if !strings.Contains(listening, " TX depth ") || strings.Contains(connecting, " TX depth ") {
			t.Errorf("%v --reversed: the TX depth, the test client's line, is not the listening side's alone:\n%s\n%s", test, listening, connecting)
		}
		if test == ReadLat && (!strings.Contains(listening, " #bytes") || strings.Contains(connecting, " #bytes")) {
			t.Errorf("read_lat --reversed: the listening side reads and prints the table:\n%s\n%s", listening, connecting)
		}
	}
}
