package checks

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/counters/counterstest"
	"github.com/rdmactl/rdmactl/pkg/doctor"
	"github.com/rdmactl/rdmactl/pkg/host"
)

// lab is the single-VM lab: veth0 10.9.0.1 with rxe0, veth1 10.9.0.2
// with rxe1, eth0 10.0.2.15 without RDMA, and a route to 192.168.7.0/24
// through eth0.
func lab() System {
	addr := func(s string) []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix(s)} }
	ports := map[netip.Addr]host.RoCEPort{
		netip.MustParseAddr("10.9.0.1"): {Device: "rxe0", Port: 1, GIDIndex: 1},
		netip.MustParseAddr("10.9.0.2"): {Device: "rxe1", Port: 1, GIDIndex: 1},
	}
	return System{
		Lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			if host == "node1" {
				return []netip.Addr{netip.MustParseAddr("10.9.0.1")}, nil
			}
			return nil, errors.New("no such host")
		},
		Netdevs: func() ([]host.Netdev, error) {
			return []host.Netdev{
				{Name: "lo", Loopback: true, Addrs: addr("127.0.0.1/8")},
				{Name: "eth0", Addrs: addr("10.0.2.15/24")},
				{Name: "veth0", Addrs: addr("10.9.0.1/24")},
				{Name: "veth1", Addrs: addr("10.9.0.2/24")},
			}, nil
		},
		RouteTo: func(dst netip.Addr) (string, netip.Addr, error) {
			switch {
			case netip.MustParsePrefix("10.9.0.0/24").Contains(dst):
				return "veth0", netip.MustParseAddr("10.9.0.1"), nil
			case netip.MustParsePrefix("192.168.7.0/24").Contains(dst):
				return "eth0", netip.MustParseAddr("10.0.2.15"), nil
			}
			return "", netip.Addr{}, syscall.ENETUNREACH
		},
		RoCEPort: func(netdev string, ip netip.Addr) (host.RoCEPort, bool) {
			p, ok := ports[ip]
			return p, ok
		},
		HasRDMA:       func(netdev string) bool { return strings.HasPrefix(netdev, "veth") },
		FirstRoCEAddr: func() (netip.Addr, bool) { return netip.MustParseAddr("10.9.0.1"), true },
	}
}

func TestResolveRoute(t *testing.T) {
	for _, c := range []struct {
		peer, want, err, hint string
	}{
		{peer: "10.9.0.1", want: "10.9.0.1 local on veth0: rxe0 port 1, GID index 1"},
		{peer: "node1", want: "10.9.0.1 local on veth0: rxe0 port 1, GID index 1"},
		{peer: "10.9.0.77", want: "10.9.0.77 via veth0 from 10.9.0.1: rxe0 port 1, GID index 1"},
		{peer: "192.168.7.9", err: "192.168.7.9 is reached via eth0 from 10.0.2.15, which no ACTIVE RDMA port carries as a RoCE v2 GID", hint: "rdmactl rxe add eth0"},
		{peer: "172.16.0.1", err: "no route to 172.16.0.1: network is unreachable", hint: "add a route to 172.16.0.1, or an address in its subnet on an RDMA netdev"},
		{peer: "nohost", err: "cannot resolve nohost: no such host", hint: "check the name (getent hosts nohost) or give the peer's IP address"},
		{peer: "fd09::2", err: "fd09::2 is not an IPv4 address"},
		// rxe add refuses lo: the hint must not send the user there.
		{peer: "127.0.0.1", err: "127.0.0.1 is reached via lo from 127.0.0.1, which no ACTIVE RDMA port carries as a RoCE v2 GID",
			hint: "lo is a loopback netdev, which carries no RDMA device: give the peer's address on an RDMA netdev (`rdmactl gids` lists this host's), or no PEER for a loopback run"},
	} {
		r, err := lab().ResolveRoute(context.Background(), c.peer)
		if c.err == "" {
			if err != nil || r.String() != c.want {
				t.Errorf("%s: %q, %v; want %q", c.peer, r.String(), err, c.want)
			}
			continue
		}
		var re *RouteError
		if !errors.As(err, &re) || re.Msg != c.err || (c.hint != "" && re.Hint != c.hint) {
			t.Errorf("%s: error %#v; want %q (hint %q)", c.peer, err, c.err, c.hint)
		}
	}
}

