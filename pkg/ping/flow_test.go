package ping

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/counters/counterstest"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// These tests run rping's client and server flows over rdmatest's
// fabric and hold what they print to what the real rping printed in the
// lab (testdata/lab, see its README). The fabric has rxe0 on 10.9.0.1,
// where both sides run as in the lab's one VM, and rxe1 on 10.9.0.2 for
// a client whose device must differ from the server's.

func newFabric() (*rdmatest.Fabric, *rdmatest.Device) {
	f := rdmatest.NewFabric()
	rxe0 := f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	f.AddRoCEDevice("rxe1", netip.MustParseAddr("10.9.0.2"))
	return f, rxe0
}

// waitListening waits until a server listens on port.
func waitListening(t *testing.T, f *rdmatest.Fabric, port uint16) bool {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if f.Listening(rdma.PortSpaceTCP, port) {
			return true
		}
	}
	return false
}

// outcome is what one Run printed and its exit code.
type outcome struct {
	out, err string
	code     int
}

func runOne(o Options) outcome { return runIn(context.Background(), o) }

func runIn(ctx context.Context, o Options) outcome {
	var out, errOut bytes.Buffer
	o.IO = cli.Test(nil, &out, &errOut)
	err := Run(ctx, &o)
	return outcome{out.String(), errOut.String(), cli.ExitCode(err)}
}

var nextTestPort = 7400

// pair runs a server with srv's options and, once it listens, a client
// with cli's, over n; both get the same fresh port.
func pair(t *testing.T, f *rdmatest.Fabric, srv, cli Options) (s, c outcome) {
	t.Helper()
	return pairIn(t, f, context.Background(), srv, cli)
}

// pairIn is pair with the client's run in ctx.
func pairIn(t *testing.T, f *rdmatest.Fabric, ctx context.Context, srv, cli Options) (s, c outcome) {
	t.Helper()
	nextTestPort++
	srv.Port, cli.Port = nextTestPort, nextTestPort
	srv.Mode, cli.Mode = ModeServer, ModeClient
	srv.CM, cli.CM = f, f
	done := make(chan outcome, 1)
	go func() { done <- runOne(srv) }()
	if !waitListening(t, f, uint16(srv.Port)) {
		select {
		case s = <-done:
			t.Fatalf("server never listened: %+v", s)
		default:
			t.Fatal("server never listened")
		}
	}
	c = runIn(ctx, cli)
	select {
	case s = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("server still running after the client ended (client %+v)", c)
	}
	return s, c
}

func opts(flags ...any) Options {
	o := Options{Size: DefaultSize}
	for i := 0; i < len(flags); i += 2 {
		v := flags[i+1]
		switch flags[i] {
		case "-a":
			o.Addr = v.(string)
		case "-I":
			o.Source = v.(string)
		case "-C":
			o.Count = v.(int)
		case "-S":
			o.Size = v.(int)
		case "-v":
			o.Verbose = v.(bool)
		case "-V":
			o.Validate = v.(bool)
		case "-q":
			o.SelfQP = v.(bool)
		case "-d":
			o.Debug = v.(bool)
		case "--json":
			o.JSON = v.(bool)
		case "--stats":
			o.Stats = v.(bool)
		case "--timeout":
			o.Timeout = v.(time.Duration)
		}
	}
	return o
}

