package smoke

import (
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

func pass(ctx context.Context, peer string) Result { return Result{OK: true} }

func failWith(msg, hint string) CheckFunc {
	return func(ctx context.Context, peer string) Result { return Result{Message: msg, Hint: hint} }
}

func TestRunGateSkipsTheRest(t *testing.T) {
	r := Run(context.Background(), Plan{
		Local:   []Check{{Name: "doctor", Run: pass}},
		PerPeer: []Check{{Name: "route", Gate: true, Run: failWith("no route", "")}, {Name: "ping", Run: pass}},
		Peers:   []string{"10.0.0.1"},
	})
	if r.OK || r.Peers[0].OK || !r.Local[0].OK {
		t.Fatalf("verdicts wrong: %+v", r)
	}
	ping := r.Peers[0].Checks[1]
	if !ping.Skipped || ping.OK || ping.Message != "skipped: route failed" {
		t.Fatalf("ping after a failed gate = %+v", ping)
	}
}

func TestRunKeepsPeerOrderAndBoundsConcurrency(t *testing.T) {
	var running, most atomic.Int32
	slow := func(ctx context.Context, peer string) Result {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return Result{OK: peer != "c"}
	}
	peers := []string{"a", "b", "c", "d", "e"}
	r := Run(context.Background(), Plan{PerPeer: []Check{{Name: "ping", Run: slow}}, Peers: peers, Concurrency: 2})
	for i, p := range r.Peers {
		if p.Peer != peers[i] {
			t.Fatalf("peer %d = %s, want %s", i, p.Peer, peers[i])
		}
		if p.OK != (p.Peer != "c") {
			t.Fatalf("peer %s ok=%v", p.Peer, p.OK)
		}
	}
	if most.Load() > 2 {
		t.Fatalf("%d checks ran at once, bound 2", most.Load())
	}
	if r.OK {
		t.Fatal("report ok although peer c failed")
	}
}

func TestRunTimesOutACheckThatHangs(t *testing.T) {
	hang := func(ctx context.Context, peer string) Result { select {} }
	start := time.Now()
	r := Run(context.Background(), Plan{PerPeer: []Check{{Name: "ping", Run: hang}}, Peers: []string{"x"}, Timeout: 50 * time.Millisecond})
	if took := time.Since(start); took > 50*time.Millisecond+checkGrace+time.Second {
		t.Fatalf("a hanging check held the run for %v", took)
	}
	c := r.Peers[0].Checks[0]
	if c.OK || !strings.HasPrefix(c.Message, "timed out after 50ms") {
		t.Fatalf("hanging check = %+v", c)
	}
}

func TestRunReportsContextTimeout(t *testing.T) {
	waits := func(ctx context.Context, peer string) Result { <-ctx.Done(); return Result{} }
	r := Run(context.Background(), Plan{PerPeer: []Check{{Name: "demo", Run: waits}}, Peers: []string{"x"}, Timeout: 10 * time.Millisecond})
	if c := r.Peers[0].Checks[0]; c.Message != "timed out after 10ms" {
		t.Fatalf("message = %q", c.Message)
	}
}

// An interrupted run (SIGINT) says so, with the time the check ran, not
// "timed out" with the check's bound: for a check that returns when its
// context ends and for one that does not.
func TestRunReportsInterruption(t *testing.T) {
	waits := func(ctx context.Context, peer string) Result { <-ctx.Done(); return Result{} }
	hang := func(ctx context.Context, peer string) Result { select {} }
	for name, run := range map[string]CheckFunc{"returns": waits, "hangs": hang} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		r := Run(ctx, Plan{PerPeer: []Check{{Name: "demo", Run: run}}, Peers: []string{"x"}, Timeout: 8 * time.Second})
		c := r.Peers[0].Checks[0]
		if c.OK || !strings.HasPrefix(c.Message, "interrupted after ") || strings.Contains(c.Message, "8s") {
			t.Errorf("%s: %+v, want interrupted after the time it ran", name, c)
		}
		cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	interrupt := func(ctx context.Context, peer string) Result { cancel(); return Result{OK: true} }
	r := Run(ctx, Plan{PerPeer: []Check{{Name: "route", Run: interrupt}, {Name: "ping", Run: pass}}, Peers: []string{"x"}})
	if c := r.Peers[0].Checks[1]; !c.Skipped || c.Message != "skipped: interrupted" || r.OK {
		t.Errorf("a check after the interrupt ran: %+v", c)
	}
}

func sampleReport() Report {
	return Report{
		Local: []Result{{Check: "doctor", OK: true, Seconds: 0.2}},
		Peers: []PeerReport{
			{Peer: "10.9.0.1", OK: true, Checks: []Result{
				{Check: "route", OK: true, Seconds: 0.001},
				{Check: "ping", OK: true, Seconds: 0.5, RTT: &RTT{Count: 10, P50: 0.0005, P99: 0.0012, Max: 0.002, Sum: 0.006}},
			}},
			{Peer: "10.9.0.77", Checks: []Result{
				{Check: "route", OK: true, Seconds: 0.001},
				{Check: "ping", Seconds: 5, Message: "timed out after 5s", Hint: "the neighbour did not answer ARP"},
				{Check: "demo", Skipped: true, Message: "skipped: ping failed"},
			}},
		},
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	want := `PEER       CHECKS                        RTT p50   RTT p99   VERDICT
(local)    doctor:ok                     -         -         ok
10.9.0.1   route:ok ping:ok              0.500 ms  1.200 ms  ok
10.9.0.77  route:ok ping:FAIL demo:skip  -         -         FAILED
10.9.0.77: ping: timed out after 5s
10.9.0.77: hint: the neighbour did not answer ARP
1 of 2 peers passed
`
	if b.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteJUnitParses(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, b.String())
	}
	if doc.Tests != 6 || doc.Failures != 1 || doc.Skipped != 1 || len(doc.Suites) != 3 {
		t.Fatalf("counts: tests=%d failures=%d skipped=%d suites=%d", doc.Tests, doc.Failures, doc.Skipped, len(doc.Suites))
	}
	failed := doc.Suites[2].Cases[1]
	if doc.Suites[2].Name != "10.9.0.77" || failed.Failure == nil || !strings.Contains(failed.Failure.Text, "hint: the neighbour") {
		t.Fatalf("failing case = %+v", failed)
	}
}

func TestWritePrometheusParses(t *testing.T) {
	var b bytes.Buffer
	if err := WritePrometheus(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("textfile does not parse: %v\n%s", err, b.String())
	}
	ok := fams["rdmactl_smoke_ok"]
	if ok == nil || len(ok.Metric) != 2 || ok.Metric[0].GetGauge().GetValue() != 1 || ok.Metric[1].GetGauge().GetValue() != 0 {
		t.Fatalf("rdmactl_smoke_ok = %v", ok)
	}
	rtt := fams["rdmactl_ping_rtt_seconds"]
	if rtt == nil || len(rtt.Metric) != 1 || rtt.Metric[0].GetSummary().GetSampleCount() != 10 || len(rtt.Metric[0].GetSummary().Quantile) != 3 {
		t.Fatalf("rdmactl_ping_rtt_seconds = %v", rtt)
	}
}

func TestReadPeers(t *testing.T) {
	in := "# lab\n10.9.0.1 node-a\n\n  fd09::2  # b\nnode-c.example\n"
	got, err := ReadPeers(strings.NewReader(in), "hosts")
	if err != nil || strings.Join(got, ",") != "10.9.0.1,fd09::2,node-c.example" {
		t.Fatalf("ReadPeers = %v, %v", got, err)
	}
	_, err = ReadPeers(strings.NewReader("10.9.0.1\nbad_host!\n"), "hosts")
	if err == nil || err.Error() != `hosts:2: "bad_host!" is not an IP address or host name (one peer per line)` {
		t.Fatalf("bad line error = %v", err)
	}
}

func TestReportJSONSchema(t *testing.T) {
	var b bytes.Buffer
	r := sampleReport()
	r.Peers[0].Checks = append(r.Peers[0].Checks, Result{Check: "demo", OK: true, Seconds: 0.9, Message: "ok"})
	if err := cli.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("smoke", b.Bytes()); err != nil {
		t.Errorf("%s: against its schema: %v", b.String(), err)
	}
	empty := Report{Local: []Result{}, Peers: []PeerReport{}}
	b.Reset()
	if err := cli.WriteJSON(&b, empty); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("smoke", b.Bytes()); err != nil {
		t.Errorf("%s: against its schema: %v", b.String(), err)
	}
}

// JUnit viewers split the classname at its dots: the address stays out of
// it (it names the suite and the case instead).
func TestJUnitClassnameHoldsNoAddress(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if strings.Contains(c.ClassName, "10.9") || (c.ClassName != "rdmactl.smoke.local" && c.ClassName != "rdmactl.smoke.peer") {
				t.Errorf("suite %s case %q: classname %q", s.Name, c.Name, c.ClassName)
			}
			if s.Name != "local" && c.Name != strings.Fields(c.Name)[0]+" "+s.Name {
				t.Errorf("suite %s: case name %q does not name the peer", s.Name, c.Name)
			}
		}
	}
}