func TestRouteHintWhenTheDeviceLacksTheGID(t *testing.T) {
	s := lab()
	s.RouteTo = func(netip.Addr) (string, netip.Addr, error) { return "veth1", netip.MustParseAddr("10.9.0.5"), nil }
	_, err := s.ResolveRoute(context.Background(), "10.9.0.99")
	var re *RouteError
	if !errors.As(err, &re) || !strings.Contains(re.Hint, "has no RoCE v2 GID for 10.9.0.5") {
		t.Fatalf("error %#v", err)
	}
}

func TestRTTOf(t *testing.T) {
	r := rttOf([]float64{0.5, 0.25, 2, 1})
	if r.Count != 4 || r.P50 != 0.0005 || r.P99 != 0.002 || r.Max != 0.002 || r.Sum != 0.00375 {
		t.Fatalf("rttOf = %+v", r)
	}
	if r := rttOf([]float64{0.123456}); r.P50 != 0.000123 || r.P99 != 0.000123 {
		t.Fatalf("one RTT = %+v", r)
	}
}

func TestLocalMapsDoctorVerdicts(t *testing.T) {
	facts := &doctor.Facts{} // nothing at all: modules missing, no devices
	checks := Local(func() *doctor.Facts { return facts })
	if len(checks) != len(localChecks) {
		t.Fatalf("%d checks", len(checks))
	}
	results := doctor.RunChecks(facts, netip.Addr{})
	for _, c := range checks {
		got := c.Run(context.Background(), "")
		for _, r := range results {
			if r.Name == c.Name && got.OK != (r.Status != doctor.Fail) {
				t.Errorf("%s: doctor %s, smoke ok=%v", c.Name, r.Status, got.OK)
			}
		}
	}
	for _, c := range checks {
		if c.Name == doctor.CheckAddrs || c.Name == doctor.CheckGIDs {
			t.Errorf("%s is per route, not a local check", c.Name)
		}
	}
}

func TestPeers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hosts")
	if err := os.WriteFile(file, []byte("10.9.0.1 node1\n# x\n10.9.0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Options{Peers: []string{"10.9.0.2", "10.9.0.3"}, PeersFile: file}.peers()
	if err != nil || strings.Join(got, " ") != "10.9.0.2 10.9.0.3 10.9.0.1" {
		t.Fatalf("peers = %v, %v", got, err)
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("# none\n"), 0o644)
	for _, f := range []string{filepath.Join(dir, "missing"), empty} {
		_, err := Options{PeersFile: f}.peers()
		if cli.ExitCode(err) != cli.ExitUsage || !strings.HasPrefix(err.Error(), "--peers: ") {
			t.Errorf("%s: error %v (exit %d), want a usage error naming --peers", f, err, cli.ExitCode(err))
		}
	}
}

func retries(n uint64) []host.PortCounters {
	return []host.PortCounters{{Device: "rxe0", Port: 1, HW: []host.Counter{{Name: "completer_retry_err", Value: n}}}}
}

// The error counters that rose during the checks are in the table and in
// the JSON document.
func TestRunReportsCountersThatRose(t *testing.T) {
	run := func(json bool) (string, error) {
		var out strings.Builder
		err := Run(context.Background(), Options{
			Config: Config{System: lab(), Count: 1}, Peers: []string{"192.168.7.9"},
			Timeout: 5 * time.Second, Concurrency: 1, JSON: json,
			Gather:   func() *doctor.Facts { return &doctor.Facts{} },
			Counters: counterstest.NewReplay(retries(2), retries(5)),
		}, &out)
		return out.String(), err
	}
	out, err := run(false)
	if cli.ExitCode(err) != 1 || !strings.HasSuffix(out, "(local): port counters: error counters rose during the run: rxe0/1 completer_retry_err +3 (no ACK came in time (ACK timeout): the requester resent; loss on the path)\n") {
		t.Errorf("exit %v, table:\n%s", err, out)
	}
	out, _ = run(true)
	if err := schema.Validate("smoke", []byte(out)); err != nil {
		t.Errorf("against its schema: %v\n%s", err, out)
	}
	if !strings.Contains(out, `,"port_counters":{"retries":true,"errors":false,"rose":[{"device":"rxe0","port":1,"counter":"completer_retry_err","delta":3,"kind":"retry",`) {
		t.Errorf("document %s", out)
	}
}

// An address spelt two ways in the arguments and the peers file is one
// peer, checked once.
func TestPeersAreCheckedOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "peers")
	if err := os.WriteFile(file, []byte("::ffff:10.9.0.1\n10.9.0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Options{Peers: []string{"10.9.0.1"}, PeersFile: file}.peers()
	if err != nil || strings.Join(got, ",") != "10.9.0.1,10.9.0.2" {
		t.Errorf("peers = %v, %v", got, err)
	}
}
