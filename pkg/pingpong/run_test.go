package pingpong

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/counters/counterstest"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type side struct {
	out, errOut bytes.Buffer
	err         error
}

func options(f *rdmatest.Fabric, k Kind, port int, s *side) *Options {
	return &Options{
		IO: &cli.IOStreams{Out: &s.out, ErrOut: &s.errOut}, Verbs: f, Kind: k, Port: port, Device: "rxe0", IBPort: 1,
		Size: k.DefaultSize(), MTU: DefaultMTU, RxDepth: DefaultRxDepth, Iters: 50, GIDIndex: 3, NumQP: 4,
		Timeout: 5 * time.Second,
	}
}

// pair runs a server and a client on one fabric, each options edited
// by its function, and waits for both.
func pair(t *testing.T, f *rdmatest.Fabric, k Kind, server, client func(*Options)) (*side, *side) {
	t.Helper()
	port := freePort(t)
	var srv, cli side
	so, co := options(f, k, port, &srv), options(f, k, port, &cli)
	co.Server = "127.0.0.1"
	if server != nil {
		server(so)
	}
	if client != nil {
		client(co)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.err = Run(context.Background(), so) }()
	// The client retries until the server listens.
	deadline := time.Now().Add(5 * time.Second)
	for {
		cli.out.Reset()
		cli.errOut.Reset()
		cli.err = Run(context.Background(), co)
		if cli.err == nil || !strings.Contains(cli.errOut.String(), "Couldn't connect") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	return &srv, &cli
}

var (
	addrLine   = `  (local|remote) address: +LID 0x[0-9a-f]{4}, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}[,:] GID ::ffff:10\.9\.0\.1\n`
	resultRE   = regexp.MustCompile(`^(` + addrLine + `)+\d+ bytes in \d+\.\d\d seconds = [\d.]+ Mbit/sec\n50 iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter\n$`)
	udLocalRE  = regexp.MustCompile(`local address:  LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}: GID`)
	udRemoteRE = regexp.MustCompile(`remote address: LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID`)
)

func TestEveryTypePingPongs(t *testing.T) {
	for _, k := range Kinds {
		for _, events := range []bool{false, true} {
			t.Run(k.String()+map[bool]string{false: "", true: "-e"}[events], func(t *testing.T) {
				f := rdmatest.NewFabric()
				f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
				ev := func(o *Options) { o.Events = events; o.Check = true }
				srv, cli := pair(t, f, k, ev, ev)
				for name, s := range map[string]*side{"server": srv, "client": cli} {
					if s.err != nil || s.errOut.Len() > 0 {
						t.Fatalf("%s: %v, stderr %q", name, s.err, s.errOut.String())
					}
					if !resultRE.MatchString(s.out.String()) {
						t.Errorf("%s printed\n%s", name, s.out.String())
					}
					lines := strings.Count(s.out.String(), "address:")
					if want := map[Kind]int{SRQ: 8}[k]; want != 0 && lines != want || want == 0 && lines != 2 {
						t.Errorf("%s: %d address lines", name, lines)
					}
				}
				if k == UD && (!udLocalRE.MatchString(cli.out.String()) || !udRemoteRE.MatchString(cli.out.String())) {
					t.Errorf("ud address lines:\n%s", cli.out.String())
				}
				if want := map[Kind]string{UD: "102400 bytes", SRQ: "409600 bytes"}[k]; want != "" && !strings.Contains(cli.out.String(), want) {
					t.Errorf("want %q in\n%s", want, cli.out.String())
				}
			})
		}
	}
}

// A single QP signals one send in sendsPerSignal and its last (the 16th,
// 32nd, 48th and 50th of each side here); srq's QPs signal each, as the
// tools do. Either way each run ends once its last send completed.
func TestOneSendInSixteenIsSignaledOnASingleQP(t *testing.T) {
	for _, k := range Kinds {
		t.Run(k.String(), func(t *testing.T) {
			f := rdmatest.NewFabric()
			f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
			srv, cli := pair(t, f, k, nil, nil)
			if srv.err != nil || cli.err != nil {
				t.Fatalf("server %v, client %v", srv.err, cli.err)
			}
			sends := f.Posts(rdma.WRSend)
			want := 2 * 4
			if k == SRQ {
				want = sends
			}
			if sends != 100 || f.SignaledPosts() != want {
				t.Errorf("%d sends, %d signaled; want 100 and %d", sends, f.SignaledPosts(), want)
			}
		})
	}
}

// Receives run low every few messages here, so the loop tops up all
// through the run: at the smallest depth before it answers, as the tools
// do, and above it, with a receive left for each QP, after. A top-up that
// posts too few stalls the run, on UC and UD by a dropped message.
func TestSmallReceiveQueuesTopUpWithoutLosingAMessage(t *testing.T) {
	for _, k := range Kinds {
		least := 1
		if k == SRQ {
			least = 4 // one receive per QP
		}
		for _, depth := range []int{least, least + 2} {
			t.Run(fmt.Sprintf("%s-r%d", k, depth), func(t *testing.T) {
				f := rdmatest.NewFabric()
				f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
				edit := func(o *Options) { o.RxDepth, o.Check = depth, true }
				srv, cli := pair(t, f, k, edit, edit)
				for name, s := range map[string]*side{"server": srv, "client": cli} {
					if s.err != nil || s.errOut.Len() > 0 || !resultRE.MatchString(s.out.String()) {
						t.Fatalf("%s: %v, stderr %q, printed\n%s", name, s.err, s.errOut.String(), s.out.String())
					}
				}
			})
		}
	}
}

func TestJSONAndStatsValidateTheBuffers(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	srv, cli := pair(t, f, RC, func(o *Options) { o.Stats = true; o.Size = 3 * 4096 }, func(o *Options) { o.JSON = true; o.Size = 3 * 4096 })
	if srv.err != nil || cli.err != nil {
		t.Fatalf("server %v client %v %s", srv.err, cli.err, cli.errOut.String())
	}
	var doc Document
	if err := json.Unmarshal(cli.out.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, cli.out.String())
	}
	if err := schema.Validate("pingpong", cli.out.Bytes()); err != nil {
		t.Errorf("schema: %v\n%s", err, cli.out.String())
	}
	if !doc.OK || !doc.Validated || doc.Role != "client" || doc.Latency == nil || doc.Latency.Count != 50 || *doc.GIDIndex != 3 || len(doc.Remote) != 1 {
		t.Errorf("document %s", cli.out.String())
	}
	if !strings.Contains(srv.out.String(), "latency usec p50/p90/p99/p99.9 = ") || !strings.Contains(srv.out.String(), "cpu usec per iteration") {
		t.Errorf("server --stats printed\n%s", srv.out.String())
	}
}

