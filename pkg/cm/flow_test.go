package cm

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// These tests run the tools' flows over rdmatest's fabric: two Soft-RoCE
// like devices, rxe0 on 10.9.0.1 and rxe1 on 10.9.0.2, whose connection
// manager raises rdma_cm's events and whose QPs move the messages.

var (
	ip1 = netip.MustParseAddr("10.9.0.1")
	ip2 = netip.MustParseAddr("10.9.0.2")
)

func newFabric() (*rdmatest.Fabric, *rdmatest.Device, *rdmatest.Device) {
	f := rdmatest.NewFabric()
	return f, f.AddRoCEDevice("rxe0", ip1), f.AddRoCEDevice("rxe1", ip2)
}

// result is what one run printed and its exit code.
type result struct {
	out, err string
	code     int
}

// options are a tool's defaults as cmd/rdmactl gives them, with a
// --timeout that keeps a broken flow from hanging the test.
func options(stack rdma.CM, tool string, mod func(o *Options)) *Options {
	o := &Options{Tool: tool, Connections: 1, Count: 10, Size: 100, Port: "7471", PortSpace: rdma.PortSpaceTCP,
		Timeout: 5 * time.Second, CM: stack}
	if tool == "udaddy" || tool == "mckey" {
		o.PortSpace = rdma.PortSpaceUDP
	}
	if mod != nil {
		mod(o)
	}
	return o
}

func run(o *Options) result {
	var out, errOut strings.Builder
	o.IO = cli.Test(nil, &out, &errOut)
	err := Run(context.Background(), o)
	return result{out.String(), errOut.String(), cli.ExitCode(err)}
}

func runTool(t *testing.T, stack rdma.CM, tool string, mod func(o *Options)) (string, string, error) {
	t.Helper()
	var out, errOut strings.Builder
	o := options(stack, tool, mod)
	o.IO = cli.Test(nil, &out, &errOut)
	err := Run(context.Background(), o)
	return out.String(), errOut.String(), err
}

// waitUntil polls cond for up to 5 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not after 5s", what)
}

// pair runs srv, then cl once the server listens on port.
func pair(t *testing.T, f *rdmatest.Fabric, srv, cl *Options, port uint16) (s, c result) {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- run(srv) }()
	waitUntil(t, "the server listens", func() bool { return f.Listening(srv.PortSpace, port) })
	c = run(cl)
	select {
	case s = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the server still runs 10s after its client ended (client %+v)", c)
	}
	return s, c
}

func TestUcmatoseServerAndClientExchangeMessages(t *testing.T) {
	f, _, _ := newFabric()
	srv := options(f, "ucmatose", func(o *Options) { o.Connections = 2 })
	cl := options(f, "ucmatose", func(o *Options) { o.Server, o.Connections = "10.9.0.1", 2 })
	s, c := pair(t, f, srv, cl, 7471)
	wantSrv := "cmatose: starting server\ninitiating data transfers\ncompleting sends\nreceiving data transfers\n" +
		"data transfers complete\ncmatose: disconnecting\ndisconnected\ntest complete\nreturn status 0\n"
	wantCli := "cmatose: starting client\ncmatose: connecting\nreceiving data transfers\nsending replies\n" +
		"data transfers complete\ntest complete\nreturn status 0\n"
	if s != (result{wantSrv, "", 0}) {
		t.Errorf("server %+v", s)
	}
	if c != (result{wantCli, "", 0}) {
		t.Errorf("client %+v", c)
	}
	// Each connection's 10 messages went out and 10 replies came back.
	if got := f.Posts(rdma.WRSend); got != 2*2*10 {
		t.Errorf("%d sends on the fabric, want 40", got)
	}
}

func TestUcmatoseMigratesToANewChannel(t *testing.T) {
	f, _, _ := newFabric()
	srv := options(f, "ucmatose", func(o *Options) { o.Migrate, o.Count = true, 0 })
	cl := options(f, "ucmatose", func(o *Options) { o.Server, o.Migrate, o.Count = "10.9.0.1", true, 0 })
	s, c := pair(t, f, srv, cl, 7471)
	if s.code != 0 || !strings.Contains(s.out, "migrating to new event channel\ncmatose: disconnecting\ndisconnected\n") {
		t.Errorf("server %+v", s)
	}
	if c.code != 0 || !strings.Contains(c.out, "migrating to new event channel\ntest complete\n") {
		t.Errorf("client %+v", c)
	}
}