// The textfile says when the run ended and how long it took, so that an
// alert can fire on results that stopped coming.
func TestPrometheusLastRunGauges(t *testing.T) {
	r := sampleReport()
	r.Start, r.Duration = time.Unix(1700000000, 0), 6500*time.Millisecond
	var b bytes.Buffer
	if err := WritePrometheus(&b, r); err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"rdmactl_smoke_last_run_timestamp_seconds": 1700000006.5,
		"rdmactl_smoke_last_run_duration_seconds":  6.5,
	} {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != want {
			t.Errorf("%s = %v, want %v\n%s", name, f, want, b.String())
		}
	}
	r = Run(context.Background(), Plan{PerPeer: []Check{{Name: "ping", Run: pass}}, Peers: []string{"a"}})
	if r.Start.IsZero() || r.Duration <= 0 {
		t.Errorf("Run sets no start or duration: %v %v", r.Start, r.Duration)
	}
}

func TestUniquePeers(t *testing.T) {
	got := UniquePeers([]string{"::ffff:10.9.0.1", "10.9.0.1", "node1", "NODE1", "10.9.0.2", "::ffff:10.9.0.2"})
	if strings.Join(got, ",") != "10.9.0.1,node1,10.9.0.2" {
		t.Errorf("UniquePeers = %v", got)
	}
}

