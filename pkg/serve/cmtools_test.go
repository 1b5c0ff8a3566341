package serve

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/cm"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// The rdma_cm tools' clients of pkg/cm against the responder.

func runClient(f *rdmatest.Fabric, tool string) (string, int) {
	return runClientOf(f, tool, cm.DefaultCount, cm.DefaultSize)
}

// runClientOf runs tool's client with -C count -S size.
func runClientOf(f *rdmatest.Fabric, tool string, count, size int) (string, int) {
	var out, errOut strings.Builder
	o := &cm.Options{Tool: tool, Server: "127.0.0.1", Connections: 1, Count: count, Size: size,
		Port: "7471", PortSpace: rdma.PortSpaceTCP, Timeout: 5 * time.Second, CM: f, IO: cli.Test(nil, &out, &errOut)}
	if tool == "udaddy" {
		o.PortSpace = rdma.PortSpaceUDP
	}
	err := cm.Run(context.Background(), o)
	return out.String() + errOut.String(), cli.ExitCode(err)
}

func TestServeAnswersTheRDMACMToolsClients(t *testing.T) {
	f := loopbackFabric()
	_, log, stop := startServe(t, f, nil)
	for _, tool := range []string{"udaddy", "ucmatose", "rdma_client", "ucmatose"} {
		if out, code := runClient(f, tool); code != 0 {
			t.Errorf("%s against serve: exit %d\n%s", tool, code, out)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	got := map[string]int{}
	for _, e := range log.all() {
		if !e.OK || e.Peer != "127.0.0.1" || e.Error != "" {
			t.Errorf("log entry %+v", e)
		}
		got[e.Test]++
	}
	if got[TestUdaddy] != 1 || got[TestUcmatose] != 2 || got[TestRDMAClient] != 1 || len(got) != 3 {
		t.Errorf("log tests %v, want udaddy 1, ucmatose 2, rdma_client 1", got)
	}
	for _, ps := range []rdma.PortSpace{rdma.PortSpaceTCP, rdma.PortSpaceUDP} {
		for _, port := range []uint16{DefaultToolsPort, DefaultUDPort} {
			if f.Listening(ps, port) {
				t.Errorf("still listening on %#x port %d after stopping", int(ps), port)
			}
		}
	}
}

// Clients of other counts and sizes than the tools' defaults pass, and
// serve logs each session as ok with what it exchanged once the client
// falls silent.
func TestServeAnswersAnyCountAndSize(t *testing.T) {
	f := loopbackFabric()
	_, log, stop := startServe(t, f, nil)
	for _, c := range []struct {
		tool        string
		count, size int
	}{{"udaddy", 3, 50}, {"ucmatose", 25, 4000}} {
		if out, code := runClientOf(f, c.tool, c.count, c.size); code != 0 {
			t.Errorf("%s -C %d -S %d against serve: exit %d\n%s", c.tool, c.count, c.size, code, out)
		}
	}
	got := waitLogged(t, log, "", 2)
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	// Each session is logged when its own silence ends, so the two
	// entries may come in either order.
	byTest := map[string]Entry{}
	for _, e := range got {
		byTest[e.Test] = e
	}
	for _, want := range []struct {
		test string
		msgs Messages
		line string
	}{
		{TestUdaddy, Messages{3, 50}, "s 3 messages each way, the client's of 50 bytes"},
		{TestUcmatose, Messages{25, 4000}, "s 25 messages each way, the client's of 4000 bytes"},
	} {
		e := byTest[want.test]
		if !e.OK || e.Test != want.test || e.Messages == nil || *e.Messages != want.msgs || e.Seconds < 2 {
			t.Errorf("entry %+v (messages %+v), want %s ok after the client's 2s of silence with %+v", e, e.Messages, want.test, want.msgs)
		}
		if line := FormatEntry(e); !strings.HasSuffix(line, want.line) {
			t.Errorf("log line %q, want it to end in %q", line, want.line)
		}
	}
}

func TestServeToolsPortsOff(t *testing.T) {
	f := loopbackFabric()
	startServe(t, f, func(c *Config) { c.ToolsPort, c.UDPort = 0, 0 })
	if f.Listening(rdma.PortSpaceTCP, DefaultToolsPort) || f.Listening(rdma.PortSpaceUDP, DefaultUDPort) {
		t.Fatal("ports 0 listen")
	}
	if out, code := runClient(f, "ucmatose"); code == 0 || !strings.Contains(out, "REJECTED") {
		t.Errorf("ucmatose with the tools port off: exit %d\n%s", code, out)
	}
}

// stalledClient connects to serve's tools port and, once serve accepted,
// does nothing more (its own QP never readied).
func stalledClient(t *testing.T, f *rdmatest.Fabric) {
	t.Helper()
	ec, _ := f.CreateEventChannel()
	id, _ := ec.CreateID()
	t.Cleanup(func() { id.Close(); ec.Close() })
	_ = id.ResolveAddr(netip.Addr{}, netip.AddrPortFrom(lo, DefaultToolsPort), time.Second)
	for _, want := range []rdma.CMEventType{rdma.CMEventAddrResolved, rdma.CMEventRouteResolved} {
		ev, err := ec.GetEvent(time.Second)
		if err != nil || ev.Type != want {
			t.Fatalf("client event %v %v, want %v", ev.Type, err, want)
		}
		if want == rdma.CMEventAddrResolved {
			_ = id.ResolveRoute(time.Second)
		}
	}
	if err := id.Connect(nil); err != nil {
		t.Fatal(err)
	}
	if ev, err := ec.GetEvent(5 * time.Second); err != nil || ev.Type != rdma.CMEventConnectResponse {
		t.Fatalf("client event %v %v, want serve's accept", ev.Type, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not after 10s", what)
		}
	}
}

// A stopped serve ends a session that waits on a silent client at once,
// with a line that says so.
func TestServeStopEndsAToolsSession(t *testing.T) {
	f := loopbackFabric()
	_, log, stop := startServe(t, f, func(c *Config) { c.Timeout = time.Minute })
	stalledClient(t, f)
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("stopping took %v with a session waiting", d)
	}
	es := log.all()
	if len(es) != 1 || es[0].OK || es[0].Test != TestRDMAClient || !strings.Contains(es[0].Error, "server shutting down") {
		t.Errorf("log %+v", es)
	}
}

// A client beyond --max-per-peer is refused with a busy line.
func TestServeToolsBusy(t *testing.T) {
	f := loopbackFabric()
	_, log, _ := startServe(t, f, func(c *Config) { c.MaxPerPeer = 1 })
	stalledClient(t, f)
	if out, code := runClient(f, "ucmatose"); code == 0 {
		t.Errorf("second client admitted: %s", out)
	}
	waitFor(t, "a busy line", func() bool {
		for _, e := range log.all() {
			if e.Test == TestUcmatose && strings.Contains(e.Error, "busy") && e.Hint == busyHint {
				return true
			}
		}
		return false
	})
}

// An udaddy or ucmatose session's JSON line is a serve-line document.
func TestLogCMToolsLineSchema(t *testing.T) {
	var js bytes.Buffer
	NewLog(&js, true).Write(Entry{Time: time.Date(2026, 11, 24, 7, 41, 0, 101e6, time.UTC), Peer: "10.9.0.2", Test: TestUcmatose, OK: true, Seconds: 2.047,
		Messages: &Messages{Count: 50, Bytes: 4096}})
	if err := schema.Validate("serve-line", js.Bytes()); err != nil {
		t.Errorf("%s: against its schema: %v", js.String(), err)
	}
	if !strings.Contains(js.String(), `"messages":{"count":50,"bytes":4096}`) {
		t.Errorf("JSON line %s", js.String())
	}
}
