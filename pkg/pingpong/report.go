package pingpong

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/latency"
)

// cfloat is printf's %.2f, whose infinities and NaNs C spells in lower case.
func cfloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "-nan" // 0/0 on x86 is the negative NaN
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func usec(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// printStats is --stats: the per-iteration latency (the time between
// successive receives: one round trip per receive once the loop runs)
// and the CPU time per iteration.
func (r *run) printStats() {
	h := r.res.hist
	if h.Count() == 0 {
		return
	}
	fmt.Fprintf(r.out, "latency usec min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f\n", usec(h.Min()), usec(h.Mean()), usec(h.Max()), usec(h.StdDev()))
	fmt.Fprintf(r.out, "latency usec p50/p90/p99/p99.9 = %.3f/%.3f/%.3f/%.3f\n",
		usec(h.Quantile(0.5)), usec(h.Quantile(0.9)), usec(h.Quantile(0.99)), usec(h.Quantile(0.999)))
	_, iters := r.sizeAndIters()
	c := r.res.cpu.Per(iters)
	fmt.Fprintf(r.out, "cpu usec per iteration %.3f (user %.3f, sys %.3f)\n", usec(c.Total()), usec(c.User), usec(c.Sys))
	if r.validates() {
		if len(r.invalid) == 0 {
			fmt.Fprintln(r.out, "received buffers valid")
		} else {
			fmt.Fprintf(r.out, "received buffers INVALID in %d pages\n", len(r.invalid))
		}
	}
}

// Document is pingpong's --json document (docs/json.md).
type Document struct {
	Tool     string    `json:"tool"`
	Type     string    `json:"type"`
	Role     string    `json:"role"`
	Peer     string    `json:"peer,omitempty"`
	Device   string    `json:"device,omitempty"`
	Port     int       `json:"port"`
	TCPPort  int       `json:"tcp_port"`
	GIDIndex *int      `json:"gid_index"`
	GIDAuto  bool      `json:"gid_auto"`
	Size     int       `json:"size"`
	Iters    int       `json:"iterations"`
	Local    []DestDoc `json:"local"`
	Remote   []DestDoc `json:"remote"`
	// The tools' result lines.
	Bytes          int64    `json:"bytes,omitempty"`
	ElapsedSeconds *float64 `json:"elapsed_seconds,omitempty"`
	MbitPerSec     *float64 `json:"mbit_per_sec,omitempty"`
	UsecPerIter    *float64 `json:"usec_per_iteration,omitempty"`
	Latency        *Latency `json:"latency_usec,omitempty"`
	CPU            *CPU     `json:"cpu_per_iteration_usec,omitempty"`
	// Validated is set when this side checked what it received (the
	// client); InvalidPages lists the pages that came back wrong.
	Validated    bool  `json:"validated"`
	InvalidPages []int `json:"invalid_pages"`
	// PortCounters are the error counters that rose during the run.
	PortCounters *counters.Summary `json:"port_counters,omitempty"`
	// Stopped says how far a run got that its context ended (serve
	// stopping, smoke's time bound).
	Stopped *Stopped       `json:"stopped,omitempty"`
	OK      bool           `json:"ok"`
	Error   *cli.ErrorBody `json:"error,omitempty"`
}

// Stopped is how far a run got: the round trips (receives) done in
// ElapsedSeconds.
type Stopped struct {
	RoundTrips     int     `json:"round_trips"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
}

// DestDoc is one QP's address.
type DestDoc struct {
	LID   uint32 `json:"lid"`
	QPNum uint32 `json:"qp_num"`
	PSN   uint32 `json:"psn"`
	GID   string `json:"gid"`
}

// Latency summarises the times between successive receives.
type Latency struct {
	Count uint64  `json:"count"`
	Min   float64 `json:"min"`
	Avg   float64 `json:"avg"`
	Max   float64 `json:"max"`
	Mdev  float64 `json:"mdev"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
}

// CPU is the process's CPU time per iteration.
type CPU struct {
	Total float64 `json:"total"`
	User  float64 `json:"user"`
	Sys   float64 `json:"sys"`
}

func dests(ds []Dest) []DestDoc {
	out := []DestDoc{}
	for _, d := range ds {
		out = append(out, DestDoc{LID: d.LID, QPNum: d.QPN, PSN: d.PSN, GID: d.GID.String()})
	}
	return out
}

func (r *run) document(err error) Document {
	o := r.o
	size, iters := r.sizeAndIters()
	doc := Document{Tool: o.Kind.Tool(), Type: o.Kind.String(), Role: "server", Peer: o.Server, Device: r.deviceName,
		Port: o.IBPort, TCPPort: o.Port, GIDAuto: o.GIDAuto, Size: size, Iters: iters,
		Local: dests(r.mine), Remote: []DestDoc{}, InvalidPages: []int{}, PortCounters: counters.Summarize(r.rose)}
	if o.Server != "" {
		doc.Role = "client"
	}
	if r.gidx >= 0 && (r.mine != nil || o.GIDIndex >= 0) {
		g := r.gidx
		doc.GIDIndex = &g
	}
	if r.theirs != nil {
		n := len(r.mine)
		doc.Remote = dests(r.theirs[:min(n, len(r.theirs))])
	}
	if res := r.res; res != nil {
		doc.Bytes = int64(size) * int64(iters) * 2
		secs := float64(res.usec) / 1e6
		mbit := float64(doc.Bytes) * 8 / float64(res.usec)
		per := float64(res.usec / float32(iters))
		doc.ElapsedSeconds, doc.MbitPerSec, doc.UsecPerIter = &secs, finite(mbit), finite(per)
		if h := res.hist; h != nil && h.Count() > 0 {
			doc.Latency = latencyDoc(h)
		}
		c := res.cpu.Per(iters)
		doc.CPU = &CPU{Total: usec(c.Total()), User: usec(c.User), Sys: usec(c.Sys)}
		doc.Validated = r.validates()
		doc.InvalidPages = append(doc.InvalidPages, r.invalid...)
	}
	if p := r.stopped; p != nil {
		doc.Stopped = &Stopped{RoundTrips: p.receives, ElapsedSeconds: p.elapsed.Seconds()}
	}
	doc.OK = err == nil && len(r.invalid) == 0
	if err != nil {
		doc.Error = cli.ErrorOf(err)
		doc.Error.Code = cli.ExitFailed
		var ee *cli.ExitError
		if errors.As(err, &ee) {
			doc.Error.Code = ee.Code
		}
	}
	return doc
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

func latencyDoc(h *latency.Histogram) *Latency {
	return &Latency{Count: h.Count(), Min: usec(h.Min()), Avg: usec(h.Mean()), Max: usec(h.Max()), Mdev: usec(h.StdDev()),
		P50: usec(h.Quantile(0.5)), P90: usec(h.Quantile(0.9)), P99: usec(h.Quantile(0.99)), P999: usec(h.Quantile(0.999))}
}