func TestGIDAutoPicksTheConnectionsAddress(t *testing.T) {
	f := rdmatest.NewFabric()
	// 127.0.0.1 is the address of the test's TCP connection.
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("127.0.0.1"))
	auto := func(o *Options) { o.GIDIndex, o.GIDAuto, o.JSON = -1, true, true }
	srv, cli := pair(t, f, UD, auto, auto)
	for _, s := range []*side{srv, cli} {
		var doc Document
		if err := json.Unmarshal(s.out.Bytes(), &doc); err != nil || s.err != nil {
			t.Fatalf("%v %v: %s %s", err, s.err, s.out.String(), s.errOut.String())
		}
		if err := schema.ValidateResult("pingpong", s.out.Bytes(), s.ExitCodeOf()); err != nil {
			t.Errorf("schema: %v", err)
		}
		if doc.GIDIndex == nil || *doc.GIDIndex != 3 || doc.Local[0].GID != "::ffff:127.0.0.1" {
			t.Errorf("-g auto chose %s", s.out.String())
		}
	}
}

func TestNoGIDOnRoCEIsAHintNotAnRTRFailure(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("127.0.0.1"))
	var s side
	o := options(f, RC, freePort(t), &s)
	o.GIDIndex, o.Server = -1, "127.0.0.1"
	err := Run(context.Background(), o)
	var h cli.Hinted
	if cli.ExitCode(err) != 1 || !errors.As(err, &h) || !strings.Contains(h.Hint(), "use -g 3 (the RoCE v2 GID of 127.0.0.1") {
		t.Fatalf("client without -g: %v (%T)", err, err)
	}
	if s.out.Len() != 0 || s.errOut.Len() != 0 {
		t.Errorf("printed %q %q before the hint", s.out.String(), s.errOut.String())
	}
	o.Server = ""
	err = Run(context.Background(), o)
	if !errors.As(err, &h) || !strings.Contains(h.Hint(), "use -g 3 (127.0.0.1)") {
		t.Fatalf("server without -g: %v", err)
	}
}

