package perf

import (
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pollwait"
)

// TestBandwidthLoopsSleepOnOneCPU: -e always sleeps; by default a run
// sleeps only where the process has one CPU (a timed one in its receiving
// loop: session.streamOf); --busy-poll spins, as perftest's loops.
func TestBandwidthLoopsSleepOnOneCPU(t *testing.T) {
	oneCPU := pollwait.AvailableCPUs() < 2
	for _, c := range []struct {
		name string
		r    Resolved
		want bool
	}{
		{"default", Resolved{}, oneCPU},
		{"-e", Resolved{Options: Options{Events: true}}, true},
		{"--busy-poll", Resolved{Options: Options{BusyPoll: true}}, false},
		{"-D", Resolved{Options: Options{Duration: 4 * time.Second}}, oneCPU},
		{"-D --busy-poll", Resolved{Options: Options{Duration: 4 * time.Second, BusyPoll: true}}, false},
		{"-D -e", Resolved{Options: Options{Duration: 4 * time.Second, Events: true}}, true},
	} {
		if got := c.r.sleeps(); got != c.want {
			t.Errorf("%s on %d CPUs: sleeps() = %v, want %v", c.name, pollwait.AvailableCPUs(), got, c.want)
		}
	}
}
