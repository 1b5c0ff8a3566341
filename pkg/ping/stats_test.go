package ping

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	s := Summarize([]time.Duration{2 * ms, 4 * ms, 4 * ms, 4 * ms, 5 * ms, 5 * ms, 7 * ms, 9 * ms})
	// mean 5, population standard deviation 2 (as ping's mdev)
	want := Summary{Count: 8, Min: 2 * ms, Avg: 5 * ms, Max: 9 * ms, Mdev: 2 * ms, P99: 9 * ms}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("empty input gave a summary")
	}
}

func TestP99IsNearestRank(t *testing.T) {
	rtts := make([]time.Duration, 200)
	for i := range rtts {
		rtts[i] = time.Duration(200-i) * time.Microsecond
	}
	// rank ceil(0.99*200) = 198 of 1..200 µs
	if got := Summarize(rtts).P99; got != 198*time.Microsecond {
		t.Fatalf("p99 %v", got)
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

func TestWriteSummary(t *testing.T) {
	var b bytes.Buffer
	writeSummary(&b, "10.9.0.1", []time.Duration{time.Millisecond, 3 * time.Millisecond}, 12*time.Millisecond)
	want := "--- 10.9.0.1 ping statistics ---\n" +
		"2 iterations, time 12ms\n" +
		"rtt min/avg/max/mdev = 1.000/2.000/3.000/1.000 ms, p99 3.000 ms\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestReportJSON(t *testing.T) {
	o := &Options{Addr: "10.9.0.1", Port: 7174, Size: 64, Count: 2}
	var b bytes.Buffer
	if err := cli.WriteJSON(&b, newReport(o, []time.Duration{1500 * time.Microsecond, 2500 * time.Microsecond}, time.Second)); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, b.String())
	}
	if got["completed"] != 2.0 || got["summary"].(map[string]any)["avg_ms"] != 2.0 || got["elapsed_ms"] != 1000.0 {
		t.Fatalf("unexpected document %s", b.String())
	}
	if strings.Count(b.String(), "\n") != 1 || !strings.HasPrefix(b.String(), `{"schema_version":1,`) || !strings.HasSuffix(b.String(), "}\n") {
		t.Fatalf("not one compact contract document: %q", b.String())
	}
}