// lab reads a capture; a missing one fails the test.
func lab(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/lab/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// labOutcome is the capture NAME.{out,err,rc}.
func labOutcome(t *testing.T, name string) outcome {
	t.Helper()
	code, err := strconv.Atoi(strings.TrimSpace(lab(t, name+".rc")))
	if err != nil {
		t.Fatal(err)
	}
	return outcome{lab(t, name+".out"), lab(t, name+".err"), code}
}

// withoutHint is stderr without rdmactl's closing "hint: " line, the one
// addition to rping's failure output.
func withoutHint(s string) (rest, hint string) {
	i := strings.LastIndex(s, "hint: ")
	if i < 0 || (i > 0 && s[i-1] != '\n') || !strings.HasSuffix(s, "\n") || strings.Count(s[i:], "\n") != 1 {
		return s, ""
	}
	return s[:i], strings.TrimSuffix(s[i+len("hint: "):], "\n")
}

// sameAsRping fails unless got is what rping did: the same stdout, the
// same stderr but for rdmactl's hint, the same exit code. It returns the
// hint.
func sameAsRping(t *testing.T, what string, real, got outcome) string {
	t.Helper()
	errText, hint := withoutHint(got.err)
	if got.out != real.out {
		t.Errorf("%s: stdout\n%q\nrping's\n%q", what, got.out, real.out)
	}
	if errText != real.err {
		t.Errorf("%s: stderr\n%q\nrping's\n%q", what, errText, real.err)
	}
	if got.code != real.code {
		t.Errorf("%s: exit %d, rping's %d", what, got.code, real.code)
	}
	return hint
}

func TestPairsPrintWhatRpingPrints(t *testing.T) {
	a := "10.9.0.1"
	for _, c := range []struct {
		capture  string
		srv, cli Options
	}{
		{"v-C3", opts("-a", a, "-v", true, "-C", 3), opts("-a", a, "-v", true, "-C", 3)},
		{"V-S30-C2", opts("-a", a, "-V", true, "-S", 30, "-C", 2), opts("-a", a, "-V", true, "-S", 30, "-C", 2)},
		{"q-v-C2", opts("-a", a, "-q", true, "-v", true, "-C", 2), opts("-a", a, "-q", true, "-v", true, "-C", 2)},
		{"v-C2-S23", opts("-a", a, "-v", true, "-C", 2, "-S", 23), opts("-a", a, "-v", true, "-C", 2, "-S", 23)},
		// `rping -s 10.9.0.1 -v -C 3`: the operand is ignored, the server
		// binds the wildcard (cmd/rdmactl drops the operand).
		{"positional", opts("-v", true, "-C", 3), opts("-a", a, "-v", true, "-C", 3)},
		// A server with a smaller -S fails its RDMA read; the client sees
		// the disconnect and, as rping, exits 0.
		{"size-mismatch", opts("-a", a, "-S", 100, "-C", 3), opts("-a", a, "-S", 1000, "-C", 3)},
	} {
		t.Run(c.capture, func(t *testing.T) {
			f, _ := newFabric()
			s, cl := pair(t, f, c.srv, c.cli)
			sameAsRping(t, "server", labOutcome(t, c.capture+".srv"), s)
			sameAsRping(t, "client", labOutcome(t, c.capture+".cli"), cl)
		})
	}
}

// The client captures of the first release (stdout only).
func TestClientOutputsOfLongerRuns(t *testing.T) {
	for _, c := range []struct {
		file        string
		size, count int
	}{
		{"rping-client-v-C3.out", 64, 3},
		{"rping-client-v-S30-C2.out", 30, 2},
		{"rping-client-v-S200-C70.out", 200, 70},
	} {
		a := "10.9.0.1"
		f, _ := newFabric()
		_, cl := pair(t, f, opts("-a", a, "-S", c.size), opts("-a", a, "-v", true, "-S", c.size, "-C", c.count))
		if want, _ := os.ReadFile("testdata/" + c.file); cl.out != string(want) || cl.code != 0 {
			t.Errorf("%s: exit %d stdout\n%s", c.file, cl.code, cl.out)
		}
	}
}

func TestServerSetupFailureRejectsTheClient(t *testing.T) {
	// The server's first reg_mr, recv_buf, fails as under `ulimit -l 0`
	// without CAP_IPC_LOCK; the client runs on the other device.
	f, rxe0 := newFabric()
	rxe0.FailNext("ibv_reg_mr", rdma.Errorf("ibv_reg_mr", syscall.EPERM))
	s, cl := pair(t, f, opts("-a", "10.9.0.1", "-v", true, "-C", 1), opts("-a", "10.9.0.1", "-I", "10.9.0.2", "-v", true, "-C", 1))
	sameAsRping(t, "server", labOutcome(t, "regmr.srv"), s)
	hint := sameAsRping(t, "client", labOutcome(t, "regmr.cli"), cl)
	if strings.Contains(hint, "nothing listens") || !strings.Contains(hint, "setup failed") {
		t.Errorf("REJECTED 28 hint %q", hint)
	}
}

func TestClientFailuresPrintWhatRpingPrints(t *testing.T) {
	// 10.9.0.77 is on no device of the fabric: nobody answers its ARP.
	f, _ := newFabric()
	for _, c := range []struct {
		capture, addr, hint string
	}{
		{"rejected", "10.9.0.1", "nothing listens on 10.9.0.1 port"},
		{"addr-error", "10.9.0.77", "no neighbour answered ARP/ND for 10.9.0.77"},
		{"lookup", "no.such.host.invalid", ""},
	} {
		o := opts("-a", c.addr, "-v", true, "-C", 1)
		o.Mode, o.Port, o.CM = ModeClient, 7699, f
		hint := sameAsRping(t, c.capture, labOutcome(t, c.capture), runOne(o))
		if !strings.Contains(hint, c.hint) || (c.hint == "" && hint != "") {
			t.Errorf("%s: hint %q, want one with %q", c.capture, hint, c.hint)
		}
		if strings.Contains(hint, "4791") {
			t.Errorf("%s: hint blames UDP 4791 for what was not a filtering: %q", c.capture, hint)
		}
	}
}

func TestNoDeviceOrNoCMDevice(t *testing.T) {
	defer func(f func() ([]string, bool)) { kernelDevices = f }(kernelDevices)
	kernelDevices = func() ([]string, bool) { return []string{"rxe0"}, true }
	for _, c := range []struct {
		capture string
		fabric  func() *rdmatest.Fabric
		hint    string
	}{
		{"no-devices", rdmatest.NewFabric, "libibverbs found no device"},
		{"no-rdma-cm", func() *rdmatest.Fabric {
			f, _ := newFabric()
			f.FailNext("rdma_create_event_channel", rdma.Errorf("rdma_create_event_channel", syscall.ENOENT))
			return f
		}, "/dev/infiniband/rdma_cm is missing"},
	} {
		o := opts("-a", "10.9.0.1", "-C", 1)
		o.Mode, o.CM = ModeServer, c.fabric()
		hint := sameAsRping(t, c.capture, labOutcome(t, c.capture), runOne(o))
		if !strings.Contains(hint, c.hint) || strings.Contains(hint, "rxe add") {
			t.Errorf("%s: hint %q", c.capture, hint)
		}
	}
}

// rping's second line on a bind without a device comes from its CM
// thread, which races main's exit: the lab shows the first line alone
// most of the time and both now and then (at 1 vCPU). rdmactl prints both.
func TestBindWithoutDevice(t *testing.T) {
	f, _ := newFabric()
	o := opts("-a", "10.77.0.1", "-C", 1)
	o.Mode, o.CM = ModeServer, f
	got := runOne(o)
	real := labOutcome(t, "bind-enodev")
	real.err += "rdma_get_cm_event: Bad file descriptor\n"
	hint := sameAsRping(t, "bind", real, got)
	if !strings.Contains(hint, "RDMA device") || strings.Contains(hint, "no RDMA device here") {
		t.Errorf("hint %q", hint)
	}
}

func TestBindPortInUse(t *testing.T) {
	f, _ := newFabric()
	listen(t, f, 7174)
	o := opts("-a", "10.9.0.1")
	o.Mode, o.Port, o.CM = ModeServer, 7174, f
	got := runOne(o)
	if got.err != "rdma_bind_addr: Address already in use\nhint: another server already listens on that port; choose another with -p\n" || got.code != 255 {
		t.Errorf("%+v", got)
	}
}

// --json and --stats report, and their verdict says whether every
// requested ping came back validated.
func TestJSONVerdict(t *testing.T) {
	a := "10.9.0.1"
	type doc struct {
		Completed int  `json:"completed"`
		OK        bool `json:"ok"`
		Error     struct {
			Message string `json:"message"`
			Hint    string `json:"hint"`
			Code    int    `json:"code"`
		} `json:"error"`
		RTTMs []float64 `json:"rtt_ms"`
	}
	for _, c := range []struct {
		name      string
		fault     func(*rdmatest.Fabric)
		srv, cli  Options
		completed int
		ok        bool
		reason    string
	}{
		{"all done", nil, opts("-a", a), opts("-a", a, "-C", 5, "--json", true), 5, true, ""},
		{"server killed", serverDiesAfterThreeEchoes, opts("-a", a), opts("-a", a, "-C", 100, "--json", true),
			2, false, "the server disconnected after 2 of 100 pings"},
		{"size refused", nil, opts("-a", a, "-S", 100), opts("-a", a, "-S", 1000, "-C", 3, "--json", true),
			0, false, "the server disconnected after 0 of 3 pings"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, _ := newFabric()
			if c.fault != nil {
				c.fault(f)
			}
			_, cl := pair(t, f, c.srv, c.cli)
			var d doc
			if err := json.Unmarshal([]byte(cl.out), &d); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s", err, cl.out)
			}
			if err := schema.Validate("ping", []byte(cl.out)); err != nil {
				t.Errorf("against its schema: %v", err)
			}
			if d.Completed != c.completed || d.OK != c.ok || d.Error.Message != c.reason || (!c.ok && d.Error.Code != 1) || len(d.RTTMs) != c.completed {
				t.Errorf("document %+v", d)
			}
			wantCode := 0
			if !c.ok {
				wantCode = cli.ExitFailed
				if !strings.Contains(cl.err, "rdmactl ping: "+c.reason+"\n") || d.Error.Hint == "" {
					t.Errorf("stderr %q lacks the reason, or no hint (%q)", cl.err, d.Error.Hint)
				}
			}
			if cl.code != wantCode {
				t.Errorf("exit %d, want %d", cl.code, wantCode)
			}
		})
	}
}

