package perf

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

var updatePlots = flag.Bool("update-plots", false, "rewrite testdata/plot from the charts")

// svgChart is what the tests read of a --plot file.
type svgChart struct {
	Texts  []string `xml:"text"`
	Series []struct {
		Label   string     `xml:"data-label,attr"`
		Circles []struct{} `xml:"circle"`
	} `xml:"g"`
	Rects []struct {
		Class string `xml:"class,attr"`
		Title string `xml:"title"`
	} `xml:"rect"`
	Lines []struct {
		Class string `xml:"class,attr"`
		Label string `xml:"data-label,attr"`
	} `xml:"line"`
}

func parseChart(t *testing.T, svg []byte) svgChart {
	t.Helper()
	var c svgChart
	if err := xml.Unmarshal(svg, &c); err != nil {
		t.Fatalf("the SVG does not parse: %v\n%s", err, svg)
	}
	return c
}

// points is the number of dots of each series, by label.
func (c svgChart) points() map[string]int {
	n := map[string]int{}
	for _, s := range c.Series {
		n[s.Label] = len(s.Circles)
	}
	return n
}

// binned is the number of samples the histogram's bars hold, and how
// many bars there are.
func (c svgChart) binned(t *testing.T) (samples, bars int) {
	for _, r := range c.Rects {
		if r.Class != "bin" {
			continue
		}
		_, count, _ := strings.Cut(r.Title, ": ")
		n, err := strconv.Atoi(count)
		if err != nil {
			t.Fatalf("bar title %q", r.Title)
		}
		samples += n
		bars++
	}
	return samples, bars
}

func (c svgChart) marks() []string {
	var m []string
	for _, l := range c.Lines {
		if l.Class == "mark" {
			m = append(m, l.Label)
		}
	}
	return m
}

