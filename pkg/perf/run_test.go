package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// runOn runs o on v, printing to out and errOut.
func runOn(o Options, v rdma.Verbs, out, errOut io.Writer) error {
	o.IO, o.Verbs = cli.Test(nil, out, errOut), v
	return Run(context.Background(), &o)
}

// runBoth runs a server and a client of opts over loopback TCP.
func runBoth(t *testing.T, o Options) (srv, cli string) {
	t.Helper()
	srv, cli, serr, cerr := runPair(t, newFabric(), o)
	if cerr != nil {
		t.Fatalf("client: %v", cerr)
	}
	if serr != nil {
		t.Fatalf("server: %v", serr)
	}
	return srv, cli
}

// runPair runs a server and a client of o on v and returns what each
// printed and returned. A latency test's messages take 10 µs on v.
func runPair(t *testing.T, v *rdmatest.Fabric, o Options) (srv, cli string, serr, cerr error) {
	t.Helper()
	var serrOut, cerrOut bytes.Buffer
	return runPairOut(t, v, o, &serrOut, &cerrOut)
}

// runPairOut is runPair with each side's stderr kept in serrOut and
// cerrOut.
func runPairOut(t *testing.T, v *rdmatest.Fabric, o Options, serrOut, cerrOut *bytes.Buffer) (srv, cli string, serr, cerr error) {
	t.Helper()
	return runSides(t, v, o, o, serrOut, cerrOut)
}

// runSides is runPairOut with options of each side's own: so for the
// server, o for the client.
func runSides(t *testing.T, v *rdmatest.Fabric, so, o Options, serrOut, cerrOut *bytes.Buffer) (srv, cli string, serr, cerr error) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.TCPPort = ln.Addr().(*net.TCPAddr).Port
	so.TCPPort = o.TCPPort
	ln.Close()
	if o.Test.Latency() {
		v.SetWireTime(latencyWire)
	}
	var sout, cout bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- runOn(so, v, &sout, serrOut) }()
	o.Server = "127.0.0.1"
	for i := 0; ; i++ {
		cout.Reset()
		cerrOut.Reset()
		cerr = runOn(o, v, &cout, cerrOut)
		// The server is not listening yet: TCP refuses, rdma_cm rejects.
		var ce *cmEventError
		refused := errors.Is(cerr, syscall.ECONNREFUSED) || errors.As(cerr, &ce) && ce.got.Type == rdma.CMEventRejected
		if !refused || i == 100 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if cerr != nil {
		// A failed client may leave the server waiting for the next step:
		// it is given a moment to fail too (a test that restores package
		// state after it must not race a server still running).
		select {
		case serr = <-done:
			return sout.String(), cout.String(), serr, cerr
		case <-time.After(2 * time.Second):
			return "", cout.String(), nil, cerr
		}
	}
	serr = <-done
	return sout.String(), cout.String(), serr, nil
}

func TestFlowsPairUp(t *testing.T) {
	for _, test := range []Test{WriteBW, ReadBW, SendBW, SendLat, WriteLat, ReadLat} {
		t.Run(test.String(), func(t *testing.T) {
			srv, cli := runBoth(t, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50})
			if !strings.HasPrefix(srv, "\n************************************\n* Waiting for client to connect... *\n") {
				t.Errorf("server does not open with perftest's banner:\n%s", srv)
			}
			for side, out := range map[string]string{"server": srv, "client": cli} {
				if !strings.Contains(out, " local address: LID 0000 QPN 0x001") || !strings.Contains(out, " remote address: LID 0000 QPN 0x001") {
					t.Errorf("%s lacks the address lines:\n%s", side, out)
				}
				if !strings.HasSuffix(out, resultLine) {
					t.Errorf("%s does not end with the result line:\n%s", side, out)
				}
			}
			switch test {
			case WriteBW, ReadBW:
				row := " 65536      50               62.50              62.50  \t\t   0.001000\n"
				if !strings.Contains(cli, row) || !strings.Contains(srv, row) {
					t.Errorf("both sides should print the client's row %q:\nserver:\n%s\nclient:\n%s", row, srv, cli)
				}
			case SendLat, WriteLat:
				row := " 2       50          10.00          10.00        10.00  "
				if !strings.Contains(cli, row) || !strings.Contains(srv, row) {
					t.Errorf("both sides should print %q:\nserver:\n%s\nclient:\n%s", row, srv, cli)
				}
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	_, cli := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, JSON: true})
	for _, want := range []string{`"test":"send_lat"`, `"role":"client"`, `"t_typical_usec":10`, `"usec_per_iteration"`, `"gid":"::ffff:127.0.0.1"`} {
		if !strings.Contains(cli, want) {
			t.Errorf("JSON lacks %s:\n%s", want, cli)
		}
	}
	if strings.Contains(cli, "#bytes") {
		t.Errorf("--json printed the table too:\n%s", cli)
	}
	if err := schema.Validate("perf", []byte(cli)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	_, dur := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Duration: time.Second, JSON: true})
	if !strings.Contains(dur, `"latency_duration":[{`) {
		t.Errorf("-D --json lacks latency_duration:\n%s", dur)
	}
	if err := schema.Validate("perf", []byte(dur)); err != nil {
		t.Errorf("-D against its schema: %v", err)
	}
}

