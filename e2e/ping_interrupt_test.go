//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSinglePingInterrupted: SIGINT ends an endless rping client by the
// signal's default effect, and rdmactl's the same way; with --stats
// rdmactl's client ends cleanly with its summary, and a -P --json server
// with its document.
func TestSinglePingInterrupted(t *testing.T) {
	// Each client has a server of its own: a connection that a killed
	// client left in the server's rdma_cm table would pass for the next
	// client's.
	interrupt := func(name string, args ...string) result {
		t.Helper()
		port := freshPort()
		srv := start(t, 3*time.Minute, "rping", "-s", "-P", "-a", "10.9.0.1", "-p", fmt.Sprint(port))
		defer srv.cancel()
		waitListening(t, port)
		c := start(t, 2*time.Minute, name, append(args, "-c", "-a", "10.9.0.1", "-p", fmt.Sprint(port), "-C", "0")...)
		waitConnected(t, port)
		time.Sleep(time.Second) // past connecting, into the pings
		if err := c.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		return c.wait(t)
	}
	real := interrupt("rping")
	if real.Code != -1 {
		t.Fatalf("rping client in the lab: exit %d after SIGINT, want death by the signal (-1)", real.Code)
	}
	if ours := interrupt(rdmactl, "ping"); ours.Code != real.Code {
		t.Errorf("rdmactl client: exit %d after SIGINT, rping %d", ours.Code, real.Code)
	}
	stats := interrupt(rdmactl, "ping", "--stats")
	if stats.Code != 0 || !strings.Contains(stats.Stdout, "--- 10.9.0.1 ping statistics ---") {
		t.Errorf("--stats client after SIGINT: exit %d stdout %q stderr %q", stats.Code, stats.Stdout, stats.Stderr)
	}

	jsonPort := freshPort()
	js := start(t, 2*time.Minute, rdmactl, "ping", "-s", "-P", "-a", "10.9.0.1", "-p", fmt.Sprint(jsonPort), "--json")
	waitListening(t, jsonPort)
	if err := js.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	res := js.wait(t)
	var doc struct {
		OK      bool  `json:"ok"`
		Clients []any `json:"clients"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || res.Code != 0 || !doc.OK || len(doc.Clients) != 0 {
		t.Errorf("-P --json server after SIGINT: exit %d (%v) stdout %q stderr %q", res.Code, err, res.Stdout, res.Stderr)
	}
}