// recordedBWRows are the rows perftest printed in a recorded run.
func recordedBWRows(t *testing.T, name string) []BWRow {
	t.Helper()
	b, err := os.ReadFile("testdata/perftest-6.06/" + name + ".stdout")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^ (\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$`)
	var rows []BWRow
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		var r BWRow
		r.Bytes, _ = strconv.ParseUint(m[1], 10, 64)
		r.Iters, _ = strconv.ParseUint(m[2], 10, 64)
		r.BWPeak, _ = strconv.ParseFloat(m[3], 64)
		r.BWAvg, _ = strconv.ParseFloat(m[4], 64)
		r.MsgRate, _ = strconv.ParseFloat(m[5], 64)
		rows = append(rows, r)
	}
	return rows
}

// spreadStamps are the post times of a latency run whose round trips
// take 9 to 14 µs, and two of 40 and 80 µs that -H leaves out.
func spreadStamps(iters int) []int64 {
	posted := []int64{0}
	for i := 1; i < iters; i++ {
		gap := int64(9000 + (i*7919)%5000)
		switch i {
		case 10:
			gap = 40000
		case 20:
			gap = 80000
		}
		posted = append(posted, posted[i-1]+gap)
	}
	return posted
}

// TestPlotGolden: the charts are the same bytes for the same numbers:
// perftest's recorded write_bw -a rows, and a latency run's samples.
func TestPlotGolden(t *testing.T) {
	posted := spreadStamps(200)
	for name, chart := range map[string]svgWriter{
		"write_bw_a.svg": bwChart("write_bw, RC, rxe0, client", "MTU 1024, 1 QP", "MB/sec", recordedBWRows(t, "write_bw_a-client")),
		"write_lat.svg":  latHistogram("write_lat, RC, rxe0, client", "MTU 1024, 1 QP", posted, 2, LatencyReport(2, posted, 2)),
	} {
		var b bytes.Buffer
		if err := chart.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "plot", name)
		if *updatePlots {
			if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs from %s (go test ./pkg/perf -run TestPlotGolden -update-plots, and look at it)", name, golden)
		}
		c := parseChart(t, b.Bytes())
		switch name {
		case "write_bw_a.svg":
			if p := c.points(); p["BW average"] != 23 || p["BW peak"] != 23 || p["MsgRate"] != 23 {
				t.Errorf("%s: points %v, want 23 per series", name, p)
			}
		case "write_lat.svg":
			// the -H samples: 199 gaps, the two largest left out
			if n, _ := c.binned(t); n != 197 {
				t.Errorf("%s: the bars hold %d samples, want 197", name, n)
			}
			if m := strings.Join(c.marks(), ","); m != "t_min,t_typical,t_avg,99% percentile" {
				t.Errorf("%s: marks %s", name, m)
			}
		}
		if want := strings.TrimSuffix(strings.TrimSuffix(name, ".svg"), "_a") + ", RC, rxe0, client"; len(c.Texts) == 0 || c.Texts[0] != want {
			t.Errorf("%s: title %q, want %q", name, c.Texts, want)
		}
	}
}

// TestPlotFiles: --plot writes the chart of what each side printed, at
// the end of the run, through the in-memory fabric.
func TestPlotFiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		o    Options
		// check the server's and the client's file; a nil srv wants none
		srv, cli func(t *testing.T, c svgChart)
	}{
		{"write_bw -a", Options{Test: WriteBW, All: true, Iters: 5},
			// the server prints the client's last row only
			func(t *testing.T, c svgChart) {
				wantPoints(t, c, map[string]int{"BW average": 1, "BW peak": 1, "MsgRate": 1})
			},
			func(t *testing.T, c svgChart) {
				wantPoints(t, c, map[string]int{"BW average": 23, "BW peak": 23, "MsgRate": 23})
			}},
		{"send_bw -N", Options{Test: SendBW, Iters: 20, SkipPeak: true},
			func(t *testing.T, c svgChart) { wantPoints(t, c, map[string]int{"BW average": 1, "MsgRate": 1}) },
			func(t *testing.T, c svgChart) { wantPoints(t, c, map[string]int{"BW average": 1, "MsgRate": 1}) }},
		{"send_lat", Options{Test: SendLat, Iters: 20}, wantSamples(17), wantSamples(17)},
		{"read_lat", Options{Test: ReadLat, Iters: 20}, nil, wantSamples(17)},
		{"write_lat -a", Options{Test: WriteLat, All: true, Iters: 5},
			func(t *testing.T, c svgChart) {
				wantPoints(t, c, map[string]int{"t_min": 23, "t_typical": 23, "t_avg": 23, "99% percentile": 23})
			},
			func(t *testing.T, c svgChart) {
				wantPoints(t, c, map[string]int{"t_min": 23, "t_typical": 23, "t_avg": 23, "99% percentile": 23})
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.GIDIndex, o.IBPort = 1, 1
			srvFile, cliFile := filepath.Join(dir, c.name+"-server.svg"), filepath.Join(dir, c.name+"-client.svg")
			so := o
			so.PlotFile, o.PlotFile = srvFile, cliFile
			var serr, cerr bytes.Buffer
			_, _, se, ce := runSides(t, newFabric(), so, o, &serr, &cerr)
			if se != nil || ce != nil {
				t.Fatalf("server %v, client %v", se, ce)
			}
			for _, side := range []struct {
				file  string
				check func(*testing.T, svgChart)
				role  string
			}{{srvFile, c.srv, "server"}, {cliFile, c.cli, "client"}} {
				b, err := os.ReadFile(side.file)
				if side.check == nil {
					if err == nil {
						t.Errorf("the %s wrote %s, which prints no result", side.role, side.file)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", side.role, err)
				}
				chart := parseChart(t, b)
				if want := o.Test.String() + ", RC, rxe0, " + side.role; len(chart.Texts) == 0 || chart.Texts[0] != want {
					t.Errorf("%s: title %q, want %q", side.role, chart.Texts, want)
				}
				side.check(t, chart)
			}
			if c.srv == nil && !strings.Contains(serr.String(), "--plot "+srvFile+": this side of read_lat prints no result") {
				t.Errorf("the server's stderr says nothing of --plot: %q", serr.String())
			}
		})
	}
}

func wantPoints(t *testing.T, c svgChart, want map[string]int) {
	t.Helper()
	got := c.points()
	if len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	for label, n := range want {
		if got[label] != n {
			t.Errorf("series %q has %d points, want %d (all: %v)", label, got[label], n, got)
		}
	}
}

// wantSamples checks a histogram of n samples with its four marks.
func wantSamples(n int) func(*testing.T, svgChart) {
	return func(t *testing.T, c svgChart) {
		t.Helper()
		if got, bars := c.binned(t); got != n || bars == 0 {
			t.Errorf("the bars hold %d samples in %d bars, want %d", got, bars, n)
		}
		if m := strings.Join(c.marks(), ","); m != "t_min,t_typical,t_avg,99% percentile" {
			t.Errorf("marks %s", m)
		}
	}
}

// TestPlotRefusals: a --plot that could not be written, or would draw
// nothing, is refused before the run, naming --plot and the way out.
func TestPlotRefusals(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.svg")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	null := filepath.Join(dir, "null.svg")
	if err := os.Symlink("/dev/null", null); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.svg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: WriteBW, PlotFile: filepath.Join(dir, "bw.png")}, "--plot " + dir + "/bw.png: the plot is an SVG image: name the file FILE.svg"},
		{Options{Test: WriteBW, PlotFile: "/dev/null"}, "--plot /dev/null: the plot is an SVG image: name the file FILE.svg"},
		{Options{Test: WriteBW, PlotFile: filepath.Join(dir, "no/such/bw.svg")}, "--plot " + dir + "/no/such/bw.svg: there is no directory " + dir + "/no/such: create it, or name a file in an existing one"},
		{Options{Test: WriteBW, PlotFile: fifo}, "--plot " + fifo + ": not a regular file: name a new file, or an SVG file to replace"},
		{Options{Test: WriteBW, PlotFile: null}, "--plot " + null + ": not a regular file: name a new file, or an SVG file to replace"},
		{Options{Test: WriteBW, PlotFile: filepath.Join(dir, "d.svg")}, "--plot " + dir + "/d.svg: not a regular file: name a new file, or an SVG file to replace"},
		{Options{Test: SendLat, PlotFile: "lat.svg", Duration: 5e9}, "--plot with -D: a timed latency run keeps no samples to draw; drop -D or --plot"},
		{Options{Test: WriteBW, PlotFile: "bw.svg", RunInfinitely: true}, "--plot with --run_infinitely: the run never ends to be drawn; drop one of them"},
	} {
		if _, err := c.o.Resolve(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.o.PlotFile, err, c.want)
		}
	}
	for _, ok := range []Options{
		{Test: WriteBW, PlotFile: "bw.svg"},
		{Test: WriteBW, PlotFile: filepath.Join(dir, "BW.SVG")},
		{Test: WriteBW, PlotFile: "bw.svg", Duration: 5e9},
	} {
		if _, err := ok.Resolve(); err != nil {
			t.Errorf("%s: %v", ok.PlotFile, err)
		}
	}
}