func TestRunRefusesEmptyGID(t *testing.T) {
	err := runOn(Options{Test: WriteBW, GIDIndex: 5, IBPort: 1, Server: "127.0.0.1", TCPPort: 1}, newFabric(), &bytes.Buffer{}, &bytes.Buffer{})
	if cli.HintOf(err) == "" || !strings.Contains(err.Error(), "GID index 5") {
		t.Fatalf("got %v", err)
	}
}

// TestWriteBWServerStaysOut: in write_bw only the client moves data, one
// stream per size, and the server prints the row the client sent it.
func TestWriteBWServerStaysOut(t *testing.T) {
	v := newFabric()
	_, cli, serr, cerr := runPair(t, v, Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 20, All: true})
	if serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v", serr, cerr)
	}
	if n := v.Posts(rdma.WRRDMAWrite); n != 23*20 || strings.Count(cli, "\t\t   ") != 23 {
		t.Errorf("%d writes and %d rows for -a, want 23 × 20 writes (the client's alone) and 23 rows:\n%s", n, strings.Count(cli, "\t\t   "), cli)
	}
}

// TestSendLatBusyPollNeverSleeps: with --busy-poll the CQs get no
// completion channel (rdmatest's Await then fails), so the latency loop
// must have polled every completion.
func TestSendLatBusyPollNeverSleeps(t *testing.T) {
	srv, cli := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, BusyPoll: true})
	row := " 2       50          10.00          10.00        10.00  "
	if !strings.Contains(cli, row) || !strings.Contains(srv, row) {
		t.Errorf("both sides should print %q:\nserver:\n%s\nclient:\n%s", row, srv, cli)
	}
}

// TestRequestLatBusyPoll: read_lat's and atomic_lat's --busy-poll loop
// (the endpoint's RequestPingPong) posts one request a round trip, prints
// the row, and names the request that failed.
func TestRequestLatBusyPoll(t *testing.T) {
	for _, c := range []struct {
		test Test
		op   rdma.WROpcode
		name string
	}{{ReadLat, rdma.WRRDMARead, "RDMA_READ"}, {AtomicLat, rdma.WRAtomicFetchAndAdd, "ATOMIC"}} {
		v := newFabric()
		_, cl, serr, cerr := runPair(t, v, Options{Test: c.test, GIDIndex: 1, IBPort: 1, Iters: 50, BusyPoll: true})
		if serr != nil || cerr != nil || !regexp.MustCompile(`(?m)^ \d+ +50 +`).MatchString(cl) || v.Posts(c.op) != 50 {
			t.Errorf("%s: %v %v, %d posts:\n%s", c.test, serr, cerr, v.Posts(c.op), cl)
		}
		v = newFabric()
		v.FailNextCompletion(rdma.WCRemAccessErr)
		_, _, _, cerr = runPair(t, v, Options{Test: c.test, GIDIndex: 1, IBPort: 1, Iters: 50, BusyPoll: true, Timeout: 2 * time.Second})
		if cerr == nil || !strings.Contains(cerr.Error(), c.name+" request 1 of 50: ") {
			t.Errorf("%s: a failed completion: %v", c.test, cerr)
		}
	}
}

