package ping

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// A client that pings without pause never lets a server's wait time out:
// stopping Serve must still end its session promptly.
func TestServeStopsDuringEndlessPings(t *testing.T) {
	f := fabric()
	nextTestPort++
	srv := opts("-a", "10.9.0.1", "--timeout", 5*time.Second)
	srv.Port, srv.CM = nextTestPort, f
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	sessions := make(chan Session, 1)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, &srv, nil, func() { close(ready) }, func(s Session) { sessions <- s }) }()
	<-ready

	cl := opts("-a", "10.9.0.1", "-C", 0)
	cl.Mode, cl.Port, cl.CM = ModeClient, srv.Port, f
	go runOne(cl)
	for end := time.Now().Add(5 * time.Second); f.Posts(rdma.WRRDMAWrite) <= 50; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the client never pinged")
		}
	}
	cancel()
	stopped := time.Now()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Serve still running 3 s after its context ended")
	}
	if took := time.Since(stopped); took > 2*time.Second {
		t.Errorf("Serve took %v to stop", took)
	}
	s := <-sessions
	if s.OK || !strings.Contains(s.Error, "server shutting down") {
		t.Errorf("session %+v", s)
	}
}