func TestUdaddyServerRepliesToTheSender(t *testing.T) {
	f, _, _ := newFabric()
	srv := options(f, "udaddy", nil)
	cl := options(f, "udaddy", func(o *Options) { o.Server, o.SetTOS, o.TOS = "10.9.0.1", true, 32 })
	s, c := pair(t, f, srv, cl, 7174)
	wantSrv := "udaddy: starting server\nreceiving data transfers\nsending replies\ndata transfers complete\ntest complete\nreturn status 0\n"
	wantCli := "udaddy: starting client\nudaddy: connecting\ninitiating data transfers\nreceiving data transfers\n" +
		"data transfers complete\ntest complete\nreturn status 0\n"
	if s != (result{wantSrv, "", 0}) {
		t.Errorf("server %+v", s)
	}
	if c != (result{wantCli, "", 0}) {
		t.Errorf("client %+v", c)
	}
	if got := f.Posts(rdma.WRSendWithImm); got != 20 {
		t.Errorf("%d datagrams, want 20", got)
	}
}

func TestUdaddyJSONDocument(t *testing.T) {
	f, _, _ := newFabric()
	srv := options(f, "udaddy", nil)
	cl := options(f, "udaddy", func(o *Options) { o.Server, o.JSON = "10.9.0.1", true })
	_, c := pair(t, f, srv, cl, 7174)
	var doc runDocument
	if err := json.Unmarshal([]byte(c.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, c.out)
	}
	if err := schema.Validate("cm", []byte(c.out)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	if !doc.OK || doc.Role != "client" || doc.Connected != 1 || doc.Messages != 20 || doc.Error != nil ||
		strings.Join(doc.Output, "|") != "udaddy: starting client|udaddy: connecting|initiating data transfers|receiving data transfers|data transfers complete|test complete|return status 0" {
		t.Errorf("document %s", c.out)
	}
}

func TestRDMAServerAndClient(t *testing.T) {
	f, _, _ := newFabric()
	s, c := pair(t, f, options(f, "rdma_server", nil), options(f, "rdma_client", func(o *Options) { o.Server = "10.9.0.1" }), 7471)
	if s != (result{"rdma_server: start\nrdma_server: end 0\n", "", 0}) {
		t.Errorf("server %+v", s)
	}
	if c != (result{"rdma_client: start\nrdma_client: end 0\n", "", 0}) {
		t.Errorf("client %+v", c)
	}
}

func TestRDMAClientJSON(t *testing.T) {
	f, _, _ := newFabric()
	_, c := pair(t, f, options(f, "rdma_server", nil), options(f, "rdma_client", func(o *Options) { o.Server, o.JSON = "10.9.0.1", true }), 7471)
	var doc runDocument
	if err := json.Unmarshal([]byte(c.out), &doc); err != nil || !doc.OK || doc.Messages != 2 || doc.Size != msgLen {
		t.Errorf("%v: %s", err, c.out)
	}
}

func TestMckeySenderReachesTheReceiver(t *testing.T) {
	defer func(d time.Duration) { mckeySettle = d }(mckeySettle)
	mckeySettle = 20 * time.Millisecond
	f, _, _ := newFabric()
	group := netip.MustParseAddr("239.1.1.1")
	done := make(chan result, 1)
	go func() { done <- run(options(f, "mckey", func(o *Options) { o.Group = "239.1.1.1" })) }()
	waitUntil(t, "the receiver joins", func() bool { return f.Members(group) == 1 })
	snd := run(options(f, "mckey", func(o *Options) { o.Group, o.Sender, o.NoLoopback = "239.1.1.1", true, true }))
	rcv := <-done
	joined := "mckey: joined dgid: ::ffff:239.1.1.1 mlid 0x0 sl 0\n"
	if want := "mckey: starting client\nmckey: joining\n" + joined + "initiating data transfers\ndata transfers complete\ntest complete\nreturn status 0\n"; snd != (result{want, "", 0}) {
		t.Errorf("sender %+v", snd)
	}
	if want := "mckey: starting server\nmckey: joining\n" + joined + "receiving data transfers\ndata transfers complete\ntest complete\nreturn status 0\n"; rcv != (result{want, "", 0}) {
		t.Errorf("receiver %+v", rcv)
	}
	if f.Members(group) != 0 {
		t.Error("the receiver did not leave the group")
	}
}

func TestMckeyReceiverTimesOutWithoutSender(t *testing.T) {
	defer func(d time.Duration) { mckeySettle = d }(mckeySettle)
	mckeySettle = time.Millisecond
	f, _, _ := newFabric()
	r := run(options(f, "mckey", func(o *Options) { o.Group, o.Timeout = "239.1.1.1", 50*time.Millisecond }))
	if r.code != cli.ExitFailed || !strings.Contains(r.err, "timed out after 50ms waiting for multicast data") ||
		!strings.Contains(r.err, "hint: the group was joined but no datagram arrived") {
		t.Errorf("%+v", r)
	}
}

func TestMckeyJoinOfAUnicastAddressFails(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "mckey", func(o *Options) { o.Group = "10.9.0.2" }))
	if r.out != "mckey: starting server\nmckey: joining\ntest complete\nreturn status -1\n" || r.code != 255 ||
		!strings.HasPrefix(r.err, "mckey: failure joining: Invalid argument\n") || !strings.Contains(r.err, "hint: the multicast join was refused") {
		t.Errorf("%+v", r)
	}
}

