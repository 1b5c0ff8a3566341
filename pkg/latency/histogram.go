// Package latency measures what a run of round trips took and cost: a
// bounded log-linear histogram of durations (HdrHistogram's layout: exact
// below 128 ns, then 64 buckets per power of two, so any reported
// percentile is within 1/64 of the true value) and the process's CPU time.
//
// Its memory is fixed at creation, so a ping that runs for days keeps
// the same footprint as one that runs for a second.
package latency

import (
	"math"
	"math/bits"
	"time"
)

const (
	subBits    = 7
	subBuckets = 1 << subBits // exact buckets below this many ns
	halfSub    = subBuckets / 2
	// maxBits bounds the recorded range to 2^40 ns (about 18 minutes);
	// longer durations land in the last bucket (Max stays exact).
	maxBits    = 40
	numBuckets = subBuckets + (maxBits-subBits)*halfSub
)

// Histogram records durations. The zero value is not usable; use New.
// It is not safe for concurrent use.
type Histogram struct {
	counts   []uint64
	n        uint64
	min, max time.Duration
	sum      float64 // ns
	sumSq    float64 // ns²
}

// New returns an empty histogram (about 18 KB, whatever is recorded).
func New() *Histogram { return &Histogram{counts: make([]uint64, numBuckets)} }

func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - subBits
	i := subBuckets + (e-1)*halfSub + int(v>>uint(e)) - halfSub
	return min(i, numBuckets-1)
}

// bucketLow is the smallest value that falls in bucket i.
func bucketLow(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	e := (i-subBuckets)/halfSub + 1
	m := (i-subBuckets)%halfSub + halfSub
	return uint64(m) << uint(e)
}

// bucketHigh is the largest value that falls in bucket i.
func bucketHigh(i int) uint64 {
	if i+1 >= numBuckets {
		return math.MaxInt64
	}
	return bucketLow(i+1) - 1
}

// Record adds one duration; negative ones count as zero.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	f := float64(d)
	h.sum += f
	h.sumSq += f * f
	h.counts[bucketOf(uint64(d))]++
}

// Count is the number of recorded durations.
func (h *Histogram) Count() uint64 { return h.n }

// Min and Max are exact.
func (h *Histogram) Min() time.Duration { return h.min }
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is exact (up to float rounding).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// StdDev is the population standard deviation (ping's mdev).
func (h *Histogram) StdDev() time.Duration {
	if h.n == 0 {
		return 0
	}
	mean := h.sum / float64(h.n)
	v := h.sumSq/float64(h.n) - mean*mean
	return time.Duration(math.Sqrt(max(v, 0)))
}

// Quantile is the nearest-rank q-quantile (0 < q <= 1): the highest value
// equivalent to the rank-th smallest sample, clamped to [Min, Max]. It
// is at most 1/64 above the exact nearest-rank value.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := time.Duration(min(bucketHigh(i), uint64(math.MaxInt64)))
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}

// Bucket is one bucket of a histogram that holds samples: the durations
// from Low to High, both included, and how many fell in it.
type Bucket struct {
	Low, High time.Duration
	Count     uint64
}

// Buckets are the buckets that hold samples, shortest durations first.
// The last bucket, open-ended, ends at Max.
func (h *Histogram) Buckets() []Bucket {
	var out []Bucket
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		high := time.Duration(min(bucketHigh(i), uint64(math.MaxInt64)))
		if i == numBuckets-1 {
			high = h.max
		}
		out = append(out, Bucket{Low: time.Duration(bucketLow(i)), High: high, Count: c})
	}
	return out
}
