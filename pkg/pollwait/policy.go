// Package pollwait decides, for each wait on a completion queue, whether
// to poll (spin) for the completion, for how long, or to block on the
// completion channel at once.
//
// Spinning saves the interrupt and the wake-up, but it only pays when a
// second CPU exists for the peer and for the kernel's own packet work
// (rdma_rxe processes packets on the CPUs of the processes that post),
// and when the completion usually arrives within the spin. So the policy
// spins only with two or more CPUs in the process's affinity mask; sizes
// the spin from the recent completion latencies (a smoothed mean plus
// four mean deviations, as TCP sizes its retransmission timeout; samples
// clamped so that one stall cannot swing it), capped at about a
// wake-up's cost; and spins only while such a spin would have caught
// most recent completions. Blocked waits count too (their latency says
// whether a spin would have caught them), so the policy backs off while
// spins would miss and resumes as soon as they would pay again, without
// wasting probe spins.
package pollwait

import (
	"time"

	"golang.org/x/sys/unix"
)

// Mode says how waits are done.
type Mode int

const (
	// Adaptive decides per wait from what was measured.
	Adaptive Mode = iota
	// BusyPoll always spins: the lowest latency at the cost of a CPU.
	BusyPoll
	// NoSpin always blocks on the completion channel, as rping does.
	NoSpin
)

func (m Mode) String() string {
	switch m {
	case BusyPoll:
		return "busy-poll"
	case NoSpin:
		return "no-spin"
	}
	return "adaptive"
}

// Forever is the spin budget of busy polling: spin until the completion
// (the caller still bounds each spin by its own deadline).
const Forever time.Duration = 1<<63 - 1

// Defaults, chosen from the lab's traces (see testdata). A completion of
// one's own RDMA read or write arrives within microseconds to about
// 100 µs under emulation and is worth a spin; a message that needs the
// peer's turn takes hundreds of microseconds to milliseconds there, and
// spinning for it takes the CPU the peer and rxe need. Spinning at most
// about a wake-up's cost is the classic bound for spin-then-block: it
// never costs more than twice the better choice made in hindsight.
const (
	DefaultMaxSpin = 250 * time.Microsecond // never spin longer than this
	minSpin        = 2 * time.Microsecond   // a spin shorter than this cannot win
	firstSpin      = 50 * time.Microsecond  // before anything is measured
	// Spin only while a spin would have caught at least this share of
	// the recent completions.
	hitFloor  = 0.75
	ewmaShift = 3 // smoothing weight 1/8, as TCP's SRTT
)

// Config sets a Policy up. The zero value is adaptive with the CPUs of
// the affinity mask.
type Config struct {
	Mode    Mode
	CPUs    int           // CPUs available to the process; 0: sched_getaffinity
	MaxSpin time.Duration // 0: DefaultMaxSpin
}

// Policy holds the measurements of one kind of wait (one wait site: its
// completions share a latency). It is not safe for concurrent use.
type Policy struct {
	mode    Mode
	cpus    int
	maxSpin time.Duration

	samples      int
	srtt, rttvar time.Duration // smoothed (clamped) latency and mean deviation
	hits         float64       // smoothed share of completions a spin caught or would have
}

// New returns a policy for one wait site.
func New(c Config) *Policy {
	p := &Policy{mode: c.Mode, cpus: c.CPUs, maxSpin: c.MaxSpin, hits: 1}
	if p.cpus <= 0 {
		p.cpus = AvailableCPUs()
	}
	if p.maxSpin <= 0 {
		p.maxSpin = DefaultMaxSpin
	}
	return p
}

// AvailableCPUs is the number of CPUs this process may run on: its
// affinity mask (taskset, cpusets), which runtime.NumCPU reports only as
// of start-up. It falls back to 1 when the mask cannot be read.
func AvailableCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 1
	}
	return max(set.Count(), 1)
}

// Spin is how long the next wait should poll before it blocks: 0 means
// block at once, Forever means never block.
func (p *Policy) Spin() time.Duration {
	switch {
	case p.mode == BusyPoll:
		return Forever
	case p.mode == NoSpin || p.cpus < 2:
		return 0
	case p.samples == 0:
		return firstSpin
	case p.hits < hitFloor:
		return 0
	}
	return p.budget()
}

// Learns says whether Observe can change what Spin returns: only an
// adaptive policy with a second CPU does. Callers may skip timing waits
// the policy cannot learn from.
func (p *Policy) Learns() bool { return p.mode == Adaptive && p.cpus >= 2 }

// budget is the spin that would catch nearly every recent completion,
// within the cap.
func (p *Policy) budget() time.Duration {
	return min(max(p.srtt+4*p.rttvar, minSpin), p.maxSpin)
}

// Observe records how the wait went: the time from its start to the
// completion, how long it spun (0 when it blocked at once) and whether
// the spin caught the completion.
func (p *Policy) Observe(latency, spun time.Duration, caughtBySpin bool) {
	if p.mode == Adaptive {
		// A blocked wait tells whether the spin we would have given it
		// would have caught its completion.
		hit := caughtBySpin || (spun <= 0 && p.samples > 0 && latency <= p.budget())
		v := 0.0
		if hit {
			v = 1
		}
		p.hits += (v - p.hits) / (1 << ewmaShift)
	}
	p.sample(min(latency, 2*p.maxSpin))
}

// sample folds one latency into the smoothed mean and deviation
// (RFC 6298's estimator).
func (p *Policy) sample(d time.Duration) {
	if p.samples == 0 {
		p.srtt, p.rttvar = d, d/2
	} else {
		dev := p.srtt - d
		if dev < 0 {
			dev = -dev
		}
		p.rttvar += (dev - p.rttvar) / 4
		p.srtt += (d - p.srtt) / (1 << ewmaShift)
	}
	p.samples++
}

// Mode is the policy's mode.
func (p *Policy) Mode() Mode { return p.mode }

// CPUs is the number of CPUs the policy believes it has.
func (p *Policy) CPUs() int { return p.cpus }

// Latency is the smoothed completion latency and its mean deviation.
func (p *Policy) Latency() (mean, dev time.Duration) { return p.srtt, p.rttvar }