func TestCmtimeTimesEachStep(t *testing.T) {
	f, _, _ := newFabric()
	srv := options(f, "cmtime", func(o *Options) { o.Timeout = 200 * time.Millisecond })
	cl := options(f, "cmtime", func(o *Options) { o.Server, o.Connections = "10.9.0.1", 3 })
	s, c := pair(t, f, srv, cl, 7471)
	steps := "creating id\nresolving address\nresolving route\ncreating qp\nconnecting\ndisconnecting\ndestroying id\n"
	if c.code != 0 || !strings.HasPrefix(c.out, steps) || c.err != "" {
		t.Errorf("client %+v", c)
	}
	for _, step := range []string{"create id", "resolve addr", "resolve route", "create qp", "connect", "disconnect", "destroy"} {
		if !strings.Contains(c.out[len(steps):], step) {
			t.Errorf("the table has no %q row:\n%s", step, c.out)
		}
	}
	if s.code != 0 || !strings.Contains(s.err, "no rdma_cm event for 200ms (--timeout): server ends") {
		t.Errorf("server %+v", s)
	}
}

// cmtime's client takes each event as it comes, as cmtime's event thread
// does, not once it has started every connection: while its second
// rdma_connect is slow, the first connection is established and stamped.
func TestCmtimeTakesEventsWhileItConnects(t *testing.T) {
	f, _, _ := newFabric()
	const slow = 400 * time.Millisecond
	f.DelayConnect(2, slow)
	srv := options(f, "cmtime", func(o *Options) { o.Timeout = 2 * slow })
	cl := options(f, "cmtime", func(o *Options) { o.Server, o.Connections, o.JSON = "10.9.0.1", 2, true })
	_, c := pair(t, f, srv, cl, 7471)
	var doc CmtimeDocument
	if err := json.Unmarshal([]byte(c.out), &doc); err != nil || c.code != 0 {
		t.Fatalf("client %+v: %v", c, err)
	}
	for _, r := range doc.Steps {
		if r.Step == "connect" && (r.MinUs >= float64(slow.Microseconds())/2 || r.MaxMs < float64(slow.Milliseconds())) {
			t.Errorf("connect took %.0f us at least and %.1f ms at most, want the first well under %v and the second over it", r.MinUs, r.MaxMs, slow)
		}
	}
}

// A server that ends each connection as soon as it is up: the client's
// ids see DISCONNECTED before its own disconnect, which then raises none.
// cmtime's disconnect step counts them and ends, and so does rdmactl's,
// well within --timeout.
func TestCmtimeServerThatDisconnectsFirst(t *testing.T) {
	f, _, _ := newFabric()
	ch, err := f.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	l, _ := ch.CreateID()
	if err := l.Bind(netip.AddrPortFrom(ip1, 7471)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(4); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		var verbs cmtimeVerbs
		defer verbs.close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ev, err := ch.GetEvent(10 * time.Millisecond)
			if err != nil {
				continue
			}
			switch ev.Type {
			case rdma.CMEventConnectRequest:
				if _, err := verbs.createQP(ev.ID); err == nil {
					ev.ID.Accept(nil)
				}
			case rdma.CMEventEstablished:
				ev.ID.Disconnect()
			}
		}
	}()
	defer func() { close(stop); <-served }()
	began := time.Now()
	r := run(options(f, "cmtime", func(o *Options) { o.Server, o.Connections, o.Timeout = "10.9.0.1", 3, 2*time.Second }))
	if r.code != 0 || r.err != "" || !strings.Contains(r.out, "disconnecting\ndestroying id\n") || time.Since(began) > time.Second {
		t.Errorf("after %v: %+v", time.Since(began), r)
	}
}

