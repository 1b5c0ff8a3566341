//go:build e2e

package e2e

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitConnectedQP polls until a QP other than the GSI ones exists: a
// client got as far as pinging.
func waitConnectedQP(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("bash", "-c", "rdma res show qp | grep -v 'type GSI'").Output()
		if strings.TrimSpace(string(out)) != "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no client QP after 30s")
}

// stopWithin sends SIGTERM to b and fails unless it exits 0 within limit.
func stopWithin(t *testing.T, b *background, limit time.Duration) result {
	t.Helper()
	begin := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	exited := make(chan result, 1)
	go func() { exited <- b.wait(t) }()
	select {
	case r := <-exited:
		t.Logf("%s stopped %v after SIGTERM", b.name, time.Since(begin))
		if r.Code != 0 {
			t.Errorf("%s exited %d after SIGTERM:\n%s%s", b.name, r.Code, r.Stdout, r.Stderr)
		}
		return r
	case <-time.After(limit):
		t.Errorf("%s still running %v after SIGTERM", b.name, limit)
		return <-exited
	}
}

// TestSingleServeStopsDuringEndlessRping: SIGTERM ends serve within 3 s
// while the real rping pings it without end, and leaves no QP or cm_id.
func TestSingleServeStopsDuringEndlessRping(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	client := start(t, 3*time.Minute, "rping", "-c", "-a", "10.9.0.1", "-C", "0")
	waitConnectedQP(t)
	time.Sleep(500 * time.Millisecond) // well into its pings
	out := stopWithin(t, s.background, 3*time.Second)
	if !strings.Contains(out.Stdout, "server shutting down") {
		t.Errorf("serve's log does not say the session was cut by the stop:\n%s", out.Stdout)
	}
	client.wait(t)
	noRDMALeft(t)
}

// TestSingleServePingPersistentStopsDuringEndlessRping: the same for
// `ping -s -P --json`, which ends with its document.
func TestSingleServePingPersistentStopsDuringEndlessRping(t *testing.T) {
	const port = 7191
	srv := start(t, 3*time.Minute, rdmactl, "ping", "-s", "-P", "-a", "10.9.0.1", "-p", "7191", "--json")
	waitListening(t, port)
	client := start(t, 3*time.Minute, "rping", "-c", "-a", "10.9.0.1", "-p", "7191", "-C", "0")
	waitConnectedQP(t)
	time.Sleep(500 * time.Millisecond)
	out := stopWithin(t, srv, 3*time.Second)
	if !strings.HasPrefix(out.Stdout, "{") {
		t.Errorf("no JSON document on stdout:\n%s", out.Stdout)
	}
	client.wait(t)
	noRDMALeft(t)
}