func TestTheToolsFailuresInTheirWords(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(*Options)
		stderr string
	}{
		{"bad device", func(o *Options) { o.Device = "mlx5_9" }, "IB device mlx5_9 not found\n"},
		{"bad -g", func(o *Options) { o.GIDIndex = 99 }, "can't read sgid of index 99\n"},
		{"ud above the MTU", func(o *Options) { o.Kind, o.Size = UD, 2048 }, "Requested size larger than port MTU (1024)\n"},
		{"srq rx depth", func(o *Options) { o.Kind, o.RxDepth = SRQ, 2 }, "rx_depth 2 is too small for 4 QPs -- must have at least one receive per QP.\n"},
		{"no server", func(o *Options) { o.Server = "127.0.0.1" }, "Couldn't connect to 127.0.0.1:%d\n"},
		{"rc -t on a device without timestamps", func(o *Options) { o.Timestamps = true }, "The device isn't completion timestamp capable\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := rdmatest.NewFabric()
			f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
			var s side
			port := freePort(t)
			o := options(f, RC, port, &s)
			c.edit(o)
			err := Run(context.Background(), o)
			want := c.stderr
			if strings.Contains(want, "%d") {
				want = strings.ReplaceAll(want, "%d", strconv.Itoa(port))
			}
			if cli.ExitCode(err) != 1 || !cli.IsSilent(err) || s.errOut.String() != want {
				t.Errorf("%v, stderr %q, want %q", err, s.errOut.String(), want)
			}
		})
	}
}

func TestAnErrorCompletionIsTheToolsFailedStatus(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	f.FailNextCompletion(rdma.WCRetryExcErr)
	srv, cli := pair(t, f, RC, func(o *Options) { o.Timeout = 300 * time.Millisecond }, nil)
	if cli.errOut.String() != "Failed status transport retry counter exceeded (12) for wr_id 2\nparse WC failed 1\n" || cli.ExitCodeOf() != 1 {
		t.Errorf("client: %v %q", cli.err, cli.errOut.String())
	}
	// The server, left without its peer, gives up at --timeout.
	if srv.err == nil || !strings.Contains(srv.err.Error(), "--timeout") {
		t.Errorf("server: %v", srv.err)
	}
}

func (s *side) ExitCodeOf() int { return cli.ExitCode(s.err) }

func TestAnInjectedVerbErrorIsTheToolsLine(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	f.FailNext("ibv_create_srq", rdma.Errorf("ibv_create_srq", 12))
	var s side
	o := options(f, SRQ, freePort(t), &s)
	if err := Run(context.Background(), o); cli.ExitCode(err) != 1 || s.errOut.String() != "Couldn't create SRQ\n" {
		t.Errorf("%v %q", err, s.errOut.String())
	}
}