// cmtime's QPs share the CQs made for the first one on each side, as
// every rdma_create_qp of the C tool gets the first QP's CQs back.
func TestCmtimeQPsShareTheFirstQPsCQs(t *testing.T) {
	f, _, _ := newFabric()
	srv := options(f, "cmtime", func(o *Options) { o.Timeout = 200 * time.Millisecond })
	cl := options(f, "cmtime", func(o *Options) { o.Server, o.Connections = "10.9.0.1", 4 })
	if _, c := pair(t, f, srv, cl, 7471); c.code != 0 {
		t.Fatalf("client %+v", c)
	}
	qps := f.QPRecords()
	cqs := map[*rdmatest.CQ]bool{}
	for _, q := range qps {
		cqs[q.SendCQ], cqs[q.RecvCQ] = true, true
	}
	if len(qps) != 8 || len(cqs) != 4 {
		t.Errorf("%d QPs on %d CQs, want 8 QPs on 4 (a send and a receive CQ on each side)", len(qps), len(cqs))
	}
}

func TestCmtimeReportsRejectedConnections(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "cmtime", func(o *Options) { o.Server, o.Connections = "10.9.0.1", 2 }))
	if r.code != 0 || strings.Count(r.out, "event: RDMA_CM_EVENT_REJECTED, error: 8\n") != 2 || !strings.Contains(r.err, "hint: nothing listens on 10.9.0.1") {
		t.Errorf("%+v", r)
	}
}

func TestUcmatoseRejectedAsTheCToolReportsIt(t *testing.T) {
	f, _, _ := newFabric()
	out, errOut, err := runTool(t, f, "ucmatose", func(o *Options) { o.Server = "10.9.0.1" })
	want := "cmatose: starting client\ncmatose: connecting\ncmatose: event: RDMA_CM_EVENT_REJECTED, error: 8\ntest complete\nreturn status 8\n"
	if out != want {
		t.Errorf("stdout %q\nwant   %q", out, want)
	}
	if cli.ExitCode(err) != 8 || !strings.Contains(errOut, "hint: nothing listens on 10.9.0.1") {
		t.Errorf("exit %d, stderr %q", cli.ExitCode(err), errOut)
	}
}

func TestUdaddyWithoutServerIsUnreachable(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "udaddy", func(o *Options) { o.Server = "10.9.0.1" }))
	want := "udaddy: starting client\nudaddy: connecting\nudaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: 1\ntest complete\nreturn status 1\n"
	if r.out != want || r.code != 1 || !strings.Contains(r.err, "hint: 10.9.0.1 did not answer the connect request") {
		t.Errorf("%+v", r)
	}
}

func TestAddressNobodyAnswers(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "ucmatose", func(o *Options) { o.Server = "10.9.0.77" }))
	want := "cmatose: starting client\ncmatose: connecting\ncmatose: event: RDMA_CM_EVENT_ADDR_ERROR, error: -110\ntest complete\nreturn status -110\n"
	if r.out != want || r.code != 146 || !strings.Contains(r.err, "hint: no neighbour answered ARP/ND for 10.9.0.77") {
		t.Errorf("%+v", r)
	}
}

// A server whose setup of a connection fails refuses it: the client sees
// REJECTED with the consumer's reason.
func TestServerSetupFailureRejectsTheClient(t *testing.T) {
	f, rxe0, _ := newFabric()
	rxe0.FailNext("ibv_create_cq", rdma.Errorf("ibv_create_cq", syscall.ENOMEM))
	srv := options(f, "ucmatose", nil)
	cl := options(f, "ucmatose", func(o *Options) { o.Server, o.Bind = "10.9.0.1", "10.9.0.2" })
	s, c := pair(t, f, srv, cl, 7471)
	if s.out != "cmatose: starting server\ncmatose: unable to create CQ\ncmatose: failing connection request\ntest complete\nreturn status -12\n" || s.code != 244 {
		t.Errorf("server %+v", s)
	}
	want := "cmatose: starting client\ncmatose: connecting\ncmatose: event: RDMA_CM_EVENT_REJECTED, error: 28\ntest complete\nreturn status 28\n"
	if c.out != want || c.code != 28 || !strings.Contains(c.err, "hint: the server on 10.9.0.1 rejected the connect request (reason 28)") {
		t.Errorf("client %+v", c)
	}
}

