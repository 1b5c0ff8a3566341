package latency

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketsTileTheRange(t *testing.T) {
	for i := 0; i+1 < numBuckets; i++ {
		lo, hi := bucketLow(i), bucketHigh(i)
		if bucketOf(lo) != i || bucketOf(hi) != i || bucketOf(hi+1) != i+1 {
			t.Fatalf("bucket %d [%d,%d] does not tile", i, lo, hi)
		}
		if lo >= subBuckets && float64(hi-lo+1)/float64(lo) > 1.0/64 {
			t.Fatalf("bucket %d [%d,%d] wider than 1/64", i, lo, hi)
		}
	}
	if bucketOf(math.MaxUint64>>1) != numBuckets-1 {
		t.Fatal("huge values must land in the last bucket")
	}
}

func exactRank(sorted []time.Duration, q float64) time.Duration {
	r := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(r, 0)]
}

func TestQuantilesWithinOneSixtyFourth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := New()
	var all []time.Duration
	for range 100000 {
		// log-normal-ish: microseconds to tens of milliseconds
		d := time.Duration(math.Exp(rng.NormFloat64()*1.5+11) + 50)
		h.Record(d)
		all = append(all, d)
	}
	slices.Sort(all)
	for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1} {
		got, want := h.Quantile(q), exactRank(all, q)
		if got < want || float64(got-want) > float64(want)/64 {
			t.Errorf("q%v: got %v, exact %v", q, got, want)
		}
	}
	if h.Min() != all[0] || h.Max() != all[len(all)-1] || h.Count() != uint64(len(all)) {
		t.Errorf("min/max/count %v %v %d", h.Min(), h.Max(), h.Count())
	}
}

func TestExactStatistics(t *testing.T) {
	h := New()
	for _, d := range []time.Duration{2, 4, 4, 4, 5, 5, 7, 9} {
		h.Record(d * time.Millisecond)
	}
	if h.Mean() != 5*time.Millisecond || h.StdDev() != 2*time.Millisecond {
		t.Fatalf("mean %v stddev %v", h.Mean(), h.StdDev())
	}
	if p50 := h.Quantile(0.5); p50 < 4*time.Millisecond || p50 > 4*time.Millisecond+4*time.Millisecond/64 {
		t.Fatalf("p50 %v", h.Quantile(0.5))
	}
	if New().Quantile(0.99) != 0 || New().Mean() != 0 {
		t.Fatal("empty histogram must report zeros")
	}
}

func TestMemoryIsBounded(t *testing.T) {
	h := New()
	if n := testing.AllocsPerRun(1000, func() { h.Record(time.Duration(rand.Int64N(int64(time.Hour)))) }); n != 0 {
		t.Fatalf("Record allocates %v times", n)
	}
}

func TestBucketsHoldTheSamples(t *testing.T) {
	h := New()
	for _, d := range []time.Duration{3, 3, 5000, 5010, 5100, time.Hour} {
		h.Record(d)
	}
	want := []Bucket{{3, 3, 2}, {4992, 5055, 2}, {5056, 5119, 1}, {time.Duration(bucketLow(numBuckets - 1)), time.Hour, 1}}
	if got := h.Buckets(); !slices.Equal(got, want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
}
