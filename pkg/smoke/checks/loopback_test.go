package checks

import (
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/doctor"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/smoke"
)

// loopbackSystem is a host whose only RoCE address is 127.0.0.1 (rxe0 of
// peerFabric), on a netdev that is not the loopback one.
func loopbackSystem() System {
	return System{
		Netdevs: func() ([]host.Netdev, error) {
			return []host.Netdev{{Name: "veth0", Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}}}, nil
		},
		RouteTo:       func(netip.Addr) (string, netip.Addr, error) { return "veth0", loopback, nil },
		RoCEPort:      func(string, netip.Addr) (host.RoCEPort, bool) { return loopRoute().RoCEPort, true },
		HasRDMA:       func(string) bool { return true },
		FirstRoCEAddr: func() (netip.Addr, bool) { return loopback, true },
	}
}

// A run without peers starts its own responder (serve) on the host's RoCE
// address and checks it: route, ping, demo and write_bw pass over the
// fabric (the local checks fail on empty facts); the JUnit file and the
// document say the same.
func TestRunAgainstItsOwnLoopbackResponder(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "smoke.xml")
	var out strings.Builder
	err := Run(context.Background(), Options{
		Config:  Config{System: loopbackSystem(), Count: 3, BW: true, RDMA: peerFabric()},
		Timeout: 10 * time.Second, Concurrency: 1, JSON: true, JUnitFile: junit,
		Gather: func() *doctor.Facts { return &doctor.Facts{} },
	}, &out)
	if cli.ExitCode(err) != cli.ExitFailed {
		t.Errorf("exit %d (%v), want 1: the local checks fail on these empty facts", cli.ExitCode(err), err)
	}
	var rep smoke.Report
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil || len(rep.Peers) != 1 {
		t.Fatalf("document %s (%v)", out.String(), err)
	}
	want := map[string]bool{CheckRoute: true, CheckPing: true, CheckDemo: true, CheckWriteBW: true}
	for _, r := range rep.Peers[0].Checks {
		ok, named := want[r.Check]
		if !named || r.OK != ok {
			t.Errorf("%s: %+v, want ok=%v", r.Check, r, ok)
		}
		delete(want, r.Check)
	}
	if len(want) != 0 {
		t.Errorf("checks not run: %v", want)
	}
	if rep.Peers[0].Peer != "127.0.0.1" {
		t.Errorf("peer %q", rep.Peers[0].Peer)
	}
	xml, err := os.ReadFile(junit)
	_, peerSuite, _ := strings.Cut(string(xml), `<testsuite name="127.0.0.1"`)
	if err != nil || strings.Count(peerSuite, "<failure") != 0 || !strings.Contains(peerSuite, `name="write_bw 127.0.0.1"`) {
		t.Errorf("JUnit file (%v):\n%s", err, xml)
	}
}

// No peer and no RoCE address: nothing to run a loopback on, said in one
// line with the fix.
func TestRunWithoutPeersOrRoCEAddress(t *testing.T) {
	sys := loopbackSystem()
	sys.FirstRoCEAddr = func() (netip.Addr, bool) { return netip.Addr{}, false }
	err := Run(context.Background(), Options{Config: Config{System: sys, RDMA: peerFabric()},
		Gather: func() *doctor.Facts { return &doctor.Facts{} }}, new(strings.Builder))
	if cli.ExitCode(err) != cli.ExitFailed || !strings.Contains(err.Error(), "rdmactl rxe add NETDEV") {
		t.Fatalf("got %v", err)
	}
}