func TestPostSendFailureEndsTheRun(t *testing.T) {
	f, rxe0, _ := newFabric()
	rxe0.FailNext("ibv_post_send", rdma.Errorf("ibv_post_send", syscall.ENOMEM))
	srv := options(f, "ucmatose", nil)
	cl := options(f, "ucmatose", func(o *Options) { o.Server, o.Bind, o.Timeout = "10.9.0.1", "10.9.0.2", 100*time.Millisecond })
	s, c := pair(t, f, srv, cl, 7471)
	if !strings.HasSuffix(s.out, "initiating data transfers\nfailed to post sends: 12\ntest complete\nreturn status 12\n") || s.code != 12 {
		t.Errorf("server %+v", s)
	}
	if c.code != cli.ExitFailed || !strings.Contains(c.err, "timed out after 100ms waiting for completions") {
		t.Errorf("client %+v", c)
	}
}

func TestRDMAClientRefused(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "rdma_client", func(o *Options) { o.Server = "10.9.0.1" }))
	if r.out != "rdma_client: start\nrdma_client: end -1\n" || r.code != 255 ||
		!strings.HasPrefix(r.err, "rdma_connect: Connection refused\n") || !strings.Contains(r.err, "hint: nothing listens on 10.9.0.1") {
		t.Errorf("%+v", r)
	}
}

func TestRDMAClientNoServer(t *testing.T) {
	f, _, _ := newFabric()
	out, errOut, err := runTool(t, f, "rdma_client", func(o *Options) { o.Server = "10.9.0.77" })
	if out != "rdma_client: start\nrdma_client: end -1\n" || cli.ExitCode(err) != 255 {
		t.Errorf("stdout %q exit %d", out, cli.ExitCode(err))
	}
	if !strings.HasPrefix(errOut, "rdma_create_ep: Connection timed out\n") || !strings.Contains(errOut, "hint: no neighbour answered") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestRDMAServerTimesOutWithoutClient(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "rdma_server", func(o *Options) { o.Timeout, o.JSON = 30*time.Millisecond, true }))
	var doc runDocument
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil || doc.OK || doc.Error == nil || doc.Error.Code != 1 ||
		doc.Error.Message != "timed out after 30ms waiting for a connect request (--timeout)" || r.code != cli.ExitFailed {
		t.Errorf("%v: %+v", err, r)
	}
}

// A listener that never answers: the client gives up under --timeout.
func TestClientTimesOutWhenTheServerNeverAnswers(t *testing.T) {
	f, _, _ := newFabric()
	ch, err := f.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	l, _ := ch.CreateID()
	if err := l.Bind(netip.AddrPortFrom(ip1, 7471)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(1); err != nil {
		t.Fatal(err)
	}
	r := run(options(f, "ucmatose", func(o *Options) { o.Server, o.Timeout = "10.9.0.1", 30*time.Millisecond }))
	if r.out != "cmatose: starting client\ncmatose: connecting\n" || r.code != cli.ExitFailed ||
		!strings.Contains(r.err, "timed out after 30ms waiting for an rdma_cm event") ||
		!strings.Contains(r.err, "hint: no answer from 10.9.0.1 within --timeout") {
		t.Errorf("%+v", r)
	}
}

func TestTimeoutEndsTheRunWithExitOne(t *testing.T) {
	f, _, _ := newFabric()
	out, errOut, err := runTool(t, f, "udaddy", func(o *Options) { o.Timeout = time.Second / 20 })
	if out != "udaddy: starting server\n" || cli.ExitCode(err) != 1 {
		t.Errorf("stdout %q exit %d", out, cli.ExitCode(err))
	}
	if !strings.Contains(errOut, "timed out after 50ms waiting for a connect request") || !strings.Contains(errOut, "hint: no client connected") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestBindFailures(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "ucmatose", func(o *Options) { o.Bind = "10.77.0.1" }))
	if r.out != "cmatose: starting server\ntest complete\nreturn status -1\n" || r.code != 255 ||
		!strings.HasPrefix(r.err, "cmatose: bind address failed: No such device\n") || !strings.Contains(r.err, "hint: -b is not an address of a netdev with an RDMA device") {
		t.Errorf("no device: %+v", r)
	}
	done := make(chan result, 1)
	go func() { done <- run(options(f, "ucmatose", func(o *Options) { o.Timeout = 200 * time.Millisecond })) }()
	waitUntil(t, "the first server listens", func() bool { return f.Listening(rdma.PortSpaceTCP, 7471) })
	r = run(options(f, "ucmatose", nil))
	if !strings.HasPrefix(r.err, "cmatose: bind address failed: Address already in use\n") || !strings.Contains(r.err, "hint: the port is taken") || r.code != 255 {
		t.Errorf("port taken: %+v", r)
	}
	<-done
}

