//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pollUntil checks cond every interval until it holds, and fails the test
// naming what never happened when limit passes first.
func pollUntil(t *testing.T, limit, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(interval) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s after %s", what, limit)
}

// cmIDInState reports whether the kernel's rdma_cm table has an id in
// state (LISTEN, CONNECT) on port.
func cmIDInState(state string, port int) bool {
	needle := fmt.Sprintf(":%d ", port)
	out, _ := exec.Command("rdma", "res", "show", "cm_id").CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "state "+state) && strings.Contains(line, needle) {
			return true
		}
	}
	return false
}

// tcpListening reports whether a TCP listener on port shows in the
// kernel's socket tables. It does not connect: some servers accept exactly
// one connection. It reads /proc rather than running ss, whose start-up
// under emulation costs more than the wait it polls for.
func tcpListening(port int) bool {
	local := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st ...; st 0A is LISTEN.
			f := strings.Fields(line)
			if len(f) > 3 && strings.HasSuffix(f[1], local) && f[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// runPair is the one way a test runs a server and its client: the server
// in the background (killed after limit), the client once ready returns,
// through client (here, or on the other host), then the server's result.
func runPair(t *testing.T, limit time.Duration, srvName string, srvArgs []string, ready func(), client func() result) (srv, cli result) {
	t.Helper()
	s := start(t, limit, srvName, srvArgs...)
	ready()
	cli = client()
	return s.wait(t), cli
}
