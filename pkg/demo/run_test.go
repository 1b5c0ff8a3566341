package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
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

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	must(t, err)
	return string(b)
}

// mask hides what differs from run to run: addresses, keys, QP numbers
// and TCP ports. lines selects further lines to hide entirely (by prefix).
func mask(s string, lines ...string) string {
	s = regexp.MustCompile(`(addr=|lkey=|rkey=|QP number=|Remote address = |Remote rkey = |Remote QP number = )0x[0-9a-f]+`).ReplaceAllString(s, "${1}X")
	s = regexp.MustCompile(`(?m)^( TCP port : |waiting on port )\d+`).ReplaceAllString(s, "${1}N")
	s = regexp.MustCompile(`(?m)^( IP : |failed to establish TCP connection to server |Couldn't connect to ).*$`).ReplaceAllString(s, "${1}…")
	for _, l := range lines {
		s = regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(l)+`.*$`).ReplaceAllString(s, l+"…")
	}
	return s
}

// withoutHints drops rdmactl's own lines, which the original never prints.
func withoutHints(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "hint: ") && !strings.HasPrefix(l, "note: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lab mirrors the lab VM on an rdmatest fabric: rxe0 and rxe1, rxe0's GID
// table with the link-local entry at 0 and 10.9.0.1 at 1 (as kernel 6.1
// lists them, RoCE v2 only), a RoCE v1 entry another kernel would add, and
// the loopback address the tests really connect over at 5.
type lab struct {
	fab *rdmatest.Fabric
}

func newLab(t *testing.T) *lab {
	t.Helper()
	f := rdmatest.NewFabric()
	var gids []rdma.GIDEntry
	for i, e := range []struct {
		gid string
		typ rdma.GIDType
	}{
		{"fe80::f05c:9fff:fe42:2fca", rdma.GIDTypeRoCEv2},
		{"::ffff:10.9.0.1", rdma.GIDTypeRoCEv2},
		{"fd09::1", rdma.GIDTypeRoCEv2},
		{"", 0},
		{"::ffff:127.0.0.1", rdma.GIDTypeRoCEv1},
		{"::ffff:127.0.0.1", rdma.GIDTypeRoCEv2},
	} {
		if e.gid != "" {
			gids = append(gids, rdma.GIDEntry{Index: uint32(i), GID: gid(t, e.gid), Type: e.typ, Netdev: "veth0"})
		}
	}
	f.AddDevice(rdmatest.DeviceConfig{Name: "rxe0", LinkLayer: rdma.LinkLayerEthernet, GIDs: gids})
	f.AddDevice(rdmatest.DeviceConfig{Name: "rxe1", LinkLayer: rdma.LinkLayerEthernet})
	return &lab{fab: f}
}

type side struct {
	out, errOut string
	err         error
}

func (l *lab) run(opts Options) side {
	var out, errOut bytes.Buffer
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	opts.RDMA = l.fab
	opts.IO = cli.Test(nil, &out, &errOut)
	err := Run(context.Background(), &opts)
	return side{out.String(), errOut.String(), err}
}

// pair runs a server and a client against each other on a free port.
func (l *lab) pair(t *testing.T, srv, cl Options) (side, side) {
	t.Helper()
	port := freePort(t)
	srv.TCPPort, cl.TCPPort = port, port
	if cl.Server == "" {
		cl.Server = "127.0.0.1"
	}
	done := make(chan side)
	go func() { done <- l.run(srv) }()
	waitListening(t, port)
	c := l.run(cl)
	return <-done, c
}

// waitListening waits for a listening socket on port in /proc/net/tcp;
// connecting to see would use up the server's one accept.
func waitListening(t *testing.T, port int) {
	t.Helper()
	want := fmt.Sprintf(":%04X ", port)
	for i := 0; i < 500; i++ {
		b, err := os.ReadFile("/proc/net/tcp")
		must(t, err)
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) > 3 && strings.HasSuffix(f[1]+" ", want) && f[3] == "0A" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("nothing listens on port %d", port)
}

func itoa(n int) string { return strconv.Itoa(n) }

func opts(dev string, gidIndex int) Options {
	o := Options{Device: dev, IBPort: 1}
	if gidIndex >= 0 {
		o.GRH, o.GIDIndex = true, gidIndex
	}
	return o
}

func exitCode(err error) int { return cli.ExitCode(err) }

// TestRunMatchesOriginal runs both sides over the fake and compares every
// line with what the C program printed in the lab VM (testdata), server
// and client, stdout and stderr.
func TestRunMatchesOriginal(t *testing.T) {
	l := newLab(t)
	srv, cl := l.pair(t, opts("rxe0", 1), opts("rxe0", 1))
	if srv.err != nil || cl.err != nil {
		t.Fatalf("server %v, client %v\n%s%s", srv.err, cl.err, cl.out, cl.errOut)
	}
	for _, c := range []struct{ name, got string }{
		{"original-server.stdout", srv.out}, {"original-server.stderr", srv.errOut},
		{"original-client.stdout", cl.out}, {"original-client.stderr", cl.errOut},
	} {
		if want := mask(readTestdata(t, c.name)); mask(c.got) != want {
			t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", c.name, mask(c.got), want)
		}
	}
}

// TestRunWrongGIDIndex: the link-local GID on the server makes RTR fail on
// both sides with the original's lines, exit 1, and one hint each.
func TestRunWrongGIDIndex(t *testing.T) {
	l := newLab(t)
	srv, cl := l.pair(t, opts("rxe0", 0), opts("rxe0", 1))
	// The link-local GID comes from the VM's random MAC.
	hide := []string{"The IP address is: ", "Remote GID = "}
	for _, c := range []struct {
		name string
		s    side
	}{{"original-wrong-server", srv}, {"original-wrong-client", cl}} {
		if exitCode(c.s.err) != 1 || !cli.IsSilent(c.s.err) {
			t.Errorf("%s: err %v, want a silent exit 1", c.name, c.s.err)
		}
		if want := mask(readTestdata(t, c.name+".stdout"), hide...); mask(c.s.out, hide...) != want {
			t.Errorf("%s stdout:\n%s\nwant\n%s", c.name, mask(c.s.out, hide...), want)
		}
		if want := readTestdata(t, c.name+".stderr"); withoutHints(c.s.errOut) != want {
			t.Errorf("%s stderr:\n%s\nwant (plus hints)\n%s", c.name, c.s.errOut, want)
		}
		hints := strings.Count(c.s.errOut, "hint: ")
		if hints != 1 || !strings.Contains(c.s.errOut, "rdmactl gids") || !strings.Contains(c.s.errOut, "link-local") {
			t.Errorf("%s: want one hint naming the link-local entry and rdmactl gids, got:\n%s", c.name, c.s.errOut)
		}
		// The hint comes after the original's failure lines.
		if !strings.HasSuffix(c.s.errOut, "failed to connect QPs\n"+lastLine(c.s.errOut)) {
			t.Errorf("%s: hint is not after the original's lines:\n%s", c.name, c.s.errOut)
		}
	}
}

func lastLine(s string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

func TestRunConnectionRefused(t *testing.T) {
	l := newLab(t)
	o := opts("rxe0", 1)
	o.Server, o.TCPPort = "127.0.0.1", freePort(t)
	s := l.run(o)
	if exitCode(s.err) != 1 {
		t.Errorf("err %v, want exit 1", s.err)
	}
	if want := mask(readTestdata(t, "original-refused-client.stdout")); mask(s.out) != want {
		t.Errorf("stdout:\n%s\nwant\n%s", mask(s.out), want)
	}
	hint := fmt.Sprintf("hint: nothing listens on 127.0.0.1 port %d (start `rdmactl demo` there, or check -p)\n", o.TCPPort)
	if want := mask(readTestdata(t, "original-refused-client.stderr") + hint); mask(s.errOut) != want {
		t.Errorf("stderr:\n%s\nwant\n%s", mask(s.errOut), want)
	}
}

// TestRunAcceptTimesOut: where the original waits for ever, the server
// gives up after --timeout with the original's failure lines.
func TestRunAcceptTimesOut(t *testing.T) {
	l := newLab(t)
	o := opts("rxe0", 1)
	o.TCPPort, o.Timeout = freePort(t), 100*time.Millisecond
	begin := time.Now()
	s := l.run(o)
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	want := "server accept: Connection timed out\naccept() failed\nfailed to establish TCP connection with client on port " + itoa(o.TCPPort) + "\nfailed to create resources\n"
	if exitCode(s.err) != 1 || s.errOut != want {
		t.Errorf("err %v, stderr:\n%s\nwant\n%s", s.err, s.errOut, want)
	}
}

func TestRunGIDAuto(t *testing.T) {
	l := newLab(t)
	auto := Options{Device: "rxe0", IBPort: 1, GIDAuto: true}
	srv, cl := l.pair(t, auto, auto)
	if srv.err != nil || cl.err != nil {
		t.Fatalf("server %v, client %v\n%s%s%s%s", srv.err, cl.err, srv.out, srv.errOut, cl.out, cl.errOut)
	}
	for name, s := range map[string]side{"server": srv, "client": cl} {
		if !strings.Contains(s.out, " GID index : auto\n") {
			t.Errorf("%s: config block does not say auto:\n%s", name, s.out)
		}
		// The loopback connection's address is entry 5 in the fake
		// table, the RoCE v2 one, not the v1 one before it.
		if !strings.Contains(s.out, "\nGID index auto: 5 (RoCE v2 127.0.0.1, this end of the TCP connection)\n") {
			t.Errorf("%s: no line naming the chosen index:\n%s", name, s.out)
		}
		if !strings.Contains(s.out, "Remote GID = 00:00:00:00:00:00:00:00:00:00:ff:ff:7f:00:00:01\n") {
			t.Errorf("%s: peer's GID is not the loopback one:\n%s", name, s.out)
		}
	}
	if !strings.Contains(cl.out, "Contents of server's buffer: 'RDMA read operat'\n") || !strings.Contains(srv.out, "Contents of server buffer: 'RDMA write operaion '\n") {
		t.Errorf("transfer did not happen:\n%s\n%s", srv.out, cl.out)
	}
}

func TestRunGIDAutoNoMatch(t *testing.T) {
	l := newLab(t)
	// rxe1 has no GIDs, so nothing carries the connection's address.
	auto := Options{Device: "rxe1", IBPort: 1, GIDAuto: true}
	srv, cl := l.pair(t, auto, auto)
	for name, s := range map[string]side{"server": srv, "client": cl} {
		if exitCode(s.err) != 1 {
			t.Errorf("%s: err %v", name, s.err)
		}
		if !strings.Contains(s.errOut, "could not choose a GID index: no RoCE v2 GID of rxe1 port 1 carries 127.0.0.1") ||
			!strings.Contains(s.errOut, "failed to connect QPs\nhint: ") {
			t.Errorf("%s stderr:\n%s", name, s.errOut)
		}
	}
}

// TestRunRefusesRoCEWithoutGID: on an Ethernet link layer without -g the
// demo stops before printing anything or touching the network.
func TestRunRefusesRoCEWithoutGID(t *testing.T) {
	l := newLab(t)
	s := l.run(Options{Device: "rxe0", IBPort: 1, TCPPort: freePort(t)})
	if exitCode(s.err) != cli.ExitUsage || s.out != "" || s.errOut != "" {
		t.Fatalf("err %v, out %q, errOut %q", s.err, s.out, s.errOut)
	}
	for _, want := range []string{"rxe0 port 1 is RoCE", "-g auto", "rdmactl gids -d rxe0"} {
		if !strings.Contains(s.err.Error(), want) {
			t.Errorf("error %q lacks %q", s.err, want)
		}
	}
	// On InfiniBand no GID is needed, and without -d the first device is
	// the one looked at.
	ib := rdmatest.NewFabric()
	ib.AddIBDevice("mlx5_0", 1)
	ib.AddDevice(rdmatest.DeviceConfig{Name: "rxe0", LinkLayer: rdma.LinkLayerEthernet})
	if err := preflight(Options{IBPort: 1, RDMA: ib}); err != nil {
		t.Errorf("InfiniBand refused: %v", err)
	}
}

// TestRunPreflight: a wrong device, port or empty GID index is a one-line
// error before any TCP wait, naming where to look.
func TestRunPreflight(t *testing.T) {
	l := newLab(t)
	for _, c := range []struct {
		opts Options
		code int
		want string
	}{
		{Options{Device: "nosuch", DeviceSource: "RDMACTL_DEVICE", IBPort: 1, GRH: true, GIDIndex: 1}, cli.ExitUsage, `no RDMA device "nosuch" (from RDMACTL_DEVICE): the devices are rxe0`},
		{Options{Device: "rxe0", IBPort: 2, GRH: true, GIDIndex: 1}, cli.ExitUsage, "rxe0 has no port 2"},
		{Options{Device: "rxe0", IBPort: 1, GRH: true, GIDIndex: 99}, cli.ExitUsage, "no GID at index 99: pick one from 'rdmactl gids -d rxe0'"},
	} {
		c.opts.TCPPort = freePort(t)
		s := l.run(c.opts)
		if exitCode(s.err) != c.code || s.out != "" || s.errOut != "" || !strings.Contains(s.err.Error(), c.want) {
			t.Errorf("%+v: err %v (exit %d), out %q, errOut %q; want exit %d and %q", c.opts, s.err, exitCode(s.err), s.out, s.errOut, c.code, c.want)
		}
	}
}

// TestRunCompletionTimeout: when SENDs are lost both sides report the
// original's timeout after PollTimeout, with a hint.
func TestRunCompletionTimeout(t *testing.T) {
	l := newLab(t)
	l.fab.DropNextSends(1)
	begin := time.Now()
	srv, cl := l.pair(t, opts("rxe0", 1), opts("rxe0", 1))
	if took := time.Since(begin); took < PollTimeout || took > 3*PollTimeout {
		t.Errorf("took %v, want about %v", took, PollTimeout)
	}
	for name, s := range map[string]side{"server": srv, "client": cl} {
		want := "Modified QP state to RTR\ncompletion wasn't found in the CQ after timeout\npoll completion failed\n"
		if exitCode(s.err) != 1 || withoutHints(s.errOut) != want || strings.Count(s.errOut, "hint: ") != 1 {
			t.Errorf("%s: err %v, stderr:\n%s", name, s.err, s.errOut)
		}
		if !strings.HasSuffix(s.out, "\ntest result is 1\n") {
			t.Errorf("%s stdout:\n%s", name, s.out)
		}
	}
}

func TestRunSetupFailure(t *testing.T) {
	for step, want := range map[string]string{
		"ibv_alloc_pd":  "ibv_alloc_pd failed\n",
		"ibv_create_cq": "failed to create CQ with 1 entries\n",
		rdma.OpMalloc:   "failed to malloc 16 bytes to memory buffer\n",
		"ibv_reg_mr":    "ibv_reg_mr failed with mr_flags=0x7\n",
	} {
		l := newLab(t)
		for range 2 { // the server's call and the client's
			l.fab.FailNext(step, rdma.Errorf(step, syscall.ENOMEM))
		}
		srv, cl := l.pair(t, opts("rxe0", 1), opts("rxe0", 1))
		if !strings.HasPrefix(srv.errOut, want+"failed to create resources\n") || exitCode(srv.err) != 1 {
			t.Errorf("step %s: stderr %q", step, srv.errOut)
		}
		// "going to send" comes after the buffer, before the MR.
		if got := strings.Contains(srv.out, "going to send the message"); got != (step == "ibv_reg_mr") {
			t.Errorf("step %s: going-to-send line printed: %v", step, got)
		}
		if exitCode(cl.err) != 1 {
			t.Errorf("step %s: client err %v", step, cl.err)
		}
	}
}

func TestRunJSON(t *testing.T) {
	l := newLab(t)
	s, c := opts("rxe0", 1), opts("rxe0", 1)
	s.JSON, c.JSON = true, true
	srv, cl := l.pair(t, s, c)
	var sum struct{ Server, Client Summary }
	must(t, json.Unmarshal([]byte(srv.out), &sum.Server))
	must(t, json.Unmarshal([]byte(cl.out), &sum.Client))
	for _, out := range []string{srv.out, cl.out} {
		if err := schema.Validate("demo", []byte(out)); err != nil {
			t.Errorf("against its schema: %v", err)
		}
	}
	ss, cs := sum.Server, sum.Client
	if ss.Role != "server" || cs.Role != "client" || !ss.OK || !cs.OK {
		t.Fatalf("summaries: %+v %+v", ss, cs)
	}
	if ss.GIDIndex == nil || *ss.GIDIndex != 1 || ss.Local == nil || cs.Remote == nil || *ss.Local != *cs.Remote || ss.Local.IP != "10.9.0.1" {
		t.Errorf("records do not match: %+v / %+v", ss.Local, cs.Remote)
	}
	if cs.Message == nil || *cs.Message != "SEND operation " || *cs.ReadBack != "RDMA read operat" || *ss.Buffer != "RDMA write operaion " {
		t.Errorf("payloads: %+v %+v", ss, cs)
	}
	if srv.errOut != "Modified QP state to RTR\n" {
		t.Errorf("stderr %q", srv.errOut)
	}
}

// TestCStringSemantics pins the C behaviour the output depends on: strcpy
// writes a NUL, %s stops at the first one.
func TestCStringSemantics(t *testing.T) {
	buf := make([]byte, 32)
	putCString(buf, readMsg)
	copy(buf, "RDMA write opera") // the peer's 16-byte write
	if got := cString(buf); got != "RDMA write operaion " {
		t.Errorf("got %q", got)
	}
	if got := cString([]byte("no nul")); got != "no nul" {
		t.Errorf("got %q", got)
	}
}

// TestGIDAdvice: the hint names the likely cause from what each side used.
func TestGIDAdvice(t *testing.T) {
	l := newLab(t)
	dev, err := l.fab.Open("rxe0")
	must(t, err)
	v4, ll, v6 := gid(t, "::ffff:10.9.0.1"), gid(t, "fe80::f05c:9fff:fe42:2fca"), gid(t, "fd09::1")
	for _, c := range []struct {
		index         int
		local, remote rdma.GID
		want          string
	}{
		{0, ll, v4, "local GID index 0 is the link-local entry fe80::f05c:9fff:fe42:2fca"},
		{4, v4, v4, "local GID index 4 is a RoCE v1 entry"},
		{1, v4, rdma.GID{}, "the peer sent no GID"},
		{1, v4, ll, "the peer's GID fe80::f05c:9fff:fe42:2fca is its link-local entry"},
		{1, v4, v6, "the GIDs differ in kind (local ::ffff:10.9.0.1, peer fd09::1)"},
		{1, v4, v4, "check that both sides use RoCE v2 GIDs"},
	} {
		r := &runner{opts: Options{Device: "rxe0", IBPort: 1, GRH: true, GIDIndex: c.index}, dev: dev, gid: c.local, remote: Record{GID: c.remote}}
		got := r.gidAdvice("RTR was refused")
		if !strings.HasPrefix(got, "RTR was refused: ") || !strings.Contains(got, c.want) || !strings.Contains(got, "rdmactl gids -d rxe0") || strings.Contains(got, "\n") {
			t.Errorf("index %d, %s → %s: %q, want one line with %q", c.index, c.local, c.remote, got, c.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func gid(t *testing.T, s string) rdma.GID {
	t.Helper()
	g, err := rdma.ParseGID(s)
	must(t, err)
	return g
}

// TestPrintedGIDForms: the GIDs and the lines the original printed for
// them in the lab VM (testdata/original-*.stdout) and in the seed
// transcript.
func TestPrintedGIDForms(t *testing.T) {
	for _, c := range []struct{ gid, ip, colons string }{
		{"0000:0000:0000:0000:0000:ffff:0a09:0001", "10.9.0.1", "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:09:00:01"},
		{"0000:0000:0000:0000:0000:ffff:0a0b:0bfb", "10.11.11.251", "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:0b:0b:fb"},
		// The link-local entry: the original prints its last four bytes
		// as an address all the same.
		{"fe80:0000:0000:0000:b208:75ff:fe5f:b85e", "254.95.184.94", "fe:80:00:00:00:00:00:00:b2:08:75:ff:fe:5f:b8:5e"},
	} {
		g := gid(t, c.gid)
		if got := printedIPv4(g).String(); got != c.ip {
			t.Errorf("%s: IPv4 %s, want %s", c.gid, got, c.ip)
		}
		if got := g.Colons(); got != c.colons {
			t.Errorf("%s: Colons %s, want %s", c.gid, got, c.colons)
		}
	}
}

// TestRunNVIDIAVariant: a server that sends NVIDIA's
// 18-byte "SEDN operation   " reaches the rdmactl client whole, and the
// client moves as many bytes as the server's message had.
func TestRunNVIDIAVariant(t *testing.T) {
	l := newLab(t)
	s := opts("rxe0", 1)
	s.Message = "SEDN operation   "
	srv, cl := l.pair(t, s, opts("rxe0", 1))
	if srv.err != nil || cl.err != nil {
		t.Fatalf("server %v, client %v\n%s%s%s%s", srv.err, cl.err, srv.out, srv.errOut, cl.out, cl.errOut)
	}
	if !strings.Contains(cl.out, "Message is: 'SEDN operation   '\n") || !strings.Contains(cl.out, "Contents of server's buffer: 'RDMA read operatio'\n") {
		t.Errorf("client output:\n%s", cl.out)
	}
	if !strings.Contains(srv.out, "Contents of server buffer: 'RDMA write operatin '\n") {
		t.Errorf("server output:\n%s", srv.out)
	}
}

// TestRunNoDevice: no device, or a list that cannot be
// read, is one line naming rdmactl doctor before any wait.
func TestRunNoDevice(t *testing.T) {
	unreadable := newLab(t).fab
	unreadable.FailNext("ibv_get_device_list", rdma.Errorf("ibv_get_device_list", 38))
	for name, v := range map[string]*rdmatest.Fabric{
		"empty":      rdmatest.NewFabric(),
		"unreadable": unreadable,
	} {
		o := opts("rxe0", 1)
		o.RDMA, o.TCPPort = v, freePort(t)
		var out, errOut bytes.Buffer
		o.IO = cli.Test(nil, &out, &errOut)
		err := Run(context.Background(), &o)
		if exitCode(err) != cli.ExitFailed || out.Len() != 0 || errOut.Len() != 0 ||
			!strings.Contains(err.Error(), "rdmactl doctor") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, out %q, errOut %q", name, err, out.String(), errOut.String())
		}
	}
}

// TestRunRemoteAccessError: a wrong rkey makes the
// client's RDMA read fail with status 0xa; the hint says the peer refused
// the access and does not blame the GIDs.
func TestRunRemoteAccessError(t *testing.T) {
	l := newLab(t)
	s := opts("rxe0", 1)
	bad := uint32(0xdeadbe00)
	s.AdvertiseRKey = &bad
	_, cl := l.pair(t, s, opts("rxe0", 1))
	if exitCode(cl.err) != 1 || !strings.Contains(cl.errOut, "got bad completion with status: 0xa,") {
		t.Fatalf("client: %v\n%s", cl.err, cl.errOut)
	}
	if !strings.Contains(cl.errOut, "hint: the RDMA read failed with status 0xa (remote access error): the peer refused the access") ||
		!strings.Contains(cl.errOut, "rkey 0xdeadbe00") || strings.Contains(cl.errOut, "GID") {
		t.Errorf("client hint:\n%s", cl.errOut)
	}
}

// TestOptionsTimeoutZero: the library treats Timeout 0 as DefaultTimeout
// rather than failing at once.
func TestOptionsTimeoutZero(t *testing.T) {
	if got := (Options{}).timeout(); got != DefaultTimeout {
		t.Errorf("timeout() = %v, want %v", got, DefaultTimeout)
	}
}

func rxe0Counters(dup uint64) []host.PortCounters {
	return []host.PortCounters{{Device: "rxe0", Port: 1, HW: []host.Counter{{Name: "sent_pkts", Value: 10 + dup}, {Name: "duplicate_request", Value: dup}}}}
}

// A demo that passed while the port resent packets says so, on stderr
// (stdout is the C example's) and in --json's port_counters.
func TestRunPassedWithRetries(t *testing.T) {
	l := newLab(t)
	cl := opts("rxe0", 1)
	cl.Counters = counterstest.NewReplay(rxe0Counters(0), rxe0Counters(5))
	_, c := l.pair(t, opts("rxe0", 1), cl)
	if c.err != nil || !strings.Contains(c.errOut, "note: passed with retries: rxe0/1 duplicate_request +5 (") {
		t.Errorf("client %v, stderr:\n%s", c.err, c.errOut)
	}
	if strings.Contains(c.out, "retries") {
		t.Errorf("stdout is the C example's:\n%s", c.out)
	}

	cl.JSON = true
	cl.Counters = counterstest.NewReplay(rxe0Counters(0), rxe0Counters(5))
	_, c = l.pair(t, opts("rxe0", 1), cl)
	var sum Summary
	if err := json.Unmarshal([]byte(c.out), &sum); err != nil {
		t.Fatalf("%v\n%s", err, c.out)
	}
	if err := schema.Validate("demo", []byte(c.out)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	pc := sum.PortCounters
	if !sum.OK || pc == nil || !pc.Retries || len(pc.Rose) != 1 || pc.Rose[0].Counter != "duplicate_request" || pc.Rose[0].Delta != 5 {
		t.Errorf("summary %s", c.out)
	}
}

// A client that is no demo (an HTTP health check sends more than a
// record's 34 bytes) is named as such, not blamed on the GIDs at RTR.
func TestRunNotADemoClient(t *testing.T) {
	l := newLab(t)
	o := opts("rxe0", 1)
	o.TCPPort = freePort(t)
	done := make(chan side)
	go func() { done <- l.run(o) }()
	waitListening(t, o.TCPPort)
	c, err := net.Dial("tcp4", "127.0.0.1:"+itoa(o.TCPPort))
	must(t, err)
	defer c.Close()
	_, err = c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: 10.9.0.1:19875\r\nUser-Agent: probe\r\n\r\n"))
	must(t, err)
	s := <-done
	if exitCode(s.err) != 1 || !strings.Contains(s.errOut, "hint: the peer's 34 bytes are no RC demo connection record (its QP number 0x") ||
		strings.Contains(s.errOut, "GIDs differ") || !strings.Contains(s.errOut, `they begin "GET /healthz HTT"`) {
		t.Errorf("err %v, stderr:\n%s", s.err, s.errOut)
	}
}

// stackWithoutVerbs opens devices that offer no verbs resources
// (rdma.VerbsDevice), as a captured device does.
type stackWithoutVerbs struct{ *rdmatest.Fabric }

func (s stackWithoutVerbs) Open(name string) (rdma.Device, error) {
	d, err := s.Fabric.Open(name)
	if err != nil {
		return nil, err
	}
	return struct{ rdma.Device }{d}, nil
}

// A device that makes no resources fails where the original's PD would.
func TestRunDeviceWithoutVerbs(t *testing.T) {
	l := newLab(t)
	o := opts("rxe0", 1)
	o.TCPPort, o.RDMA, o.Timeout = freePort(t), stackWithoutVerbs{l.fab}, 10*time.Second
	done := make(chan side)
	go func() {
		var out, errOut bytes.Buffer
		o.IO = cli.Test(nil, &out, &errOut)
		err := Run(context.Background(), &o)
		done <- side{out.String(), errOut.String(), err}
	}()
	waitListening(t, o.TCPPort)
	cl := l.run(Options{Server: "127.0.0.1", Device: "rxe0", IBPort: 1, GRH: true, GIDIndex: 1, TCPPort: o.TCPPort})
	s := <-done
	if exitCode(s.err) != 1 || !strings.HasPrefix(s.errOut, "ibv_alloc_pd failed\nfailed to create resources\n") {
		t.Errorf("server: %v, stderr %q", s.err, s.errOut)
	}
	if exitCode(cl.err) != 1 {
		t.Errorf("client: %v", cl.err)
	}
}
