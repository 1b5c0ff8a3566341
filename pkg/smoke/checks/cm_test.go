package checks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/serve"
)

func TestCMChecksAgainstServe(t *testing.T) {
	f := peerFabric()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, serve.Config{Addr: "127.0.0.1", ToolsPort: 7471, UDPort: 7174, Timeout: 10 * time.Second, RDMA: f},
			func(serve.Bound) { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	cfg := Config{CM: true, ToolsPort: 7471, UDPort: 7174, RDMA: f}
	checks := cfg.cmChecks(func(string) Route { return loopRoute() })
	want := map[string]string{
		CheckCMRC: "ucmatose: 20 messages of 100 bytes with 127.0.0.1 rdma_cm port 7471",
		CheckCMUD: "udaddy: 20 messages of 100 bytes with 127.0.0.1 rdma_cm UDP port 7174",
	}
	for _, c := range checks {
		if res := c.Run(withDeadline(t, 10*time.Second), "127.0.0.1"); !res.OK || res.Message != want[c.Name] {
			t.Errorf("%s: %+v", c.Name, res)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

func TestCMChecksWithoutServeNameServe(t *testing.T) {
	cfg := Config{CM: true, ToolsPort: 7471, UDPort: 7174, RDMA: peerFabric()}
	checks := cfg.cmChecks(func(string) Route { return loopRoute() })
	if len(checks) != 2 {
		t.Fatalf("%d checks", len(checks))
	}
	for _, c := range checks {
		res := c.Run(withDeadline(t, 5*time.Second), "127.0.0.1")
		if res.OK || !strings.Contains(res.Hint, "is `rdmactl serve` running there") {
			t.Errorf("%s without serve: %+v", c.Name, res)
		}
	}
}
