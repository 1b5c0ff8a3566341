package serve

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/demo"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// entries collects the log of a responder under test.
type entries struct {
	mu   sync.Mutex
	list []Entry
}

func (l *entries) add(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, e)
}

func (l *entries) byTest() map[string][]Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[string][]Entry{}
	for _, e := range l.list {
		m[e.Test] = append(m[e.Test], e)
	}
	return m
}

// startResponder runs Run over an rdmatest fabric whose rxe0 carries
// 127.0.0.1, the address the TCP listeners really use, until the test
// ends; it returns where the responder listens and a function that stops
// it and returns Run's error.
func startResponder(t *testing.T, f *rdmatest.Fabric, log *entries) (Bound, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bound := make(chan Bound, 1)
	done := make(chan error, 1)
	cfg := Config{Addr: "127.0.0.1", Timeout: 5 * time.Second, RDMA: f, Log: log.add,
		Devices: func(netip.Addr) (string, int) { return "rxe0", 1 }}
	go func() { done <- Run(ctx, cfg, func(b Bound) { bound <- b }) }()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Run still runs 10 s after its context ended")
			return nil
		}
	}
	select {
	case b := <-bound:
		t.Cleanup(func() { cancel() })
		return b, stop
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the responder never got ready")
	}
	return Bound{}, nil
}

// waitLogged waits until the log holds n entries of test.
func waitLogged(t *testing.T, log *entries, test string, n int) []Entry {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if got := log.byTest()[test]; len(got) >= n {
			return got
		}
	}
	t.Fatalf("no %d %s entries in the log: %+v", n, test, log.byTest())
	return nil
}

// TestRunAnswersEveryClient: one responder answers an rping client and an
// RC demo client over the fabric, logs each session, logs why it could not
// serve a write_bw client on a device without perf's endpoints, and ends
// when its
// context does, listening nowhere.
func TestRunAnswersEveryClient(t *testing.T) {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("127.0.0.1"))
	var log entries
	b, stop := startResponder(t, f, &log)

	pinged := ping.Probe(ping.Options{CM: f, Addr: "127.0.0.1", Port: b.CMPort, Count: 3, Size: ping.DefaultSize, Timeout: 5 * time.Second})
	if pinged.Status != 0 || pinged.Report.Completed != 3 {
		t.Errorf("ping client: %+v", pinged)
	}
	sum, err := demo.Probe(demo.Options{RDMA: f, Device: "rxe0", IBPort: 1, GIDAuto: true, Server: "127.0.0.1", TCPPort: b.TCPPort, Timeout: 5 * time.Second})
	if err != nil || !sum.OK {
		t.Errorf("demo client: %+v, %v", sum, err)
	}
	// perftest's client opens with its version; rdmatest's device makes no
	// perf endpoints, which the session's log line must say.
	perfClient, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(b.PerfPort), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer perfClient.Close()
	version := make([]byte, perf.VersionSize)
	copy(version, "6.06")
	if _, err := perfClient.Write(version); err != nil {
		t.Fatal(err)
	}

	for test, ok := range map[string]bool{TestPing: true, TestDemo: true, TestWriteBW: false} {
		e := waitLogged(t, &log, test, 1)[0]
		if e.OK != ok || e.Peer != "127.0.0.1" || (!ok && !strings.Contains(e.Error, "makes no perftest endpoints")) {
			t.Errorf("%s entry %+v, want ok=%v", test, e, ok)
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
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("127.0.0.1"))
	err = Run(context.Background(), Config{Addr: "127.0.0.1", TCPPort: taken.Addr().(*net.TCPAddr).Port, RDMA: f}, nil)
	if err == nil || !strings.Contains(err.Error(), "RC demo listener") {
		t.Fatalf("Run: %v", err)
	}
	if hint := StartHint(err); hint == "" {
		t.Errorf("no hint for %v", err)
	}
}