// TestWriteLatBusyPoll: write_lat's --busy-poll loop (the endpoint's
// WritePingPong) makes 50 round trips a side, prints the row on both, and
// names the write that failed.
func TestWriteLatBusyPoll(t *testing.T) {
	v := newFabric()
	srv, cl, serr, cerr := runPair(t, v, Options{Test: WriteLat, GIDIndex: 1, IBPort: 1, Iters: 50, BusyPoll: true})
	row := regexp.MustCompile(`(?m)^ \d+ +50 +`)
	if serr != nil || cerr != nil || !row.MatchString(cl) || !row.MatchString(srv) || v.Posts(rdma.WRRDMAWrite) != 2*50 {
		t.Errorf("%v %v, %d writes:\nserver:\n%s\nclient:\n%s", serr, cerr, v.Posts(rdma.WRRDMAWrite), srv, cl)
	}
	v = newFabric()
	v.FailNextCompletion(rdma.WCRemAccessErr)
	_, _, serr, cerr = runPair(t, v, Options{Test: WriteLat, GIDIndex: 1, IBPort: 1, Iters: 50, BusyPoll: true, Timeout: 2 * time.Second})
	if serr == nil || !strings.Contains(serr.Error(), "write 1 of 50: ") {
		t.Errorf("the server writes first, so its first write should fail: server %v, client %v", serr, cerr)
	}
}

// TestSendLatNoReceiveHint: a SEND that finds no receive ends in the
// RNR completion error and the hint that names the cause.
func TestSendLatNoReceiveHint(t *testing.T) {
	v := newFabric()
	v.FailNextCompletion(rdma.WCRNRRetryErr)
	_, _, _, cerr := runPair(t, v, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, Timeout: 2 * time.Second})
	if !strings.Contains(cli.HintOf(cerr), "no receive posted") {
		t.Fatalf("client error %v, want the RNR hint", cerr)
	}
}

// TestBWTwoQPs: -q 2 exchanges and prints a record per QP, streams on
// both QPs (each into its own peer QP's span, where send_bw's server posts
// the QP's receives) and reports iters × QPs messages on both sides, as
// perftest's bandwidth tests with -q 2.
func TestBWTwoQPs(t *testing.T) {
	for _, test := range []Test{WriteBW, ReadBW, SendBW} {
		v := newFabric()
		srv, cli, serr, cerr := runPair(t, v, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50, QPs: 2})
		if serr != nil || cerr != nil {
			t.Fatalf("%s: server %v, client %v", test, serr, cerr)
		}
		if n := v.Posts(opcodeOf(test, "")); n != 2*50 {
			t.Errorf("%s posted %d requests, want 50 on each of 2 QPs", test, n)
		}
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if l, r := strings.Count(out, " local address:"), strings.Count(out, " remote address:"); l != 2 || r != 2 {
				t.Errorf("%s %s printed %d local and %d remote records, want 2 each:\n%s", test, side, l, r, out)
			}
			if !strings.Contains(out, " Number of qps   : 2") {
				t.Errorf("%s %s header lacks the QP count:\n%s", test, side, out)
			}
			if !strings.Contains(out, " 65536      100 ") {
				t.Errorf("%s %s row should count 2 × 50 messages:\n%s", test, side, out)
			}
		}
	}
}

// TestJSONTwoQPs: with -q 2 the document lists both QPs' records, each
// side's local QP the other's remote, QP 0's also as local/remote.
func TestJSONTwoQPs(t *testing.T) {
	srv, cli, serr, cerr := runPair(t, newFabric(), Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, QPs: 2, JSON: true})
	if serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v", serr, cerr)
	}
	var docs [2]Result
	for i, out := range []string{srv, cli} {
		if err := schema.Validate("perf", []byte(out)); err != nil {
			t.Errorf("against its schema: %v\n%s", err, out)
		}
		if err := json.Unmarshal([]byte(out), &docs[i]); err != nil {
			t.Fatal(err)
		}
		if d := docs[i]; len(d.QPPairs) != 2 || d.QPPairs[0].Local != d.Local || d.QPPairs[0].Remote != d.Remote || d.QPPairs[0].Local.QPN == d.QPPairs[1].Local.QPN {
			t.Errorf("qp_pairs should hold two distinct QPs, the first as local/remote:\n%s", out)
		}
	}
	for i := range 2 {
		if s, c := docs[0].QPPairs[i], docs[1].QPPairs[i]; s.Local != c.Remote || s.Remote != c.Local {
			t.Errorf("QP %d: server %+v, client %+v: each side's local should be the other's remote", i, s, c)
		}
	}
}

