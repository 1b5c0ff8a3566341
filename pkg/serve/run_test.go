package serve

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/demo"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestRunAnswersEveryClient: one responder answers an rping client and an
// RC demo client and a write_bw client over the fabric, logs each
// session, and ends when its context does, listening nowhere.
func TestRunAnswersEveryClient(t *testing.T) {
	f := loopbackFabric()
	b, log, stop := startServe(t, f, func(c *Config) {
		c.Timeout = 5 * time.Second
		c.Devices = func(netip.Addr) (string, int) { return "rxe0", 1 }
	})

	pinged := ping.Probe(context.Background(), ping.Options{CM: f, Addr: "127.0.0.1", Port: b.CMPort, Count: 3, Size: ping.DefaultSize, Timeout: 5 * time.Second})
	if pinged.Status != 0 || pinged.Report.Completed != 3 {
		t.Errorf("ping client: %+v", pinged)
	}
	sum, err := demo.Probe(demo.Options{RDMA: f, Device: "rxe0", IBPort: 1, GIDAuto: true, Server: "127.0.0.1", TCPPort: b.TCPPort, Timeout: 5 * time.Second})
	if err != nil || !sum.OK {
		t.Errorf("demo client: %+v, %v", sum, err)
	}
	perfOpts := perf.Options{IO: cli.Test(nil, io.Discard, io.Discard), Verbs: f, Test: perf.WriteBW, Server: "127.0.0.1", TCPPort: b.PerfPort,
		IBPort: 1, GIDIndex: 3, Iters: 20, Timeout: 5 * time.Second}
	if err := perf.Run(context.Background(), &perfOpts); err != nil {
		t.Errorf("write_bw client: %v", err)
	}

	for _, test := range []string{TestPing, TestDemo, TestWriteBW} {
		e := waitLogged(t, log, test, 1)[0]
		if !e.OK || e.Peer != "127.0.0.1" {
			t.Errorf("%s entry %+v, want ok", test, e)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if f.Listening(rdma.PortSpaceTCP, uint16(b.CMPort)) {
		t.Errorf("rdma_cm port %d still listens after Run returned", b.CMPort)
	}
	for _, port := range []int{b.TCPPort, b.PerfPort} {
		if c, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			c.Close()
			t.Errorf("TCP port %d still answers after Run returned", port)
		}
	}
}

// TestRunReportsABusyPort: a listener that cannot start is Run's error,
// named after what it would have answered.
func TestRunReportsABusyPort(t *testing.T) {
	taken, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	f := loopbackFabric()
	err = Run(context.Background(), Config{Addr: "127.0.0.1", TCPPort: taken.Addr().(*net.TCPAddr).Port, RDMA: f}, nil)
	if err == nil || !strings.Contains(err.Error(), "RC demo listener") {
		t.Fatalf("Run: %v", err)
	}
	if hint := StartHint(err); hint == "" {
		t.Errorf("no hint for %v", err)
	}
}
