//go:build e2e

package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSingleSmokeWithoutServeNamesServe: a peer that is up but runs no
// serve fails ping (REJECTED) and demo (connection refused) with hints
// that name serve, the responder smoke needs there, not the tool each
// check emulates (demo's own hint says to start `rdmactl demo`).
func TestSingleSmokeWithoutServeNamesServe(t *testing.T) {
	for check, hint := range smokeWithoutServe(t, nil, "ping", "demo") {
		if strings.Contains(hint, "rdmactl demo") {
			t.Errorf("%s: hint %q names the emulated tool", check, hint)
		}
	}
}

// smokeWithoutServe runs `smoke 10.9.0.1 --json` with extra flags against
// a host that runs no serve, requires exit 1 and each of checks failed
// with a hint that names serve, and returns those hints.
func smokeWithoutServe(t *testing.T, extra []string, checks ...string) map[string]string {
	t.Helper()
	r := run(t, time.Minute, rdmactl, append([]string{"smoke", "10.9.0.1", "--timeout", "10s", "--json"}, extra...)...)
	if r.Code != 1 {
		t.Errorf("exit %d, want 1", r.Code)
	}
	doc := parseSmoke(t, r)
	if len(doc.Peers) != 1 {
		t.Fatalf("peers: %+v", doc.Peers)
	}
	hints := map[string]string{}
	for _, c := range doc.Peers[0].Checks {
		if !slices.Contains(checks, c.Check) {
			continue
		}
		hints[c.Check] = c.Hint
		if c.OK || !strings.Contains(c.Hint, "rdmactl serve") {
			t.Errorf("%s: ok %v, message %q, hint %q", c.Check, c.OK, c.Message, c.Hint)
		}
	}
	if len(hints) != len(checks) {
		t.Errorf("checks run: %v, want %v (%+v)", hints, checks, doc.Peers[0].Checks)
	}
	return hints
}