func TestResolveQPs(t *testing.T) {
	for _, o := range []Options{{Test: SendLat, QPs: 2}, {Test: ReadLat, QPs: 2}, {Test: WriteBW, QPs: 17}, {Test: WriteBW, QPs: -1}} {
		if _, err := o.Resolve(); err == nil || !strings.Contains(err.Error(), "-q") {
			t.Errorf("%s -q %d: got %v, want a -q error", o.Test, o.QPs, err)
		}
	}
	for _, tst := range []Test{ReadBW, SendBW} {
		if r, err := (Options{Test: tst, QPs: 4}).Resolve(); err != nil || r.QPs != 4 {
			t.Errorf("%s -q 4: %+v, %v", tst, r.QPs, err)
		}
	}
}

// TestSendBWDuration: send_bw -D on two QPs: the client streams for the
// duration, the server receives on both QPs from its first message for
// the duration (re-posting as they arrive) and each prints a row.
func TestSendBWDuration(t *testing.T) {
	v := newFabric()
	srv, cli, serr, cerr := runPair(t, v, Options{Test: SendBW, GIDIndex: 1, IBPort: 1, Duration: time.Second, QPs: 2})
	if serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v", serr, cerr)
	}
	row := regexp.MustCompile(`(?m)^ 65536      ([1-9]\d*) `)
	for side, out := range map[string]string{"server": srv, "client": cli} {
		if !row.MatchString(out) || !strings.HasSuffix(out, resultLine) {
			t.Errorf("%s printed no row of messages counted:\n%s", side, out)
		}
	}
}

// TestSendBWDurationEndsAtItsTime: a timed client ends at its time, as
// perftest's, without waiting for the requests in flight then: here the
// server's time ended first (-D 1 against the client's -D 2) and it takes
// no more, so they would wait for ever (the fabric's sends wait for a
// receive without end, as RNR retry 7 does).
func TestSendBWDurationEndsAtItsTime(t *testing.T) {
	so := Options{Test: SendBW, GIDIndex: 1, IBPort: 1, Duration: time.Second, RxDepth: 2, Timeout: 5 * time.Second}
	co := so
	co.Duration = 2 * time.Second
	var serrOut, cerrOut bytes.Buffer
	began := time.Now()
	srv, cli, serr, cerr := runSides(t, newFabric(), so, co, &serrOut, &cerrOut)
	if serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v\n%s%s", serr, cerr, serrOut.String(), cerrOut.String())
	}
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("the pair took %v for a 2 s run", took)
	}
	row := regexp.MustCompile(`(?m)^ 65536      ([1-9]\d*) `)
	for side, out := range map[string]string{"server": srv, "client": cli} {
		if !row.MatchString(out) {
			t.Errorf("%s printed no row of messages counted:\n%s", side, out)
		}
	}
}

// TestLatencyDuration: -D runs each latency test for the duration and
// prints perftest's duration table (t_avg and tps) on both sides.
func TestLatencyDuration(t *testing.T) {
	for _, test := range []Test{SendLat, WriteLat, ReadLat} {
		for _, busy := range []bool{false, true} {
			srv, cli := runBoth(t, Options{Test: test, GIDIndex: 1, IBPort: 1, Duration: time.Second, BusyPoll: busy})
			row := regexp.MustCompile(`(?m)^ 2             ([1-9]\d*)            \d+\.\d\d *        \d+\.\d\d *$`)
			for side, out := range map[string]string{"server": srv, "client": cli} {
				if test == ReadLat && side == "server" {
					continue // ib_read_lat's server prints no table
				}
				if !strings.Contains(out, latDurHeadr) || !row.MatchString(out) {
					t.Errorf("%s (busy %v) %s printed no duration row:\n%s", test, busy, side, out)
				}
			}
		}
	}
	if _, err := (Options{Test: SendLat, Duration: time.Second, All: true}).Resolve(); err == nil {
		t.Error("-D with -a should be refused")
	}
}

