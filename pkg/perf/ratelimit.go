package perf

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// RateLimit is perftest's rate limiter: --rate_limit, --rate_units,
// --rate_limit_type and --burst_size.
type RateLimit struct {
	// Rate is --rate_limit in Units; Text is the value as typed, which
	// the HW limiter looks up among the InfiniBand rates.
	Rate float64
	Text string
	// Units is --rate_units: "M" (MiB/s), "g" (Gb/s) or "p" (messages/s);
	// "" is perftest's default, Gb/s.
	Units string
	// Type is --rate_limit_type: "SW", "HW" or "PP"; "" is HW when a rate
	// is given (perftest's default) and no limiter otherwise.
	Type string
	// Burst is --burst_size: messages sent back to back; 0 is the TX depth.
	Burst int
}

// The limiters perftest knows (its rate_limit_type).
const (
	limiterSW = "SW"
	limiterHW = "HW"
	limiterPP = "PP"
)

// ibRates are the rates, in Gb/s as typed, that perftest's HW limiter
// takes (its RATE_VALUES): a static rate of the InfiniBand path.
var ibRates = []string{"2.5", "5", "10", "14", "20", "25", "30", "40", "56", "60", "80", "100", "112", "120", "168", "200", "300", "MAX"}

// hwFallbackLine is what perftest prints (on stderr, in red) when a port
// does not take the HW limit and it limits in software instead.
const hwFallbackLine = "The QP failed to accept HW rate limit, providing SW rate limit \n"

// parseRateLimit reads the limiter's options as perftest's parser does;
// given says which were on the command line.
func parseRateLimit(v *FlagValues, given func(long string) bool) (*RateLimit, error) {
	if !given("rate_limit") && !given("rate_units") && !given("rate_limit_type") && !given("burst_size") {
		return nil, nil
	}
	l := &RateLimit{Burst: v.BurstSize}
	if given("rate_limit") {
		l.Text, l.Rate = v.RateLimitText, leadingFloat(v.RateLimitText)
		if l.Rate <= 0 {
			return nil, refuse("--rate_limit", v.RateLimitText, "Rate limit must be non-negative")
		}
	}
	if l.Burst < 0 {
		return nil, refuse("--burst_size", l.Burst, "Burst size must be non-negative")
	}
	if given("rate_units") {
		switch v.RateUnits {
		case "M", "g", "p":
			l.Units = v.RateUnits
		default:
			return nil, refuse("--rate_units", v.RateUnits, "Invalid rate limit units. Please use M,g or p")
		}
	}
	if given("rate_limit_type") {
		switch v.RateLimitType {
		case limiterSW, limiterHW, limiterPP:
			l.Type = v.RateLimitType
		default:
			return nil, refuse("--rate_limit_type", v.RateLimitType, "Invalid rate limit type flag. Please use HW, SW or PP.")
		}
	}
	return l, nil
}

// limiter is the limiter in force: the one given, else HW with a rate,
// else none ("").
func (l *RateLimit) limiter() string {
	switch {
	case l == nil:
		return ""
	case l.Type != "":
		return l.Type
	case l.Text != "":
		return limiterHW
	}
	return ""
}

// resolveRateLimit checks the limiter against the test as perftest's
// force_dependencies does, and sets the burst size. Every limiter that
// runs is a software one: perftest's HW limiter falls back to it on
// RoCE, and rdmactl sets no static rate on InfiniBand (connectPeer).
func (r *Resolved) resolveRateLimit(t Test) error {
	l := r.RateLimit
	if l == nil {
		return nil
	}
	kind := l.limiter()
	if l.Burst > 0 && kind == "" {
		return refuse("--burst_size", l.Burst, "Can't enable burst mode when rate limiter is off")
	}
	if kind == "" {
		return nil
	}
	resolved := *l
	r.RateLimit = &resolved
	if resolved.Burst == 0 {
		resolved.Burst = r.TxDepth
		r.burstIsTxDepth = kind == limiterSW
	}
	switch kind {
	case limiterSW:
		if t.Latency() || t.IsAtomic() || t.IsSend() && r.Bidirectional {
			refused := &Refusal{Text: "SW Rate limiter cann't be executed on non-BW, ATOMIC or bidirectional SEND tests"}
			if r.burstIsTxDepth {
				refused.Notice = burstNotice(r.TxDepth)
			}
			return refused
		}
	case limiterHW:
		if r.RDMACM || r.CommRDMACM {
			return refuse("", "", "HW rate limit isn't supported yet with rdma_cm scenarios")
		}
		gbps := resolved.Rate
		switch resolved.Units {
		case "p":
			return refuse("", "", "Failed: pps rate limit units is not supported when setting HW rate limit")
		case "M":
			gbps = resolved.Rate * 8 * 1024 * 1024 / 1e9
		}
		if gbps > 0 && !slices.Contains(ibRates, resolved.Text) {
			return refuse("--rate_limit", resolved.Text, "Failed: Unknown rate limit value (the HW limiter takes "+strings.Join(ibRates, ", ")+" Gb/s; --rate_limit_type SW takes any rate)")
		}
	case limiterPP:
		return refuse("", "", "Packet Pacing is only supported for Raw Ethernet.")
	}
	if !r.paced() {
		return nil
	}
	if resolved.Rate == 0 {
		return fmt.Errorf("--rate_limit_type SW without --rate_limit: there is no rate to keep (perftest would wait for ever between bursts)")
	}
	for _, size := range r.Sizes {
		if r.burstsPerSecond(size) < 1 {
			// perftest's gap between bursts would be endless
			return fmt.Errorf("--rate_limit %s: %d-byte messages at that rate make less than one burst of %d a second (perftest would wait for ever between bursts): raise the rate or lower --burst_size",
				resolved.Text, size, resolved.Burst)
		}
	}
	return nil
}

// paced says whether the sender's posts are paced: by the SW limiter,
// or by the HW one where perftest falls back to SW (a HW limiter given
// by name fails instead, in connectPeer). The latency tests' posts are
// never paced.
func (r Resolved) paced() bool {
	l := r.RateLimit
	return !r.Test.Latency() && (l.limiter() == limiterSW || l.limiter() == limiterHW && l.Type == "")
}

// burstsPerSecond is perftest's count of bursts a second for messages of
// size bytes: the rate in messages a second, kept in an int, divided by
// the burst size in unsigned ints.
func (r Resolved) burstsPerSecond(size int) float64 {
	l := r.RateLimit
	var perSec float64
	switch l.Units {
	case "M":
		perSec = l.Rate / float64(size) * 1048576
	case "p":
		perSec = l.Rate
	default:
		perSec = l.Rate / float64(size*8) * 1e9
	}
	return math.Trunc(math.Trunc(math.Min(perSec, math.MaxInt32)) / float64(l.Burst))
}

// pace is the software limiter's schedule for messages of size bytes; the
// zero Pace without one.
func (r Resolved) pace(size int) rdma.Pace {
	if !r.paced() {
		return rdma.Pace{}
	}
	return rdma.Pace{Burst: r.RateLimit.Burst, Gap: time.Duration(1e9 / r.burstsPerSecond(size))}
}

// burstNotice is perftest's word that the SW limiter's burst, not given,
// is the TX depth.
func burstNotice(txDepth int) string {
	return fmt.Sprintf(" Setting burst size to tx depth = %d\n", txDepth)
}
