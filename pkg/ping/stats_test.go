package ping

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/latency"
)

// summaryOf is the summary of rtts, without CPU time.
func summaryOf(rtts []time.Duration) Summary {
	h := latency.New()
	for _, d := range rtts {
		h.Record(d)
	}
	return summarize(h, latency.CPU{})
}

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	s := summaryOf([]time.Duration{2 * ms, 4 * ms, 4 * ms, 4 * ms, 5 * ms, 5 * ms, 7 * ms, 9 * ms})
	// mean 5, population standard deviation 2 (as ping's mdev): exact
	if s.Count != 8 || s.Min != 2*ms || s.Avg != 5*ms || s.Max != 9*ms || s.Mdev != 2*ms {
		t.Fatalf("got %+v", s)
	}
	// nearest rank, at most the histogram's 1/64 above
	for _, c := range []struct{ got, want time.Duration }{{s.P50, 4 * ms}, {s.P90, 9 * ms}, {s.P99, 9 * ms}, {s.P999, 9 * ms}} {
		if c.got < c.want || c.got > c.want+c.want/64 {
			t.Errorf("percentile %v, want %v", c.got, c.want)
		}
	}
	if (summaryOf(nil) != Summary{}) {
		t.Fatal("empty input gave a summary")
	}
}

func TestP99IsNearestRank(t *testing.T) {
	rtts := make([]time.Duration, 200)
	for i := range rtts {
		rtts[i] = time.Duration(200-i) * time.Microsecond
	}
	// rank ceil(0.99*200) = 198 of 1..200 µs
	if got := summaryOf(rtts).P99; got < 198*time.Microsecond || got > 198*time.Microsecond*65/64 {
		t.Fatalf("p99 %v", got)
	}
}

func TestStatsMemoryDoesNotGrowWithPings(t *testing.T) {
	s := newStats(0) // -C 0: until interrupted
	for range maxListedRTTs {
		s.add(time.Millisecond)
	}
	if n := testing.AllocsPerRun(10000, func() { s.add(time.Millisecond) }); n != 0 {
		t.Fatalf("add allocates %v times per ping past the listed RTTs", n)
	}
	if r := s.snapshot(); r.sum.Count != maxListedRTTs+10001 || len(r.first) != maxListedRTTs {
		t.Fatalf("count %d, listed %d", r.sum.Count, len(r.first))
	}
}

func TestStatsChargeCPUFromTheFirstPing(t *testing.T) {
	s := newStats(2)
	burn(30 * time.Millisecond) // connection set-up: not the pings' cost
	s.beginPings()
	s.add(time.Millisecond)
	s.add(time.Millisecond)
	if c := s.snapshot().sum.CPUPerPing.Total(); c > 10*time.Millisecond {
		t.Fatalf("set-up CPU charged to the pings: %v per ping", c)
	}
	burn(40 * time.Millisecond)
	if c := s.snapshot().sum.CPUPerPing.Total(); c < 5*time.Millisecond {
		t.Fatalf("40 ms of CPU over 2 pings counted as %v per ping", c)
	}
}

// burn uses d of CPU time (not wall time: a loaded machine stretches that).
func burn(d time.Duration) {
	for start := latency.ProcessCPU(); latency.ProcessCPU().Sub(start).Total() < d; {
	}
}

func TestPingLineDoesNotAllocate(t *testing.T) {
	s := newStats(10)
	if got := string(s.pingLine(7, 1234567*time.Nanosecond)); got != "seq=7 rtt=1.235 ms" {
		t.Fatalf("got %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { s.pingLine(12345, time.Millisecond) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func histOf(ds ...time.Duration) *latency.Histogram {
	h := latency.New()
	for _, d := range ds {
		h.Record(d)
	}
	return h
}

func TestWriteSummary(t *testing.T) {
	var b bytes.Buffer
	r := result{
		sum:     summarize(histOf(time.Millisecond, 3*time.Millisecond), latency.CPU{User: 300 * time.Microsecond, Sys: 100 * time.Microsecond}),
		elapsed: 12 * time.Millisecond,
	}
	writeSummary(&b, "10.9.0.1", r)
	want := "--- 10.9.0.1 ping statistics ---\n" +
		"2 iterations, time 12ms\n" +
		"rtt min/avg/max/mdev = 1.000/2.000/3.000/1.000 ms\n" +
		"rtt p50/p90/p99/p99.9 = 1.008/3.000/3.000/3.000 ms\n" +
		"cpu per iteration 0.200 ms (user 0.150, sys 0.050)\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestReportJSON(t *testing.T) {
	o := &Options{Addr: "10.9.0.1", Port: 7174, Size: 64, Count: 2}
	r := result{
		sum:     summarize(histOf(1500*time.Microsecond, 2500*time.Microsecond), latency.CPU{User: time.Millisecond, Sys: 250 * time.Microsecond}),
		first:   []time.Duration{1500 * time.Microsecond, 2500 * time.Microsecond},
		elapsed: time.Second,
	}
	var b bytes.Buffer
	if err := cli.WriteJSON(&b, newReport(o, r)); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, b.String())
	}
	sum := got["summary"].(map[string]any)
	if got["completed"] != 2.0 || sum["avg_ms"] != 2.0 || got["elapsed_ms"] != 1000.0 || len(got["rtt_ms"].([]any)) != 2 {
		t.Fatalf("unexpected document %s", b.String())
	}
	if sum["cpu_per_iteration_us"] != 625.0 || sum["cpu_user_per_iteration_us"] != 500.0 || sum["cpu_sys_per_iteration_us"] != 125.0 {
		t.Fatalf("CPU per iteration: %s", b.String())
	}
	for _, k := range []string{"p50_ms", "p90_ms", "p99_ms", "p99_9_ms"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %s: %s", k, b.String())
		}
	}
	if strings.Count(b.String(), "\n") != 1 || !strings.HasPrefix(b.String(), `{"schema_version":2,`) || !strings.HasSuffix(b.String(), "}\n") {
		t.Fatalf("not one compact contract document: %q", b.String())
	}
}
