package cgoverbs

// tickClock relates the perf loops' stamps, CPU counter ticks, to
// CLOCK_MONOTONIC nanoseconds (struct pf_clock).
type tickClock struct {
	ns0, ticks0 int64
	perTick     float64
}

// ns is the time of one stamp.
func (c tickClock) ns(tick int64) int64 {
	return c.ns0 + int64(float64(tick-c.ticks0)*c.perTick)
}

// toNs rewrites stamps as nanoseconds in place. A stamp of 0 was never
// written (a completion of a moderated CQ covers several messages, and
// only the last of them is stamped) and stays 0, which is what
// perf.BWTiming reads as "no completion here".
func (c tickClock) toNs(stamps []int64) {
	for i, s := range stamps {
		if s != 0 {
			stamps[i] = c.ns(s)
		}
	}
}