func TestResolveRxDepth(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want int
	}{
		{Options{Test: SendBW}, 512},
		{Options{Test: SendBW, RxDepth: 16}, 16},
		{Options{Test: SendBW, RxDepth: 7}, 8},                 // perftest's odd-depth work-around
		{Options{Test: SendBW, RxDepth: 600, Iters: 100}, 100}, // at most the iterations
		{Options{Test: SendLat, RxDepth: 4}, 4},
		{Options{Test: WriteBW, RxDepth: 1}, 1},
		{Options{Test: WriteBW}, 1},
	} {
		r, err := c.o.Resolve()
		if err != nil || r.RxDepth != c.want {
			t.Errorf("%s -r %d: got %d, %v; want %d", c.o.Test, c.o.RxDepth, r.RxDepth, err, c.want)
		}
	}
	for _, o := range []Options{{Test: SendBW, RxDepth: -1}, {Test: SendBW, RxDepth: 16385}, {Test: ReadBW, RxDepth: 2}, {Test: ReadLat, RxDepth: 2}, {Test: WriteBW, RxDepth: 64}, {Test: WriteLat, RxDepth: 2}} {
		if _, err := o.Resolve(); err == nil || !strings.HasPrefix(err.Error(), "-r ") {
			t.Errorf("%s -r %d: got %v, want a -r error", o.Test, o.RxDepth, err)
		}
	}
}

// TestSendSmallRxDepth: send_bw and send_lat with -r 2 re-post their two
// receives as messages arrive, on one QP and (send_bw) on two.
func TestSendSmallRxDepth(t *testing.T) {
	for _, o := range []Options{{Test: SendBW, QPs: 1}, {Test: SendBW, QPs: 2}, {Test: SendLat, QPs: 1}} {
		o.GIDIndex, o.IBPort, o.Iters, o.RxDepth = 1, 1, 50, 2
		srv, cli, serr, cerr := runPair(t, newFabric(), o)
		if serr != nil || cerr != nil {
			t.Fatalf("%s -q %d -r 2: server %v, client %v", o.Test, o.QPs, serr, cerr)
		}
		if !strings.Contains(srv, " RX depth        : 2\n") {
			t.Errorf("%s -q %d: the server's header should show RX depth 2:\n%s", o.Test, o.QPs, srv)
		}
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if !strings.HasSuffix(out, resultLine) {
				t.Errorf("%s -q %d %s:\n%s", o.Test, o.QPs, side, out)
			}
		}
	}
}

// TestQPCountMismatchNamed: -q 2 against -q 1 says that -q differs (it
// said that both sides must run the same test), from whichever side sees
// it: the side with more QPs gets the first record again, the other an
// unknown QP's record where it expected a sync point.
func TestQPCountMismatchNamed(t *testing.T) {
	for _, qps := range [][2]int{{1, 2}, {2, 1}} {
		v := newFabric()
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		o := Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, TCPPort: port, Timeout: 2 * time.Second}
		so, co := o, o
		so.QPs, co.QPs, co.Server = qps[0], qps[1], "127.0.0.1"
		done := make(chan error, 1)
		go func() { done <- runOn(so, v, io.Discard, io.Discard) }()
		var cerr error
		for i := 0; i < 100; i++ {
			if cerr = runOn(co, v, io.Discard, io.Discard); !errors.Is(cerr, syscall.ECONNREFUSED) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		serr := <-done
		named := 0
		for _, err := range []error{serr, cerr} {
			if cli.HintOf(err) == "give both sides the same -q" {
				named++
			} else if err == nil {
				t.Errorf("server -q %d, client -q %d: a side ended without error", qps[0], qps[1])
			}
		}
		if named == 0 {
			t.Errorf("server -q %d, client -q %d: server %v, client %v; want the -q hint", qps[0], qps[1], serr, cerr)
		}
	}
}

// TestOutputPrintsOneNumber: --output=bandwidth and --output=latency
// print the average alone on each side, as perftest does.
func TestOutputPrintsOneNumber(t *testing.T) {
	one := regexp.MustCompile(`^\d+\.\d{6}\n$`)
	for _, o := range []Options{
		{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, Output: "bandwidth"},
		{Test: SendBW, GIDIndex: 1, IBPort: 1, Iters: 50, Output: "message_rate"},
		{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, Output: "latency"},
	} {
		srv, cli := runBoth(t, o)
		if !one.MatchString(srv) || !one.MatchString(cli) {
			t.Errorf("%s --output=%s: server %q, client %q", o.Test, o.Output, srv, cli)
		}
	}
}