// Without rdmactl's modes a cut-short run keeps rping's exit code.
func TestPlainModeKeepsRpingsExitCode(t *testing.T) {
	f, _ := newFabric()
	serverDiesAfterThreeEchoes(f)
	_, cl := pair(t, f, opts("-a", "10.9.0.1"), opts("-a", "10.9.0.1", "-C", 100))
	if cl.code != 0 || !strings.HasPrefix(cl.err, "client DISCONNECT EVENT...\nwait for RDMA_WRITE_") || strings.Contains(cl.err, "rdmactl") {
		t.Errorf("%+v", cl)
	}
}

func TestStatsLinesAndSummary(t *testing.T) {
	f, _ := newFabric()
	_, cl := pair(t, f, opts("-a", "10.9.0.1"), opts("-a", "10.9.0.1", "-C", 4, "--stats", true))
	lines := strings.Split(strings.TrimSuffix(cl.out, "\n"), "\n")
	if cl.code != 0 || len(lines) != 9 {
		t.Fatalf("exit %d stdout\n%s", cl.code, cl.out)
	}
	for i := 0; i < 4; i++ {
		if !strings.HasPrefix(lines[i], fmt.Sprintf("seq=%d rtt=", i)) || !strings.HasSuffix(lines[i], " ms") {
			t.Errorf("line %q", lines[i])
		}
	}
	if lines[4] != "--- 10.9.0.1 ping statistics ---" || !strings.HasPrefix(lines[5], "4 iterations, time ") ||
		!strings.HasPrefix(lines[6], "rtt min/avg/max/mdev = ") || !strings.HasPrefix(lines[7], "rtt p50/p90/p99/p99.9 = ") ||
		!strings.HasPrefix(lines[8], "cpu per iteration ") {
		t.Errorf("summary\n%s", strings.Join(lines[4:], "\n"))
	}
}