func TestMessageLargerThanTheMTU(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "udaddy", func(o *Options) { o.Server, o.Size = "10.9.0.1", 2000 }))
	if r.out != "udaddy: starting client\nudaddy: connecting\nudaddy: message_size 2000 is larger than active mtu 1024\ntest complete\nreturn status -22\n" || r.code != 234 {
		t.Errorf("%+v", r)
	}
}

func TestLookupFailure(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "ucmatose", func(o *Options) { o.Server = "no.such.host.invalid" }))
	if r.out != "cmatose: starting client\nrdma_getaddrinfo error: Temporary failure in name resolution\ntest complete\nreturn status -1\n" || r.code != 255 {
		t.Errorf("%+v", r)
	}
}

func TestUnknownPortSpace(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "udaddy", func(o *Options) { o.PortSpace = 0x999 }))
	if r.out != "udaddy: starting server\ntest complete\nreturn status -1\n" || r.code != 255 ||
		!strings.HasPrefix(r.err, "udaddy: listen request failed: Invalid argument\n") || !strings.Contains(r.err, "hint: the port space is not one rdma_cm knows") {
		t.Errorf("%+v", r)
	}
}

func TestNoDeviceIsReportedAsTheCToolsDo(t *testing.T) {
	for _, tool := range []string{"udaddy", "ucmatose", "mckey", "cmtime"} {
		out, errOut, err := runTool(t, rdmatest.NewFabric(), tool, func(o *Options) { o.Group = "239.1.1.1" })
		if out != "" || !strings.HasPrefix(errOut, "No RDMA devices were detected\n") || cli.ExitCode(err) != 1 {
			t.Errorf("%s: stdout %q stderr %q exit %d", tool, out, errOut, cli.ExitCode(err))
		}
	}
	f, _, _ := newFabric()
	f.FailNext("rdma_create_event_channel", rdma.Errorf("rdma_create_event_channel", syscall.ENOENT))
	r := run(options(f, "ucmatose", nil))
	if r.out != "" || !strings.HasPrefix(r.err, "failed to create RDMA CM event channel: No such file or directory\n") || r.code != 1 {
		t.Errorf("no rdma_cm device file: %+v", r)
	}
}

func TestMckeyUnmappedNeedsBind(t *testing.T) {
	f, _, _ := newFabric()
	out, _, err := runTool(t, f, "mckey", func(o *Options) { o.Unmapped, o.Group = true, "ff12::1" })
	if out != "unmapped multicast address requires binding to source address\n" || cli.ExitCode(err) != 1 {
		t.Errorf("stdout %q exit %d", out, cli.ExitCode(err))
	}
}

func TestUnknownTool(t *testing.T) {
	if err := Run(context.Background(), &Options{Tool: "rping"}); err == nil || !strings.Contains(err.Error(), `unknown rdma_cm tool "rping"`) {
		t.Errorf("%v", err)
	}
}

func TestJSONDocumentOfARefusedClient(t *testing.T) {
	f, _, _ := newFabric()
	r := run(options(f, "ucmatose", func(o *Options) { o.Server, o.JSON = "10.9.0.1", true }))
	var doc runDocument
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if err := schema.Validate("cm", []byte(r.out)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	if doc.OK || doc.Connected != 0 || doc.Messages != 0 || doc.Error == nil || doc.Error.Code != 8 ||
		doc.Error.Message != "RDMA_CM_EVENT_REJECTED, error: 8" || !strings.Contains(doc.Error.Hint, "nothing listens on 10.9.0.1") || r.code != 8 {
		t.Errorf("exit %d, document %s", r.code, r.out)
	}
}

func TestUcmatoseWithTOSAndAckTimeout(t *testing.T) {
	f, _, _ := newFabric()
	set := func(o *Options) {
		o.SetTOS, o.TOS, o.SetAck, o.AckTimeout, o.Count, o.JSON = true, 32, true, 14, 3, true
	}
	srv := options(f, "ucmatose", set)
	cl := options(f, "ucmatose", func(o *Options) { set(o); o.Server = "10.9.0.1" })
	s, c := pair(t, f, srv, cl, 7471)
	for _, r := range []result{s, c} {
		var doc runDocument
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil || !doc.OK || doc.Connected != 1 || doc.Messages != 6 || r.code != 0 {
			t.Errorf("%v: exit %d, document %s", err, r.code, r.out)
		}
	}
}