// TestParserLinesAsPerftest: -Q above 1 on messages above 8192 bytes
// prints perftest's warning first (before the server's banner), and -e
// names the completion channel under the title, as ib_*_bw prints them.
func TestParserLinesAsPerftest(t *testing.T) {
	srv, cli := runBoth(t, Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, CQModeration: 4})
	warn := resultLine + "Warning: Large message requested and CQ moderation enabled\nWarning: It can lead to inaccurate results\n"
	if !strings.HasPrefix(srv, warn+"\n****") || !strings.HasPrefix(cli, warn+resultLine) || !strings.Contains(cli, " CQ Moderation   : 4\n") {
		t.Errorf("-Q 4 of 65536 bytes:\nserver %q\nclient %q", srv[:min(len(srv), 300)], cli[:min(len(cli), 300)])
	}
	srv, cli = runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, Events: true})
	for _, out := range []string{srv, cli} {
		if !regexp.MustCompile(`                    Send Latency Test\n Test with events. Using \w+_comp0\n Dual-port`).MatchString(out) {
			t.Errorf("-e header:\n%s", out)
		}
	}
}

// TestAtomicTests: atomic_bw and atomic_lat run as read_bw and read_lat
// do, on 8 bytes, with the operation of -A in the title and no RKey or
// OUT in the address lines (as ib_atomic_bw and ib_atomic_lat print).
func TestAtomicTests(t *testing.T) {
	for _, c := range []struct {
		test   Test
		atomic string
		title  string
	}{
		{AtomicBW, "", "Atomic FETCH_AND_ADD BW Test"},
		{AtomicBW, CmpAndSwap, "Atomic CMP_AND_SWAP BW Test"},
		{AtomicLat, FetchAndAdd, "Atomic FETCH_AND_ADD Latency Test"},
	} {
		srv, cli := runBoth(t, Options{Test: c.test, AtomicType: c.atomic, GIDIndex: 1, IBPort: 1, Iters: 50})
		row := regexp.MustCompile(`(?m)^ 8 +(50|100) `)
		if !strings.Contains(cli, "                    "+c.title+"\n") || !row.MatchString(cli) || !strings.Contains(cli, " Outstand reads  : ") {
			t.Errorf("%s -A %s client:\n%s", c.test, c.atomic, cli)
		}
		if strings.Contains(srv+cli, " RKey ") || strings.Contains(srv+cli, " OUT ") {
			t.Errorf("%s: address lines with RKey or OUT:\n%s", c.test, cli)
		}
	}
	if _, err := (Options{Test: AtomicBW, Size: 16}).Resolve(); err == nil {
		t.Error("atomic_bw -s 16 was taken")
	}
}

// TestPostListAsPerftest: -l 4 moderates the CQ by the list unless -Q
// says otherwise, says so first, and names the list in the title and the
// header, as ib_write_bw -l 4; perftest's refusals hold.
func TestPostListAsPerftest(t *testing.T) {
	srv, cli := runBoth(t, Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 100, PostList: 4})
	first := resultLine + "Post List requested - CQ moderation will be the size of the post list\n"
	for _, out := range []string{srv, cli} {
		if !strings.HasPrefix(out, first) || !strings.Contains(out, "                    RDMA_Write Post List BW Test\n") ||
			!strings.Contains(out, " Post List       : 4\n CQ Moderation   : 4\n") {
			t.Errorf("-l 4:\n%s", out)
		}
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: WriteBW, Iters: 102, PostList: 4}, "Number of iterations must be a multiple of post list size"},
		{Options{Test: WriteBW, Iters: 100, PostList: 4, CQModeration: 3}, "Post list size must be a multiple of CQ moderation"},
		{Options{Test: WriteLat, Iters: 100, PostList: 4}, "Post list is supported in BW tests only"},
	} {
		if _, err := c.o.Resolve(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	r, err := Options{Test: WriteBW, Iters: 100, PostList: 4, CQModeration: 2}.Resolve()
	if err != nil || r.CQMod != 2 {
		t.Errorf("-l 4 -Q 2: CQ moderation %d, %v", r.CQMod, err)
	}
}