func TestDamagedDataIsFoundByTheClient(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	f.CorruptNextSends(1)
	_, cli := pair(t, f, RC, nil, func(o *Options) { o.Check = true })
	if cli.err != nil || !strings.HasSuffix(cli.out.String(), "usec/iter\ninvalid data in page 0\n") {
		t.Errorf("-c: %v\n%s", cli.err, cli.out.String())
	}
	f.CorruptNextSends(1)
	_, cli = pair(t, f, RC, nil, func(o *Options) { o.JSON = true })
	var doc Document
	if err := json.Unmarshal(cli.out.Bytes(), &doc); err != nil || doc.OK || !doc.Validated || len(doc.InvalidPages) != 1 || cli.ExitCodeOf() != 1 {
		t.Errorf("--json: %v exit %d %s", err, cli.ExitCodeOf(), cli.out.String())
	}
}

// A run that passed while the port resent packets says so: a note on
// stderr and port_counters in --json.
func TestARunWithRetriesSaysSo(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("127.0.0.1"))
	rxe0 := func(retry uint64) []host.PortCounters {
		return []host.PortCounters{{Device: "rxe0", Port: 1, HW: []host.Counter{{Name: "completer_retry_err", Value: retry}}}}
	}
	// Before and after each attempt: the client may try again until the
	// server listens.
	var reads [][]host.PortCounters
	for range 50 {
		reads = append(reads, rxe0(2), rxe0(30))
	}
	_, cli := pair(t, f, RC, nil, func(o *Options) { o.JSON = true; o.GIDAuto = true; o.Counters = counterstest.NewReplay(reads...) })
	var doc Document
	if err := json.Unmarshal(cli.out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, cli.out.String())
	}
	if err := schema.Validate("pingpong", cli.out.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	pc := doc.PortCounters
	if cli.err != nil || !doc.OK || pc == nil || !pc.Retries || len(pc.Rose) != 1 || pc.Rose[0].Delta != 28 {
		t.Errorf("exit %v, document %s", cli.err, cli.out.String())
	}
	if !strings.Contains(cli.errOut.String(), "note: passed with retries: rxe0/1 completer_retry_err +28 (") {
		t.Errorf("stderr %q", cli.errOut.String())
	}
}

// A run whose peer keeps answering still ends when its context does (smoke's
// time bound), and says how far it got.
func TestAProbeEndsWithItsContextWhileThePeerAnswers(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	port := freePort(t)
	var srv side
	so := options(f, RC, port, &srv)
	so.Iters, so.Timeout = 1<<30, 300*time.Millisecond
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), so) }()
	var srvErr error
	defer func() {
		if srvErr = <-done; srvErr == nil {
			t.Errorf("the server, left by its client, passed")
		}
	}()
	var cli side
	co := options(f, RC, port, &cli)
	co.Server, co.Iters = "127.0.0.1", 1<<30
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	probe := func() Document {
		got := make(chan Document, 1)
		go func() { got <- Probe(ctx, co) }()
		select {
		case d := <-got:
			return d
		case <-time.After(5 * time.Second):
			t.Fatalf("the probe ran on for 5s after its context ended")
			return Document{}
		}
	}
	var doc Document
	for begin := time.Now(); ; {
		doc = probe()
		if doc.Error == nil || !strings.Contains(doc.Error.Message, "Couldn't connect") || ctx.Err() != nil {
			break
		}
		if time.Since(begin) > 5*time.Second {
			t.Fatal("the server never listened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if late := context.Cause(ctx); late == nil {
		t.Fatalf("the probe returned before its context ended: %+v", doc)
	}
	if doc.OK || doc.Error == nil || !strings.HasPrefix(doc.Error.Message, "context deadline exceeded after ") {
		t.Errorf("document %+v", doc)
	}
	if s := doc.Stopped; s == nil || s.RoundTrips == 0 || s.ElapsedSeconds <= 0 || s.ElapsedSeconds > 1 {
		t.Errorf("stopped %+v", doc.Stopped)
	}
}