// A listener that never answers: --timeout ends the wait with one line
// and a hint, exit 1.
func TestTimeoutConnecting(t *testing.T) {
	f, _ := newFabric()
	listen(t, f, 7390)
	o := opts("-a", "10.9.0.1", "-C", 1, "--timeout", 50*time.Millisecond)
	o.Mode, o.Port, o.CM = ModeClient, 7390, f
	got := runOne(o)
	want := "rdmactl ping: timed out after 50ms waiting for the connection to be established (--timeout)\nconnect error -1\n" +
		"hint: no answer to the connect request: is a ping server running on 10.9.0.1 port 7390, and is UDP port 4791 open?\n"
	if got.err != want || got.code != cli.ExitFailed {
		t.Errorf("exit %d stderr %q", got.code, got.err)
	}
}

// A server whose client stops answering gives up under --timeout.
func TestServerTimeoutWaitingForClient(t *testing.T) {
	f, _ := newFabric()
	srv := opts("-a", "10.9.0.1", "--timeout", 100*time.Millisecond)
	nextTestPort++
	srv.Mode, srv.Port, srv.CM = ModeServer, nextTestPort, f
	done := make(chan outcome, 1)
	go func() { done <- runOne(srv) }()
	port := uint16(srv.Port)
	waitListening(t, f, port)
	// A client that connects and then says nothing.
	ch, _ := f.CreateEventChannel()
	id, _ := ch.CreateID()
	_ = id.ResolveAddr(netip.Addr{}, netip.AddrPortFrom(netip.MustParseAddr("10.9.0.1"), port), time.Second)
	ctx := id.Context()
	pd, _ := ctx.AllocPD()
	cq, _ := ctx.CreateCQ(4, nil)
	if _, err := id.CreateQP(pd, cq, cq, rdma.QPCap{MaxSendWR: 1, MaxRecvWR: 1}); err != nil {
		t.Fatal(err)
	}
	_ = id.Connect(nil)
	s := <-done
	if s.code != cli.ExitFailed || !strings.Contains(s.err, "timed out after 100ms waiting for the client's next ping") ||
		!strings.Contains(s.err, "hint: the client stopped answering") {
		t.Errorf("%+v", s)
	}
}

