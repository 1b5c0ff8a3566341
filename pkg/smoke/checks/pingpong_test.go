package checks

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pingpong"
	"github.com/rdmactl/rdmactl/pkg/serve"
)

func TestPingpongCheckAgainstServe(t *testing.T) {
	f := peerFabric()
	ctx, cancel := context.WithCancel(context.Background())
	bound := make(chan serve.Bound, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, serve.Config{Addr: "127.0.0.1", RDMA: f, Timeout: 10 * time.Second}, func(b serve.Bound) { bound <- b })
	}()
	var b serve.Bound
	select {
	case b = <-bound:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	cfg := Config{PerfPort: b.PerfPort, RDMA: f, Pingpong: true}
	res := cfg.pingpong(withDeadline(t, 10*time.Second), loopRoute())
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	want := regexp.MustCompile(`^1000 RC round trips of 4096 bytes with 127\.0\.0\.1 TCP port ` + itoa(b.PerfPort) + ` over rxe0 GID index 3, data validated: [0-9.]+ usec/iter$`)
	if !res.OK || !want.MatchString(res.Message) {
		t.Fatalf("result %+v", res)
	}
	var names []string
	for _, c := range PerPeer(cfg) {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "route ping demo pingpong" {
		t.Errorf("per-peer checks with --pingpong: %s", got)
	}
}

func TestPingpongCheckNothingListening(t *testing.T) {
	port := freeTCPPort(t)
	cfg := Config{PerfPort: port, RDMA: peerFabric()}
	res := cfg.pingpong(withDeadline(t, 5*time.Second), loopRoute())
	if res.OK || res.Message != "Couldn't connect to 127.0.0.1:"+itoa(port) ||
		!strings.Contains(res.Hint, "nothing answered on TCP port "+itoa(port)+" of 127.0.0.1: is `rdmactl serve` running there") {
		t.Fatalf("result %+v", res)
	}
}

// A run smoke's bound ended says how far it got and what bound would fit
// it at that pace; one with no round trip says that instead.
func TestPingpongCheckTimedOut(t *testing.T) {
	doc := pingpong.Document{Iters: 1000, Stopped: &pingpong.Stopped{RoundTrips: 340, ElapsedSeconds: 10.02}}
	msg, hint := timedOut(doc, "10.9.1.2")
	if msg != "timed out after 340 of 1000 round trips with 10.9.1.2 in 10s" {
		t.Errorf("message %q", msg)
	}
	if hint != "29.47ms per round trip: the 1000 round trips (the tool's default -n) need about 29s: raise smoke's --timeout above that" {
		t.Errorf("hint %q", hint)
	}
	doc.Stopped.RoundTrips = 100
	if _, hint := timedOut(doc, "10.9.1.2"); !strings.HasSuffix(hint, "need about 1m40s: raise smoke's --timeout above that, and serve's --timeout on 10.9.1.2 (30s unless set), which bounds its side") {
		t.Errorf("hint beyond serve's default bound %q", hint)
	}
	doc.Stopped.RoundTrips = 0
	if msg, hint := timedOut(doc, "10.9.1.2"); msg != "timed out after 0 of 1000 round trips with 10.9.1.2 in 10s" || !strings.HasPrefix(hint, "no round trip completed: ") {
		t.Errorf("no round trip: %q, %q", msg, hint)
	}
}
