package perf

import (
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pollwait"
)

// TestBandwidthLoopsSleepOnOneCPU: -e always sleeps; by default a run
// sleeps only where the process has one CPU and its peer polls (the send
// tests, -b; a timed one in its receiving loop: session.streamOf); a
// one-way write, read or atomic stream spins; --busy-poll spins, as
// perftest's loops.
func TestBandwidthLoopsSleepOnOneCPU(t *testing.T) {
	oneCPU := pollwait.AvailableCPUs() < 2
	four := 4 * time.Second
	for _, c := range []struct {
		name string
		r    Resolved
		want bool
	}{
		{"send_bw", Resolved{Options: Options{Test: SendBW}}, oneCPU},
		{"send_bw -e", Resolved{Options: Options{Test: SendBW, Events: true}}, true},
		{"send_bw --busy-poll", Resolved{Options: Options{Test: SendBW, BusyPoll: true}}, false},
		{"send_bw -D", Resolved{Options: Options{Test: SendBW, Duration: four}}, oneCPU},
		{"send_bw -D --busy-poll", Resolved{Options: Options{Test: SendBW, Duration: four, BusyPoll: true}}, false},
		{"send_bw -D -e", Resolved{Options: Options{Test: SendBW, Duration: four, Events: true}}, true},
		{"write_bw", Resolved{Options: Options{Test: WriteBW}}, false},
		{"read_bw", Resolved{Options: Options{Test: ReadBW}}, false},
		{"atomic_bw", Resolved{Options: Options{Test: AtomicBW}}, false},
		{"write_bw -e", Resolved{Options: Options{Test: WriteBW, Events: true}}, true},
		{"write_bw -b", Resolved{Options: Options{Test: WriteBW, Bidirectional: true}}, oneCPU},
		{"read_bw -b --busy-poll", Resolved{Options: Options{Test: ReadBW, BusyPoll: true, Bidirectional: true}}, false},
	} {
		if got := c.r.sleeps(); got != c.want {
			t.Errorf("%s on %d CPUs: sleeps() = %v, want %v", c.name, pollwait.AvailableCPUs(), got, c.want)
		}
	}
}
