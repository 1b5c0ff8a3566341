package serve

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cm"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// The rdma_cm tools' clients of pkg/cm against the responder.

func runClient(f *rdmatest.Fabric, tool string) (string, int) {
	var out, errOut strings.Builder
	o := &cm.Options{Tool: tool, Server: "127.0.0.1", Connections: 1, Count: cm.DefaultCount, Size: cm.DefaultSize,
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
