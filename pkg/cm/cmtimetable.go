package cm

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The steps of cmtime's table, in its order: rdma.CMTiming's, whose
// results index the table.
const (
	stepCreateID = int(rdma.CMStepCreateID)
	stepBind     = int(rdma.CMStepBind)
	stepConnect  = int(rdma.CMStepConnect)
	stepCount    = int(rdma.CMSteps)
)

var stepNames = [stepCount]string{
	"create id", "bind addr", "resolve addr", "resolve route",
	"create qp", "connect", "disconnect", "destroy",
}

// span is a start and an end; zero times are unset.
type span struct{ start, end time.Time }

func (s span) set() bool { return !s.start.IsZero() && !s.end.IsZero() }

// us is the span in whole microseconds of the wall clock, as cmtime's
// gettimeofday stamps give it.
func (s span) us() float64 { return float64(s.end.UnixMicro() - s.start.UnixMicro()) }

// timings are one cmtime run's: each step's whole span and each
// connection's own.
type timings struct {
	total [stepCount]span
	conns [][stepCount]span
	bind  bool // -b given: the table has the bind step
}

// StepRow is one line of cmtime's table, in its units.
type StepRow struct {
	Step    string  `json:"step"`
	TotalMs float64 `json:"total_ms"`
	MaxMs   float64 `json:"max_ms"`
	MinUs   float64 `json:"min_us"`
	UsConn  float64 `json:"us_per_conn"`
	// perConn is us_per_conn as cmtime prints it: the float32 quotient
	// widened exactly (UsConn keeps float32's shortest digits for JSON).
	perConn float64
}

// rows computes the table; float32 as cmtime keeps its figures. Without
// connections us_per_conn is NaN, as cmtime's division gives it.
func (t *timings) rows() []StepRow {
	n := len(t.conns)
	var out []StepRow
	for i := 0; i < stepCount; i++ {
		if i == stepBind && !t.bind {
			continue
		}
		var mx, mn float32 = 0, 999999999.
		for _, c := range t.conns {
			if c[i].set() {
				us := float32(c[i].us())
				mx = max(mx, us)
				mn = min(mn, us)
			}
		}
		us := float32(0)
		if t.total[i].set() {
			us = float32(t.total[i].us())
		}
		per := float32(math.NaN())
		if n > 0 {
			per = us / float32(n)
		}
		out = append(out, StepRow{Step: stepNames[i], TotalMs: float64(us) / 1000, MaxMs: float64(mx) / 1000,
			MinUs: float64(mn), UsConn: widen(per), perConn: float64(per)})
	}
	return out
}

// widen is x as a float64 with float32's shortest decimal form, so that
// JSON carries 859.85 and not 859.8499755859375; the table prints the
// digits of the exact value.
func widen(x float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return v
}

// writeTable prints the table as cmtime's show_perf does.
func writeTable(w io.Writer, rows []StepRow) {
	fmt.Fprintf(w, "step              total ms     max ms     min us  us / conn\n")
	for _, r := range rows {
		// -c 0 divides by zero: glibc prints the NaN as "-nan".
		per := fmt.Sprintf("%11.2f", r.perConn)
		if math.IsNaN(r.perConn) {
			per = fmt.Sprintf("%11s", "-nan")
		}
		fmt.Fprintf(w, "%-13s: %11.2f%11.2f%11.2f%s\n", r.Step, r.TotalMs, r.MaxMs, r.MinUs, per)
	}
}

// Percentiles of the connections' connect times, in µs.
type Percentiles struct {
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	Max  float64 `json:"max_us"`
	Conn int     `json:"connections"`
}

// connectPercentiles summarises the per-connection connect spans
// (nearest rank), over the connections that have one.
func (t *timings) connectPercentiles() Percentiles {
	var v []float64
	for _, c := range t.conns {
		if c[stepConnect].set() {
			v = append(v, c[stepConnect].us())
		}
	}
	p := Percentiles{Conn: len(v)}
	if len(v) == 0 {
		return p
	}
	sort.Float64s(v)
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(v)))) - 1
		return v[max(i, 0)]
	}
	p.P50, p.P90, p.P99, p.Max = rank(.5), rank(.9), rank(.99), v[len(v)-1]
	return p
}

// perSecond is how many connections per second the connect step made.
func (t *timings) perSecond() float64 {
	s := t.total[stepConnect]
	if !s.set() || s.end.Sub(s.start) <= 0 {
		return 0
	}
	ok := 0
	for _, c := range t.conns {
		if c[stepConnect].set() {
			ok++
		}
	}
	return float64(ok) / s.end.Sub(s.start).Seconds()
}
