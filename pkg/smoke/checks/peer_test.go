package checks

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/demo"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// The ping and demo checks run here against real responders (rping's and
// the RC example's server sides) over rdmatest's fabric: rxe0 carries
// 127.0.0.1, the address the demo's TCP exchange really uses.

var loopback = netip.MustParseAddr("127.0.0.1")

func peerFabric() *rdmatest.Fabric {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", loopback)
	return f
}

func loopRoute() Route {
	return Route{Peer: loopback, Src: loopback, Netdev: "veth0", Local: true,
		RoCEPort: host.RoCEPort{Device: "rxe0", Port: 1, GIDIndex: 3}}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func withDeadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestPingCheckAgainstAServer(t *testing.T) {
	f := peerFabric()
	const port = 7301
	done := make(chan error, 1)
	go func() {
		done <- ping.Run(context.Background(), &ping.Options{CM: f, Mode: ping.ModeServer, Addr: "127.0.0.1", Port: port, Size: ping.DefaultSize, Timeout: 10 * time.Second,
			IO: cli.Test(nil, new(strings.Builder), new(strings.Builder))})
	}()
	for end := time.Now().Add(5 * time.Second); !f.Listening(rdma.PortSpaceTCP, port); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the rping server never listened")
		}
	}
	cfg := Config{CMPort: port, Count: 5, RDMA: f}
	res := cfg.ping(withDeadline(t, 10*time.Second), loopRoute())
	if err := <-done; err != nil {
		t.Errorf("server: %v", err)
	}
	if !res.OK || res.Message != "5 pings to 127.0.0.1 port 7301, data validated" || res.RTT == nil || res.RTT.Count != 5 {
		t.Fatalf("result %+v (rtt %+v)", res, res.RTT)
	}
}

// TestPingCheckNothingListening: rping's REJECTED becomes the hint that
// names serve, from the event itself.
func TestPingCheckNothingListening(t *testing.T) {
	cfg := Config{CMPort: 7302, Count: 5, RDMA: peerFabric()}
	res := cfg.ping(withDeadline(t, 5*time.Second), loopRoute())
	if res.OK || !strings.Contains(res.Message, "RDMA_CM_EVENT_REJECTED") || !strings.Contains(res.Hint, "is `rdmactl serve` running there") {
		t.Fatalf("result %+v", res)
	}
}

func TestDemoCheckAgainstAServer(t *testing.T) {
	f := peerFabric()
	port := freeTCPPort(t)
	done := make(chan error, 1)
	go func() {
		done <- demo.Run(context.Background(), &demo.Options{IO: cli.Test(nil, new(strings.Builder), new(strings.Builder)),
			RDMA: f, Device: "rxe0", IBPort: 1, GIDAuto: true, TCPPort: port, Timeout: 10 * time.Second})
	}()
	cfg := Config{TCPPort: port, RDMA: f}
	var res = cfg.demo(withDeadline(t, 10*time.Second), loopRoute())
	for end := time.Now().Add(5 * time.Second); !res.OK && strings.Contains(res.Hint, "nothing answered") && time.Now().Before(end); {
		// The server may not listen yet: the check's own failure says so.
		time.Sleep(10 * time.Millisecond)
		res = cfg.demo(withDeadline(t, 10*time.Second), loopRoute())
	}
	if err := <-done; err != nil {
		t.Errorf("server: %v", err)
	}
	if !res.OK || res.Message != "SEND, RDMA read and RDMA write with 127.0.0.1 TCP port "+itoa(port)+" over rxe0 GID index 3" {
		t.Fatalf("result %+v", res)
	}
}

func TestDemoCheckNothingListening(t *testing.T) {
	port := freeTCPPort(t)
	cfg := Config{TCPPort: port, RDMA: peerFabric()}
	res := cfg.demo(withDeadline(t, 5*time.Second), loopRoute())
	if res.OK || !strings.Contains(res.Hint, "nothing answered on TCP port "+itoa(port)+" of 127.0.0.1") {
		t.Fatalf("result %+v", res)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