// On a terminal each peer's row comes as the peer finishes, aligned as
// the whole table is; files and JSON keep the table's order.
func TestTableStreamsRowsAsPeersFinish(t *testing.T) {
	release := make(chan struct{})
	check := func(ctx context.Context, peer string) Result {
		if peer == "10.9.0.1" {
			<-release // the first peer finishes last
		}
		if peer == "10.9.0.22" {
			return Result{Message: "down"}
		}
		return Result{OK: true}
	}
	var out bytes.Buffer
	peers := []string{"10.9.0.1", "10.9.0.22", "10.9.0.3"}
	s := NewTableStream(&out, peers, []string{"route", "ping"}, false)
	var rows []string
	plan := Plan{PerPeer: []Check{{Name: "route", Run: check}, {Name: "ping", Run: check}}, Peers: peers, Concurrency: 3,
		OnLocal: s.Local,
		OnPeer: func(p PeerReport) {
			s.Peer(p)
			rows = append(rows, p.Peer)
			if len(rows) == 2 {
				if !strings.Contains(out.String(), p.Peer) {
					t.Errorf("row of %s not written when it finished:\n%s", p.Peer, out.String())
				}
				close(release)
			}
		}}
	r := Run(context.Background(), plan)
	if err := s.Finish(r); err != nil {
		t.Fatal(err)
	}
	if rows[2] != "10.9.0.1" {
		t.Errorf("rows came in order %v, want 10.9.0.1 last", rows)
	}
	for i, p := range r.Peers {
		if p.Peer != peers[i] {
			t.Errorf("report order %v, want %v", r.Peers, peers)
		}
	}
	lines := strings.Split(out.String(), "\n")
	var whole bytes.Buffer
	if err := WriteTable(&whole, r); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(whole.String(), "10.9.0.1 "), strings.Index(whole.String(), "10.9.0.3 "); i < 0 || j < i {
		t.Errorf("the whole table is not in the peers' order:\n%s", whole.String())
	}
	col := func(line, word string) int { return strings.Index(line, word) }
	for _, l := range lines[1:4] {
		if col(l, "route:") != col(lines[0], "CHECKS") {
			t.Errorf("row %q not aligned with header %q", l, lines[0])
		}
	}
	if !strings.HasSuffix(out.String(), "10.9.0.22: ping: down\n2 of 3 peers passed\n") {
		t.Errorf("stream does not end with the failures and summary:\n%s", out.String())
	}
}