func TestDebugOutput(t *testing.T) {
	f, _ := newFabric()
	s, cl := pair(t, f, opts("-a", "10.9.0.1", "-d", true), opts("-a", "10.9.0.1", "-d", true, "-C", 1))
	for _, want := range []string{"created cm_id", "rdma_resolve_addr - rdma_resolve_route successful", "created pd",
		"created qp", "allocated & registered buffers", "rdma_connect successful", "RDMA addr "} {
		if !strings.Contains(cl.out, want) {
			t.Errorf("client debug output lacks %q:\n%s", want, cl.out)
		}
	}
	for _, want := range []string{"rdma_bind_addr successful", "rdma_listen", "child cma", "accepting client connection request",
		"server received sink adv", "server posted rdma read req", "server rdma write complete"} {
		if !strings.Contains(s.out, want) {
			t.Errorf("server debug output lacks %q:\n%s", want, s.out)
		}
	}
}

// -P serves one client after another.
func TestPersistentServer(t *testing.T) {
	f, _ := newFabric()
	srv := opts("-a", "10.9.0.1", "-v", true)
	srv.Persistent = true
	nextTestPort++
	srv.Mode, srv.Port, srv.CM = ModeServer, nextTestPort, f
	go runOne(srv) // runs until the test binary ends, as rping -P does
	waitListening(t, f, uint16(srv.Port))
	for i := 0; i < 2; i++ {
		cl := opts("-a", "10.9.0.1", "-v", true, "-C", 3)
		cl.Mode, cl.Port, cl.CM = ModeClient, srv.Port, f
		if got := runOne(cl); got.out != lab(t, "v-C3.cli.out") || got.code != 0 {
			t.Errorf("client %d: %+v", i, got)
		}
	}
}

