//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestSingleSmokeWithoutServeNamesServe: a peer that is up but runs no
// serve fails ping (REJECTED) and demo (connection refused) with hints
// that name serve, the responder smoke needs there, not the tool each
// check emulates (demo's own hint says to start `rdmactl demo`).
func TestSingleSmokeWithoutServeNamesServe(t *testing.T) {
	r := run(t, time.Minute, rdmactl, "smoke", "10.9.0.1", "--timeout", "10s", "--json")
	if r.Code != 1 {
		t.Errorf("exit %d, want 1", r.Code)
	}
	doc := parseSmoke(t, r)
	if len(doc.Peers) != 1 {
		t.Fatalf("peers: %+v", doc.Peers)
	}
	seen := map[string]bool{}
	for _, c := range doc.Peers[0].Checks {
		if c.Check != "ping" && c.Check != "demo" {
			continue
		}
		seen[c.Check] = true
		if c.OK || !strings.Contains(c.Hint, "rdmactl serve") || strings.Contains(c.Hint, "rdmactl demo") {
			t.Errorf("%s: ok %v, message %q, hint %q", c.Check, c.OK, c.Message, c.Hint)
		}
	}
	if !seen["ping"] || !seen["demo"] {
		t.Errorf("checks run: %v (%+v)", seen, doc.Peers[0].Checks)
	}
}
