package ping

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/latency"
)

// stats collects client round-trip times, one per ping (from posting the
// source advertisement to receiving the server's final go-ahead), in a
// bounded histogram, plus the CPU time the pings used. Its memory does
// not grow with the number of pings: -C 0 may run for days.
type stats struct {
	mu    sync.Mutex // a signal may summarise while pings continue
	hist  *latency.Histogram
	first []time.Duration // the first maxListedRTTs RTTs, for --json's rtt_ms
	start time.Time
	cpu0  latency.CPU // process CPU time when the pings began
	line  []byte      // scratch for the per-ping line
}

// maxListedRTTs bounds --json's list of individual round-trip times; the
// summary covers every ping.
const maxListedRTTs = 10000

func newStats(count int) *stats {
	n := count
	if n <= 0 || n > maxListedRTTs {
		n = maxListedRTTs
	}
	return &stats{
		hist: latency.New(), first: make([]time.Duration, 0, n),
		start: time.Now(), cpu0: latency.ProcessCPU(), line: make([]byte, 0, 64),
	}
}

// beginPings restarts the CPU accounting at the first ping, so that
// setting the connection up is not charged to the iterations.
func (s *stats) beginPings() {
	s.mu.Lock()
	s.cpu0 = latency.ProcessCPU()
	s.mu.Unlock()
}

func (s *stats) add(d time.Duration) {
	s.mu.Lock()
	s.hist.Record(d)
	if len(s.first) < maxListedRTTs {
		s.first = append(s.first, d)
	}
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

// Summary condenses round-trip times the way ICMP ping does (min, avg,
// max, mdev: exact), plus percentiles (nearest rank, at most 1/64 above)
// and the CPU time per ping.
type Summary struct {
	Count               int
	Min, Avg, Max, Mdev time.Duration
	P50, P90, P99, P999 time.Duration
	CPUPerPing          latency.CPU
}

// summarize condenses h; all zero when it holds no RTT.
func summarize(h *latency.Histogram, cpu latency.CPU) Summary {
	if h.Count() == 0 {
		return Summary{}
	}
	n := int(h.Count())
	return Summary{
		Count: n, Min: h.Min(), Avg: h.Mean(), Max: h.Max(), Mdev: h.StdDev(),
		P50: h.Quantile(0.5), P90: h.Quantile(0.9), P99: h.Quantile(0.99), P999: h.Quantile(0.999),
		CPUPerPing: cpu.Per(n),
	}
}

// result is what the closing block or document reports.
type result struct {
	sum     Summary
	first   []time.Duration
	elapsed time.Duration
}

func (s *stats) snapshot() result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return result{
		sum:     summarize(s.hist, latency.ProcessCPU().Sub(s.cpu0)),
		first:   append([]time.Duration(nil), s.first...),
		elapsed: time.Since(s.start),
	}
}

// writeSummary prints the closing block of --stats.
func writeSummary(w io.Writer, peer string, r result) {
	sum := r.sum
	fmt.Fprintf(w, "--- %s ping statistics ---\n", peer)
	fmt.Fprintf(w, "%d iterations, time %.0fms\n", sum.Count, ms(r.elapsed))
	if sum.Count > 0 {
		fmt.Fprintf(w, "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n",
			ms(sum.Min), ms(sum.Avg), ms(sum.Max), ms(sum.Mdev))
		fmt.Fprintf(w, "rtt p50/p90/p99/p99.9 = %.3f/%.3f/%.3f/%.3f ms\n",
			ms(sum.P50), ms(sum.P90), ms(sum.P99), ms(sum.P999))
		c := sum.CPUPerPing
		fmt.Fprintf(w, "cpu per iteration %.3f ms (user %.3f, sys %.3f)\n", ms(c.Total()), ms(c.User), ms(c.Sys))
	}
}

// Report is the --json document of a client run.
type Report struct {
	Peer      string         `json:"peer"`
	Port      int            `json:"cm_port"`
	Size      int            `json:"size"`
	Count     int            `json:"count"` // requested; 0 = until interrupted
	Completed int            `json:"completed"`
	ElapsedMs float64        `json:"elapsed_ms"`
	RTTMs     []float64      `json:"rtt_ms"` // the first maxListedRTTs; the summary covers all
	Summary   *ReportSummary `json:"summary,omitempty"`
	// PortCounters are the error counters that rose during the run; left
	// out when the counters could not be read.
	PortCounters *counters.Summary `json:"port_counters,omitempty"`
	OK           bool              `json:"ok"`
	Error        *cli.ErrorBody    `json:"error,omitempty"`
}

// ReportSummary is Summary with RTTs in milliseconds and CPU time per
// iteration (user + sys, and each) in microseconds.
type ReportSummary struct {
	MinMs     float64 `json:"min_ms"`
	AvgMs     float64 `json:"avg_ms"`
	MaxMs     float64 `json:"max_ms"`
	MdevMs    float64 `json:"mdev_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p99_9_ms"`
	CPUUs     float64 `json:"cpu_per_iteration_us"`
	CPUUserUs float64 `json:"cpu_user_per_iteration_us"`
	CPUSysUs  float64 `json:"cpu_sys_per_iteration_us"`
}

func newReport(o *Options, r result) Report {
	s := r.sum
	rep := Report{
		Peer: o.Addr, Port: o.Port, Size: o.Size, Count: o.Count,
		Completed: s.Count, ElapsedMs: roundMs(r.elapsed), RTTMs: make([]float64, len(r.first)),
	}
	for i, d := range r.first {
		rep.RTTMs[i] = roundMs(d)
	}
	if s.Count > 0 {
		c := s.CPUPerPing
		rep.Summary = &ReportSummary{
			MinMs: roundMs(s.Min), AvgMs: roundMs(s.Avg), MaxMs: roundMs(s.Max), MdevMs: roundMs(s.Mdev),
			P50Ms: roundMs(s.P50), P90Ms: roundMs(s.P90), P99Ms: roundMs(s.P99), P999Ms: roundMs(s.P999),
			CPUUs: roundUs(c.Total()), CPUUserUs: roundUs(c.User), CPUSysUs: roundUs(c.Sys),
		}
	}
	return rep
}

// roundMs is d in milliseconds to the microsecond.
func roundMs(d time.Duration) float64 { return math.Round(ms(d)*1000) / 1000 }

// roundUs is d in microseconds to a tenth.
func roundUs(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)*10) / 10
}