// An echo that differs fails -V as rping does, and fails rdmactl's
// verdict even without -V.
func TestEchoMismatch(t *testing.T) {
	f, _ := newFabric()
	f.CorruptNextWrites(2)
	_, cl := pair(t, f, opts("-a", "10.9.0.1"), opts("-a", "10.9.0.1", "-V", true, "-C", 2))
	if !strings.HasPrefix(cl.err, "data mismatch!\nrping client failed: -1\n") || cl.code != 255 {
		t.Errorf("-V: %+v", cl)
	}
	f, _ = newFabric()
	f.CorruptNextWrites(2)
	_, cl = pair(t, f, opts("-a", "10.9.0.1"), opts("-a", "10.9.0.1", "--stats", true, "-C", 2))
	if !strings.Contains(cl.err, "rdmactl ping: ping 0 came back different from what was sent\n") || cl.code != cli.ExitFailed {
		t.Errorf("--stats: %+v", cl)
	}
}

func TestEventChannelErrnoIsKept(t *testing.T) {
	o := opts("-a", "10.9.0.1")
	o.Mode, o.CM = ModeClient, rdmatest.NewFabric()
	if got := runOne(o); got.code != int(syscall.ENODEV) {
		t.Errorf("exit %d", got.code)
	}
}

func rxe0(dup, retry uint64) []host.PortCounters {
	return []host.PortCounters{{Device: "rxe0", Port: 1, HW: []host.Counter{
		{Name: "sent_pkts", Value: 1000 + 10*dup}, {Name: "duplicate_request", Value: dup}, {Name: "completer_retry_err", Value: retry}}}}
}

