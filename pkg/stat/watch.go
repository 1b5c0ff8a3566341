package stat

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
)

// row is one counter that moved since the watch began.
type row struct {
	Device     string
	Port       int
	Counter    string
	Kind       counters.Kind
	Value      uint64
	Delta      uint64 // over the last interval
	PerSecond  float64
	SinceStart uint64
}

func (r row) link() string { return fmt.Sprintf("%s/%d", r.Device, r.Port) }

// sample is one interval of a watch.
type sample struct {
	Time    time.Time
	Elapsed time.Duration // since the first read
	Span    time.Duration // since the previous read
	Rows    []row
}

// sampleOf compares cur with the previous and the first snapshot and keeps
// the counters that moved since the first, in the kernel's order.
func sampleOf(first, prev, cur counters.Snapshot) sample {
	s := sample{Time: cur.Time, Elapsed: cur.Time.Sub(first.Time), Span: cur.Time.Sub(prev.Time)}
	step := counters.Diff(prev, cur)
	for i, c := range counters.Diff(first, cur) {
		if c.Delta == 0 {
			continue
		}
		r := row{Device: c.Device, Port: c.Port, Counter: c.Counter, Kind: counters.Lookup(c.Counter).Kind,
			Value: c.Value, Delta: step[i].Delta, SinceStart: c.Delta}
		if s.Span > 0 {
			r.PerSecond = float64(r.Delta) / s.Span.Seconds()
		}
		s.Rows = append(s.Rows, r)
	}
	return s
}

// watch samples every opts.Interval and prints each sample, until
// opts.Count samples or ctx's end; the files are rewritten each time.
func watch(ctx context.Context, opts Options, sel selector, first counters.Snapshot) error {
	var plot plotHistory
	if err := opts.writeFiles(first, &plot); err != nil {
		return err
	}
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	prev := first
	for n := 0; opts.Count == 0 || n < opts.Count; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		cur, err := take(opts.Source, sel)
		if err != nil {
			return opts.failure(err)
		}
		s := sampleOf(first, prev, cur)
		prev = cur
		plot.add(s)
		if err := opts.print(s); err != nil {
			return err
		}
		if err := opts.writeFiles(cur, &plot); err != nil {
			return err
		}
	}
	return nil
}

func (opts Options) writeFiles(cur counters.Snapshot, plot *plotHistory) error {
	if opts.PromFile != "" {
		if err := writeProm(opts.PromFile, cur); err != nil {
			return cli.Failf("--prom %s: %v", opts.PromFile, err)
		}
	}
	if opts.PlotFile != "" {
		if err := cli.WriteFileAtomic(opts.PlotFile, 0o666, plot.writeSVG); err != nil {
			return cli.Failf("--plot %s: %v", opts.PlotFile, err)
		}
	}
	return nil
}

func (opts Options) print(s sample) error {
	var err error
	switch {
	case opts.JSON:
		err = cli.EncodeDocument(opts.IO.Out, watchDocumentOf(s), false)
	case opts.Redraw:
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		writeTable(&b, s, opts.Interval, opts.IO.Palette())
		_, err = io.WriteString(opts.IO.Out, b.String())
	default:
		_, err = io.WriteString(opts.IO.Out, line(s))
	}
	return err
}

// writeTable is the terminal view: the counters that moved, their rate over
// the last interval and their change since start, retries in yellow and
// errors in red.
func writeTable(b *strings.Builder, s sample, every time.Duration, pal cli.Palette) {
	fmt.Fprintf(b, "rdmactl stat: every %v, %v since start (Ctrl-C ends)\n\n", every, s.Elapsed.Round(time.Second))
	if len(s.Rows) == 0 {
		b.WriteString("no counter moved since start\n")
		return
	}
	cells := [][]string{{"LINK", "COUNTER", "RATE/s", "SINCE START", "VALUE"}}
	for _, r := range s.Rows {
		cells = append(cells, []string{r.link(), r.Counter, rate(r.PerSecond), fmt.Sprintf("+%d", r.SinceStart), fmt.Sprint(r.Value)})
	}
	width := make([]int, len(cells[0]))
	for _, c := range cells {
		for i, v := range c {
			width[i] = max(width[i], len(v))
		}
	}
	for i, c := range cells {
		var l strings.Builder
		for j, v := range c {
			if j > 0 {
				l.WriteString("  ")
			}
			if j >= 2 {
				fmt.Fprintf(&l, "%*s", width[j], v)
			} else {
				fmt.Fprintf(&l, "%-*s", width[j], v)
			}
		}
		text := strings.TrimRight(l.String(), " ")
		if i > 0 {
			switch s.Rows[i-1].Kind {
			case counters.Retry:
				text = pal.Yellow(text)
			case counters.Error:
				text = pal.Red(text)
			}
		} else {
			text = pal.Bold(text)
		}
		b.WriteString(text + "\n")
	}
}

// line is the view for a file or pipe: the time, then for each port the
// counters that moved since start with their rate and change since start;
// a retry or error counter carries its kind.
func line(s sample) string {
	var b strings.Builder
	b.WriteString(s.Time.Format("15:04:05"))
	if len(s.Rows) == 0 {
		b.WriteString(" no counter moved\n")
		return b.String()
	}
	last := ""
	for _, r := range s.Rows {
		if l := r.link(); l != last {
			if last != "" {
				b.WriteByte(';')
			}
			fmt.Fprintf(&b, " %s", l)
			last = l
		} else {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s", r.Counter)
		if r.Kind != counters.Traffic {
			fmt.Fprintf(&b, "[%s]", kindName(r.Kind))
		}
		fmt.Fprintf(&b, " %s/s +%d", rate(r.PerSecond), r.SinceStart)
	}
	b.WriteByte('\n')
	return b.String()
}

func rate(v float64) string {
	if v < 10 && v != float64(int64(v)) {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func kindName(k counters.Kind) string {
	switch k {
	case counters.Retry:
		return "retry"
	case counters.Error:
		return "error"
	}
	return "traffic"
}

// watchDocument is one JSON line of --watch --json.
type watchDocument struct {
	Time            string        `json:"time"`
	ElapsedSeconds  float64       `json:"elapsed_seconds"`
	IntervalSeconds float64       `json:"interval_seconds"`
	Counters        []counterJSON `json:"counters"`
}

type counterJSON struct {
	Device     string  `json:"device"`
	Port       int     `json:"port"`
	Counter    string  `json:"counter"`
	Kind       string  `json:"kind"`
	Value      uint64  `json:"value"`
	Delta      uint64  `json:"delta"`
	PerSecond  float64 `json:"per_second"`
	SinceStart uint64  `json:"since_start"`
}

func watchDocumentOf(s sample) watchDocument {
	d := watchDocument{
		Time:            s.Time.UTC().Format(time.RFC3339Nano),
		ElapsedSeconds:  roundTo(s.Elapsed.Seconds(), 3),
		IntervalSeconds: roundTo(s.Span.Seconds(), 3),
		Counters:        []counterJSON{},
	}
	for _, r := range s.Rows {
		d.Counters = append(d.Counters, counterJSON{Device: r.Device, Port: r.Port, Counter: r.Counter, Kind: kindName(r.Kind),
			Value: r.Value, Delta: r.Delta, PerSecond: roundTo(r.PerSecond, 1), SinceStart: r.SinceStart})
	}
	return d
}

func roundTo(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
