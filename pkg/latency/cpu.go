package latency

import (
	"time"

	"golang.org/x/sys/unix"
)

// CPU is the CPU time a process has used: user and system, from getrusage.
type CPU struct{ User, Sys time.Duration }

// Total is user plus system time.
func (c CPU) Total() time.Duration { return c.User + c.Sys }

// Sub is the CPU time used between o and c.
func (c CPU) Sub(o CPU) CPU { return CPU{User: c.User - o.User, Sys: c.Sys - o.Sys} }

// Per divides c over n iterations; zero when n is not positive.
func (c CPU) Per(n int) CPU {
	if n <= 0 {
		return CPU{}
	}
	return CPU{User: c.User / time.Duration(n), Sys: c.Sys / time.Duration(n)}
}

// ProcessCPU is the CPU time of the whole process (every thread) so far.
// A failing getrusage (it cannot with RUSAGE_SELF) reads as zero.
func ProcessCPU() CPU {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return CPU{}
	}
	return CPU{User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano())}
}
