package serve

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// The responder tests run Run over an rdmatest fabric whose rxe0 carries
// 127.0.0.1, the address serve's TCP listeners really bind.

var lo = netip.MustParseAddr("127.0.0.1")

func loopbackFabric() *rdmatest.Fabric {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", lo)
	return f
}

// entries collects a responder's log.
type entries struct {
	mu   sync.Mutex
	list []Entry
}

func (l *entries) add(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, e)
}

func (l *entries) all() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.list...)
}

// startServe runs the responder on 127.0.0.1 over f, the rdma_cm tools'
// ports included, with mod's changes to its configuration, until the test
// ends or stop is called; stop returns Run's error.
func startServe(t *testing.T, f *rdmatest.Fabric, mod func(*Config)) (b Bound, log *entries, stop func() error) {
	t.Helper()
	log = &entries{}
	cfg := Config{Addr: "127.0.0.1", ToolsPort: DefaultToolsPort, UDPort: DefaultUDPort, Timeout: 10 * time.Second,
		RDMA: f, Log: log.add}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan Bound, 1), make(chan error, 1)
	go func() { done <- Run(ctx, cfg, func(b Bound) { ready <- b }) }()
	select {
	case b = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve did not start: %v", err)
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("serve still runs 30s after it was stopped")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return b, log, stop
}

// waitLogged waits until the log holds n entries of test (of any test
// when test is "") and returns them.
func waitLogged(t *testing.T, log *entries, test string, n int) []Entry {
	t.Helper()
	var got []Entry
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		got = got[:0]
		for _, e := range log.all() {
			if test == "" || e.Test == test {
				got = append(got, e)
			}
		}
		if len(got) >= n {
			return got
		}
	}
	t.Fatalf("%d %q entries in the log, want %d: %+v", len(got), test, n, log.all())
	return nil
}