// A run that passed while the port resent packets says so: in --stats'
// summary and in --json's port_counters.
func TestStatsSayARunPassedWithRetries(t *testing.T) {
	withCounters := func(o Options, reads ...[]host.PortCounters) Options {
		o.Counters = counterstest.NewReplay(reads...)
		return o
	}
	_, cl := pair(t, fabric(), opts("-a", "10.9.0.1"), withCounters(opts("-a", "10.9.0.1", "-C", 4, "--stats", true), rxe0(0, 0), rxe0(41, 28)))
	lines := strings.Split(strings.TrimSuffix(cl.out, "\n"), "\n")
	last := lines[len(lines)-1]
	if cl.code != 0 || !strings.HasPrefix(last, "passed with retries: rxe0/1 duplicate_request +41 (") || !strings.Contains(last, "; rxe0/1 completer_retry_err +28 (") {
		t.Errorf("exit %d, last line %q", cl.code, last)
	}
	_, quiet := pair(t, fabric(), opts("-a", "10.9.0.1"), withCounters(opts("-a", "10.9.0.1", "-C", 4, "--stats", true), rxe0(3, 1), rxe0(3, 1)))
	if strings.Contains(quiet.out, "retries") || strings.Count(quiet.out, "\n") != 9 {
		t.Errorf("a run without retries:\n%s", quiet.out)
	}

	_, js := pair(t, fabric(), opts("-a", "10.9.0.1"), withCounters(opts("-a", "10.9.0.1", "-C", 4, "--json", true), rxe0(0, 0), rxe0(41, 28)))
	var d struct {
		OK           bool `json:"ok"`
		PortCounters *struct {
			Retries bool `json:"retries"`
			Errors  bool `json:"errors"`
			Rose    []struct {
				Device  string `json:"device"`
				Counter string `json:"counter"`
				Delta   int    `json:"delta"`
				Kind    string `json:"kind"`
			} `json:"rose"`
		} `json:"port_counters"`
	}
	if err := json.Unmarshal([]byte(js.out), &d); err != nil {
		t.Fatalf("%v\n%s", err, js.out)
	}
	if err := schema.Validate("ping", []byte(js.out)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	pc := d.PortCounters
	if !d.OK || pc == nil || !pc.Retries || pc.Errors || len(pc.Rose) != 2 || pc.Rose[0].Counter != "duplicate_request" || pc.Rose[0].Delta != 41 || pc.Rose[1].Kind != "retry" {
		t.Errorf("document %s", js.out)
	}
}

// A client without a server address fails where rping does (route
// resolution without -a; getaddrinfo, exit 254, for an empty -a), and the hint
// says that -a is missing or empty rather than blaming the device.
func TestClientWithoutAddress(t *testing.T) {
	defer func(f func() ([]string, bool)) { kernelDevices = f }(kernelDevices)
	kernelDevices = func() ([]string, bool) { return []string{"rxe0", "rxe1"}, true }
	for _, c := range []struct {
		given bool
		hint  string
	}{{false, "hint: -a is missing: "}, {true, "hint: -a is empty: "}} {
		o := opts("-C", 1)
		o.AddrGiven = c.given
		o.Mode, o.Port, o.CM = ModeClient, 7698, fabric()
		got := runOne(o)
		if got.code == 0 || !strings.Contains(got.err, c.hint) || strings.Count(got.err, "hint:") != 1 {
			t.Errorf("-a given %v: exit %d, stderr %q; want a failure and %q", c.given, got.code, got.err, c.hint)
		}
		if c.given && (got.code != 254 || got.out != "getaddrinfo failed (Name or service not known) - invalid hostname or IP address\n") {
			t.Errorf("-a '': exit %d, stdout %q; want rping's getaddrinfo failure and 254", got.code, got.out)
		}
	}
}

// fabric is newFabric's fabric alone.
func fabric() *rdmatest.Fabric {
	f, _ := newFabric()
	return f
}

// listen makes an id listen on 10.9.0.1:port that never answers.
func listen(t *testing.T, f *rdmatest.Fabric, port uint16) {
	t.Helper()
	ch, err := f.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ch.CreateID()
	if err == nil {
		err = l.Bind(netip.AddrPortFrom(netip.MustParseAddr("10.9.0.1"), port))
	}
	if err == nil {
		err = l.Listen(3)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// serverDiesAfterThreeEchoes ends the connection once the server's third
// RDMA write (the echo of ping 2) has landed, as the server's death
// would: the client sees DISCONNECTED before ping 2's go-ahead.
func serverDiesAfterThreeEchoes(f *rdmatest.Fabric) { f.DisconnectAfter(rdma.WRRDMAWrite, 3) }

// TestLostDisconnectRequest: the client's disconnect request is lost
// once, and the CM sends it again after a while. The client waits for
// the end of its disconnect, so the resend reaches the server, which
// ends as after any run; a client that destroyed its id sooner would
// cancel the resend and leave the server waiting for a next ping.
func TestLostDisconnectRequest(t *testing.T) {
	f, _ := newFabric()
	f.LoseNextDisconnectRequest(3 * time.Second)
	began := time.Now()
	s, c := pair(t, f, opts("-a", "10.9.0.1", "--timeout", 8*time.Second), opts("-a", "10.9.0.1", "-C", 2))
	if c.code != 0 || c.err != "client DISCONNECT EVENT...\n" {
		t.Errorf("client: %+v", c)
	}
	if s.code != 0 || !strings.HasPrefix(s.err, "server DISCONNECT EVENT...\n") {
		t.Errorf("server after the resent disconnect request: %+v", s)
	}
	if d := time.Since(began); d < 3*time.Second || d > 6*time.Second {
		t.Errorf("the pair took %v, want the resend's 3 s and little more", d)
	}
}
