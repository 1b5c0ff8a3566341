package demo

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProbeReturnsTheSummary: a probe against a server returns what --json
// would print, and prints nothing.
func TestProbeReturnsTheSummary(t *testing.T) {
	l := newLab(t)
	port := freePort(t)
	srv := opts("rxe0", 1)
	srv.TCPPort = port
	done := make(chan side)
	go func() { done <- l.run(srv) }()
	waitListening(t, port)
	cl := Options{RDMA: l.fab, Server: "127.0.0.1", Device: "rxe0", IBPort: 1, GIDAuto: true, TCPPort: port, Timeout: 10 * time.Second}
	sum, dialErr := Probe(cl)
	if s := <-done; s.err != nil {
		t.Fatalf("server: %v\n%s", s.err, s.errOut)
	}
	if dialErr != nil || !sum.OK || sum.Role != "client" || sum.Message == nil || *sum.Message != "SEND operation " || sum.GIDIndex == nil {
		t.Fatalf("summary %+v", sum)
	}
}

// TestProbeFailures: a refusal before any connection and a server that is
// not there both come back as the summary's error, not as output.
func TestProbeFailures(t *testing.T) {
	l := newLab(t)
	sum, _ := Probe(Options{RDMA: l.fab, Server: "127.0.0.1", Device: "rxe9", IBPort: 1, GIDAuto: true, TCPPort: freePort(t), Timeout: 2 * time.Second})
	if sum.OK || sum.Error == nil || !strings.Contains(sum.Error.Message, `"rxe9"`) {
		t.Errorf("unknown device: %+v", sum.Error)
	}
	sum, dialErr := Probe(Options{RDMA: l.fab, Server: "127.0.0.1", Device: "rxe0", IBPort: 1, GIDAuto: true, TCPPort: freePort(t), Timeout: 2 * time.Second})
	if sum.OK || sum.Error == nil || sum.Remote != nil || !errors.Is(dialErr, syscall.ECONNREFUSED) {
		t.Errorf("nothing listening: %+v", sum)
	}
}
