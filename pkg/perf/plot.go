package perf

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/plot"
)

// --plot FILE.svg draws what this side's table shows, once the run is
// over: a bandwidth test's bandwidth and message rate per size (one dot
// per row, so a run of one size draws one dot per series); a latency
// test's histogram of the samples -H prints, with t_min, t_typical, t_avg
// and the 99th percentile marked, or with -a its t_* per size.

// checkPlot refuses a --plot that could not be written, or that would
// draw nothing, before the run: a long run must not end in a refusal.
func (r Resolved) checkPlot() error {
	path := r.PlotFile
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case !strings.EqualFold(filepath.Ext(path), ".svg"):
		return fmt.Errorf("--plot %s: the plot is an SVG image: name the file FILE.svg", path)
	case err != nil || !st.IsDir():
		return fmt.Errorf("--plot %s: there is no directory %s: create it, or name a file in an existing one", path, dir)
	case unix.Access(dir, unix.W_OK) != nil:
		return fmt.Errorf("--plot %s: the directory %s is not writable: name a file in one that is", path, dir)
	case r.Test.Latency() && r.Duration > 0:
		return fmt.Errorf("--plot with -D: a timed latency run keeps no samples to draw; drop -D or --plot")
	case r.RunInfinitely:
		return fmt.Errorf("--plot with --run_infinitely: the run never ends to be drawn; drop one of them")
	}
	// The file is replaced by a rename: a device or FIFO must not be.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("--plot %s: not a regular file: name a new file, or an SVG file to replace", path)
	}
	return nil
}

// svgWriter is a chart of pkg/plot.
type svgWriter interface{ WriteSVG(io.Writer) error }

// writePlot writes --plot's file from the rows this side printed.
func (s *session) writePlot() error {
	if s.r.PlotFile == "" {
		return nil
	}
	chart := s.chart()
	if chart == nil {
		fmt.Fprintf(s.errOut, "--plot %s: this side of %s prints no result to draw; the client's --plot draws it\n", s.r.PlotFile, s.r.Test)
		return nil
	}
	if err := cli.WriteFileAtomic(s.r.PlotFile, 0o666, chart.WriteSVG); err != nil {
		return fmt.Errorf("--plot %s: %w", s.r.PlotFile, err)
	}
	return nil
}

// chart is what this side's table shows, drawn; nil for no table.
func (s *session) chart() svgWriter {
	title := fmt.Sprintf("%s, %s, %s, %s", s.r.Test, s.r.Conn, s.devName, s.result.Role)
	setup := fmt.Sprintf("MTU %d, %d QP", mtuBytes(s.mtu), s.r.QPs)
	res := s.result
	switch {
	case !s.r.Test.Latency() && len(res.Bandwidth) > 0:
		if s.r.Bidirectional {
			setup = "both directions summed, " + setup
		}
		return bwChart(title, setup, res.BWUnit, res.Bandwidth)
	case len(res.Latency) > 1:
		return latSizeChart(title, setup, res.Latency)
	case len(res.Latency) == 1 && s.plotStamps != nil:
		return latHistogram(title, setup, s.plotStamps, s.r.Test.rttFactor(), res.Latency[0])
	}
	return nil
}

// bwChart is a bandwidth test's rows: bandwidth (average, and peak when
// measured) above, message rate below.
func bwChart(title, setup, unit string, rows []BWRow) plot.SizeChart {
	var avg, peak, rate plot.Series
	avg.Label, peak.Label, rate.Label = "BW average", "BW peak", "MsgRate"
	peaked := false
	for _, r := range rows {
		x := float64(r.Bytes)
		avg.Points = append(avg.Points, plot.Point{X: x, Y: r.BWAvg})
		peak.Points = append(peak.Points, plot.Point{X: x, Y: r.BWPeak})
		rate.Points = append(rate.Points, plot.Point{X: x, Y: r.MsgRate})
		peaked = peaked || r.BWPeak > 0
	}
	bw := plot.Panel{YLabel: "bandwidth [" + unit + "]", Series: []plot.Series{avg}}
	if peaked { // -N and timed runs measure no peak
		bw.Series = append(bw.Series, peak)
	}
	return plot.SizeChart{
		Title:    title,
		Subtitle: fmt.Sprintf("%s, %d iterations per size", setup, rows[0].Iters),
		Panels:   []plot.Panel{bw, {YLabel: "message rate [Mpps]", Series: []plot.Series{rate}}},
	}
}

// latSizeChart is a latency test's -a rows: its t_* per size.
func latSizeChart(title, setup string, rows []LatReport) plot.SizeChart {
	series := []plot.Series{{Label: "t_min"}, {Label: "t_typical"}, {Label: "t_avg"}, {Label: "99% percentile"}}
	for _, r := range rows {
		for i, v := range []float64{r.Min, r.Typical, r.Avg, r.P99} {
			series[i].Points = append(series[i].Points, plot.Point{X: float64(r.Size), Y: v})
		}
	}
	return plot.SizeChart{
		Title:    title,
		Subtitle: fmt.Sprintf("%s, %d iterations per size", setup, rows[0].Iters),
		Panels:   []plot.Panel{{YLabel: "latency [usec]", Series: series}},
	}
}

// latHistogram is a latency run's samples as -H prints them, counted in
// pkg/latency's buckets (1/64 of an octave wide), in microseconds as
// --json's.
func latHistogram(title, setup string, posted []int64, rttFactor int, rep LatReport) plot.Histogram {
	var bins []plot.Bin
	var samples uint64
	for _, b := range histogramBuckets(posted, rttFactor) {
		bins = append(bins, plot.Bin{Low: b.LowUsec, High: b.HighUsec, Count: b.Count})
		samples += b.Count
	}
	return plot.Histogram{
		Title:    title,
		Subtitle: fmt.Sprintf("%s, %d bytes, %d iterations: the %d samples -H prints", setup, rep.Size, rep.Iters, samples),
		XLabel:   "latency [usec], log scale",
		YLabel:   "samples",
		XUnit:    "usec",
		Bins:     bins,
		Marks:    []plot.Mark{{Label: "t_min", X: rep.Min}, {Label: "t_typical", X: rep.Typical}, {Label: "t_avg", X: rep.Avg}, {Label: "99% percentile", X: rep.P99}},
	}
}

func usec(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
