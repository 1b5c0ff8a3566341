package ping

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// stats collects client round-trip times: one per ping, from posting the
// source advertisement to receiving the server's final go-ahead.
type stats struct {
	mu    sync.Mutex // a signal may summarise while pings continue
	rtts  []time.Duration
	start time.Time
	line  []byte // scratch for the per-ping line
}

// maxPrealloc bounds the RTT slice allocated up front for -C.
const maxPrealloc = 1 << 20

func newStats(count int) *stats {
	n := count
	if n <= 0 || n > maxPrealloc {
		n = 1024
	}
	return &stats{rtts: make([]time.Duration, 0, n), start: time.Now(), line: make([]byte, 0, 64)}
}

func (s *stats) add(d time.Duration) {
	s.mu.Lock()
	s.rtts = append(s.rtts, d)
	s.mu.Unlock()
}

// pingLine formats "seq=N rtt=X.XXX ms" into the scratch buffer without
// allocating.
func (s *stats) pingLine(seq int, d time.Duration) []byte {
	b := append(s.line[:0], "seq="...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, " rtt="...)
	b = strconv.AppendFloat(b, ms(d), 'f', 3, 64)
	b = append(b, " ms"...)
	s.line = b
	return b
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Summary condenses round-trip times the way ICMP ping does, plus the
// 99th percentile (nearest rank).
type Summary struct {
	Count                    int
	Min, Avg, Max, Mdev, P99 time.Duration
}

// Summarize computes the summary of rtts; all zero when there are none.
func Summarize(rtts []time.Duration) Summary {
	if len(rtts) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(rtts)
	slices.Sort(sorted)
	var sum, sumSq float64
	for _, d := range rtts {
		f := float64(d)
		sum += f
		sumSq += f * f
	}
	n := float64(len(rtts))
	mean := sum / n
	variance := sumSq/n - mean*mean
	if variance < 0 { // rounding
		variance = 0
	}
	rank := int(math.Ceil(0.99*n)) - 1
	return Summary{
		Count: len(rtts),
		Min:   sorted[0],
		Avg:   time.Duration(mean),
		Max:   sorted[len(sorted)-1],
		Mdev:  time.Duration(math.Sqrt(variance)),
		P99:   sorted[rank],
	}
}

func (s *stats) snapshot() ([]time.Duration, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rtts), time.Since(s.start)
}

// writeSummary prints the closing block of --stats.
func writeSummary(w io.Writer, peer string, rtts []time.Duration, elapsed time.Duration) {
	sum := Summarize(rtts)
	fmt.Fprintf(w, "--- %s ping statistics ---\n", peer)
	fmt.Fprintf(w, "%d iterations, time %.0fms\n", sum.Count, ms(elapsed))
	if sum.Count > 0 {
		fmt.Fprintf(w, "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms, p99 %.3f ms\n",
			ms(sum.Min), ms(sum.Avg), ms(sum.Max), ms(sum.Mdev), ms(sum.P99))
	}
}

// Report is the --json document of a client run.
type Report struct {
	Peer      string         `json:"peer"`
	Port      int            `json:"port"`
	Size      int            `json:"size"`
	Count     int            `json:"count"` // requested; 0 = until interrupted
	Completed int            `json:"completed"`
	ElapsedMs float64        `json:"elapsed_ms"`
	RTTMs     []float64      `json:"rtt_ms"`
	Summary   *ReportSummary `json:"summary,omitempty"`
	OK        bool           `json:"ok"`
	Error     string         `json:"error,omitempty"`
	Hint      string         `json:"hint,omitempty"`
}

// ReportSummary is Summary in milliseconds.
type ReportSummary struct {
	MinMs  float64 `json:"min_ms"`
	AvgMs  float64 `json:"avg_ms"`
	MaxMs  float64 `json:"max_ms"`
	MdevMs float64 `json:"mdev_ms"`
	P99Ms  float64 `json:"p99_ms"`
}

func newReport(o *Options, rtts []time.Duration, elapsed time.Duration) Report {
	r := Report{
		Peer: o.Addr, Port: o.Port, Size: o.Size, Count: o.Count,
		Completed: len(rtts), ElapsedMs: roundMs(elapsed), RTTMs: make([]float64, len(rtts)),
	}
	for i, d := range rtts {
		r.RTTMs[i] = roundMs(d)
	}
	if len(rtts) > 0 {
		s := Summarize(rtts)
		r.Summary = &ReportSummary{MinMs: roundMs(s.Min), AvgMs: roundMs(s.Avg), MaxMs: roundMs(s.Max), MdevMs: roundMs(s.Mdev), P99Ms: roundMs(s.P99)}
	}
	return r
}

// roundMs is d in milliseconds to the microsecond.
func roundMs(d time.Duration) float64 { return math.Round(ms(d)*1000) / 1000 }
