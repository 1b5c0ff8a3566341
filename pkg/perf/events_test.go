package perf

import (
	"strings"
	"testing"
	"time"
)

// TestEventsOnBandwidthTests: with -e send_bw, read_bw and atomic_bw run,
// their headers say so as perftest's, and each side that takes
// completions sleeps on its CQ's channel: send_bw's sender and receiver
// (under -b each side's sending and receiving), the read and atomic
// tests' requester (their server takes none, but for -b).
func TestEventsOnBandwidthTests(t *testing.T) {
	for _, c := range []struct {
		test     Test
		both     bool
		sleeping int
	}{{SendBW, false, 2}, {ReadBW, false, 1}, {AtomicBW, false, 1}, {SendBW, true, 4}, {ReadBW, true, 2}} {
		v := newFabric()
		srv, cli, serr, cerr := runPair(t, v, Options{Test: c.test, GIDIndex: 1, IBPort: 1, Iters: 50, Events: true, Bidirectional: c.both})
		if serr != nil || cerr != nil {
			t.Fatalf("%s -e -b=%v: server %v, client %v", c.test, c.both, serr, cerr)
		}
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if !strings.Contains(out, " Test with events. Using rxe0_comp0\n") || !bwRowOf(out) {
				t.Errorf("%s -e %s:\n%s", c.test, side, out)
			}
		}
		if got := v.SleepingRuns(); got != c.sleeping {
			t.Errorf("%s -e: %d runs slept on their CQ, want %d", c.test, got, c.sleeping)
		}
	}
}

// bwRowOf says whether out has a bandwidth row of 50 iterations.
func bwRowOf(out string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[1] == "50" {
			return true
		}
	}
	return false
}

// TestEventsRefusals: perftest's parser takes -e with neither -D nor
// --run_infinitely, on every test.
func TestEventsRefusals(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: SendBW, Events: true, Duration: 4 * time.Second}, "Duration mode doesn't work with events."},
		{Options{Test: SendLat, Events: true, Duration: 4 * time.Second}, "Duration mode doesn't work with events."},
		{Options{Test: ReadBW, Events: true, RunInfinitely: true}, "run_infinitely does not support events feature yet."},
		{Options{Test: SendBW, Events: true, RunInfinitely: true, Duration: 2 * time.Second}, "Duration mode doesn't work with events."},
	} {
		if _, err := c.o.Resolve(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
