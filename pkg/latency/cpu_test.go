package latency

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time.
func threadCPU(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// The spin is measured in this thread's own CPU time, not wall time, so
// that a loaded machine, which gives the thread less of each second, does
// not shorten the work the process is asked to count.
func TestProcessCPUCountsBusyWork(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := ProcessCPU()
	start := threadCPU(t)
	for giveUp := time.Now().Add(20 * time.Second); threadCPU(t)-start < 30*time.Millisecond; {
		if time.Now().After(giveUp) {
			t.Fatal("this thread got less than 30 ms of CPU in 20 s")
		}
	}
	used := ProcessCPU().Sub(before)
	if used.Total() < 25*time.Millisecond {
		t.Fatalf("30 ms of this thread's spinning counted as %v for the process", used.Total())
	}
	if per := used.Per(10); per.Total() > used.Total()/9 {
		t.Fatalf("Per: %v of %v", per, used)
	}
	if (CPU{User: 1}).Per(0) != (CPU{}) {
		t.Fatal("Per(0)")
	}
}
