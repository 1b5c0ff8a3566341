package pollwait

import (
	"os"
	"runtime"
)

// minBlockingProcs is the GOMAXPROCS a process that sleeps in raw polls
// needs: RawPoll keeps the sleeping goroutine's P, so with GOMAXPROCS=1
// (what the runtime picks on one CPU) nothing else — the signal handler's
// goroutine that ends a --stats run on ^C, timers — could run until the
// poll returns. The second P runs nothing while the ping loop, the only
// busy goroutine, runs, so it costs no CPU. (Measured in the lab at one
// vCPU: GOMAXPROCS 2 alone does not change what a blocking cgo wait costs.)
const minBlockingProcs = 2

// ReserveSpareP raises GOMAXPROCS to 2 when it is 1, unless
// the user set GOMAXPROCS. Call it before waiting with RawPoll.
func ReserveSpareP() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	if runtime.GOMAXPROCS(0) < minBlockingProcs {
		runtime.GOMAXPROCS(minBlockingProcs)
	}
}
