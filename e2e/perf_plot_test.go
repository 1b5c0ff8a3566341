//go:build e2e

package e2e

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// plotSVG is what the test reads of a --plot file: the title, the dots
// of each series, the histogram's bars and its marks.
type plotSVG struct {
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

func readPlot(t *testing.T, path string) plotSVG {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p plotSVG
	if err := xml.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s does not parse: %v\n%s", path, err, b)
	}
	if len(p.Texts) == 0 {
		t.Fatalf("%s has no title", path)
	}
	return p
}

// TestSinglePerfPlot: --plot against the real perftest. rdmactl's write_bw
// -a client draws a dot per size for bandwidth and message rate; a
// latency side (send_lat's client, write_lat's server) draws the
// histogram of the samples -H prints, with its four marks. A --plot into
// a missing directory is refused before anything runs.
func TestSinglePerfPlot(t *testing.T) {
	dir := t.TempDir()
	r := run(t, time.Minute, rdmactl, "perf", "write_bw", "-d", "rxe0", "--plot", "/no/such/dir/bw.svg", "10.9.0.1")
	if r.Code != 2 || !strings.HasPrefix(r.Stderr, "rdmactl: --plot /no/such/dir/bw.svg: there is no directory") {
		t.Errorf("--plot into a missing directory: exit %d, stderr %q", r.Code, r.Stderr)
	}

	bw := filepath.Join(dir, "write_bw.svg")
	srv, cli := perfPair(t, "write_bw", "perftest", "rdmactl", func(sn string, sa []string, cn string, ca []string) (result, result) {
		return singlePair(t)(sn, sa, cn, append(append([]string{}, ca...), "--plot", bw))
	}, "-d", "rxe0", "-x", ownGID(t), "-a", "-n", "20")
	checkPerf(t, "write_bw", srv, cli)
	if n := len(bwRow.FindAllString(cli.Stdout, -1)); n != 23 {
		t.Fatalf("-a printed %d rows, want 23", n)
	}
	p := readPlot(t, bw)
	if p.Texts[0] != "write_bw, RC, rxe0, client" {
		t.Errorf("title %q", p.Texts[0])
	}
	dots := map[string]int{}
	for _, s := range p.Series {
		dots[s.Label] = len(s.Circles)
	}
	if len(dots) != 3 || dots["BW average"] != 23 || dots["BW peak"] != 23 || dots["MsgRate"] != 23 {
		t.Errorf("dots per series %v, want 23 for BW average, BW peak and MsgRate", dots)
	}

	const iters = 200
	for _, c := range []struct{ test, server, client, role string }{
		{"send_lat", "perftest", "rdmactl", "client"},
		{"write_lat", "rdmactl", "perftest", "server"},
	} {
		file := filepath.Join(dir, c.test+".svg")
		srv, cli := perfPair(t, c.test, c.server, c.client, func(sn string, sa []string, cn string, ca []string) (result, result) {
			if c.server == "rdmactl" {
				sa = append(append([]string{}, sa...), "--plot", file)
			} else {
				ca = append(append([]string{}, ca...), "--plot", file)
			}
			return singlePair(t)(sn, sa, cn, ca)
		}, "-d", "rxe0", "-x", ownGID(t), "-n", strconv.Itoa(iters))
		checkPerf(t, c.test, srv, cli)
		p := readPlot(t, file)
		if want := c.test + ", RC, rxe0, " + c.role; p.Texts[0] != want {
			t.Errorf("%s: title %q, want %q", c.test, p.Texts[0], want)
		}
		samples, bars := 0, 0
		var marks []string
		for _, r := range p.Rects {
			if r.Class != "bin" {
				continue
			}
			_, count, _ := strings.Cut(r.Title, ": ")
			n, err := strconv.Atoi(count)
			if err != nil {
				t.Fatalf("%s: bar %q", c.test, r.Title)
			}
			samples += n
			bars++
		}
		for _, l := range p.Lines {
			if l.Class == "mark" {
				marks = append(marks, l.Label)
			}
		}
		// -H's samples: a gap between each two of the iterations, the two
		// largest left out
		if samples != iters-3 || bars == 0 {
			t.Errorf("%s: %d bars hold %d samples, want %d", c.test, bars, samples, iters-3)
		}
		if m := strings.Join(marks, ","); m != "t_min,t_typical,t_avg,99% percentile" {
			t.Errorf("%s: marks %s", c.test, m)
		}
	}
}
