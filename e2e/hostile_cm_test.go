//go:build e2e

package e2e

import (
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rtsQPs counts the QPs in RTS (both ends of a connection in this kernel).
func rtsQPs() int {
	out, _ := exec.Command("rdma", "res", "show", "qp").Output()
	return strings.Count(string(out), "state RTS")
}

// TestSingleHostileServeCM: one peer (10.9.0.5) opens more ucmatose
// sessions on serve's rdma_cm tools port than serve takes from one peer,
// and its clients stop mid-session (SIGSTOP) so that each admitted
// session waits on them for replies. Serve turns the surplus away as
// busy, still answers ucmatose, rdma_client and udaddy from another
// address and smoke --cm, in bounded memory and threads; the stalled
// sessions end on their clients' silence or, at once, on SIGTERM, which
// leaves nothing of serve's behind.
func TestSingleHostileServeCM(t *testing.T) {
	sh(t, 30*time.Second, "ip addr add 10.9.0.5/24 dev veth0")
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", "10.9.0.5/24", "dev", "veth0").Run() })
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1", "--timeout", "5m")
	waitListening(t, 7471)
	pid := s.cmd.Process.Pid

	const perPeer, hostile = 16, 24
	var clients []*background
	t.Cleanup(func() {
		for _, c := range clients {
			_ = c.cmd.Process.Signal(syscall.SIGCONT)
			_ = c.cmd.Process.Kill()
		}
	})
	for range hostile {
		// Stopped below, once its session runs: -C 20000 (one round
		// trip each) so that it has not replied yet.
		clients = append(clients, start(t, 5*time.Minute, "ucmatose", "-s", "10.9.0.1", "-b", "10.9.0.5", "-C", "20000"))
	}
	deadline := time.Now().Add(2 * time.Minute)
	for rtsQPs() < 2*perPeer && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if n := rtsQPs(); n < 2*perPeer {
		t.Fatalf("%d QPs in RTS after 2 minutes: the hostile peer's %d sessions did not all start", n, perPeer)
	}
	for _, c := range clients {
		_ = c.cmd.Process.Signal(syscall.SIGSTOP)
	}

	cmToolsPassAgainstServe(t, "10.9.0.1", "while 10.9.0.5 holds its sessions")
	// The other address's last session, smoke's udaddy (the only UD
	// one), ends on its client's silence.
	pollUntil(t, time.Minute, 200*time.Millisecond, "smoke's udaddy session still holds its QP", func() bool {
		out, _ := exec.Command("rdma", "res", "show", "qp").Output()
		return !strings.Contains(string(out), "type UD")
	})
	rssKiB, threads := rss(t, pid), procStatusKiB(t, pid, "Threads")
	t.Logf("serve with %d stalled sessions: RSS %d KiB, %d threads, %d fds", perPeer, rssKiB, threads, countFDs(pid))
	if rssKiB > 32*1024 || threads > 64 {
		t.Errorf("serve with %d stalled sessions: RSS %d KiB (at most 32 MiB), %d threads (at most 64)", perPeer, rssKiB, threads)
	}

	out := stopWithin(t, s.background, 10*time.Second)
	n := logLines(out.Stdout)
	if n["ucmatose ok"] < 2 || n["rdma_client ok"] != 1 || n["udaddy ok"] < 2 {
		t.Errorf("serve's log lacks the other address's sessions:\n%s", out.Stdout)
	}
	// A stalled client's kernel still takes serve's messages: its session
	// waits for the replies until the client's silence or the stop ends it.
	stalled := regexp.MustCompile(`(?m) ucmatose 10\.9\.0\.5 FAILED .*(server shutting down|then fell silent for)`).FindAllString(out.Stdout, -1)
	if len(stalled) != perPeer || !strings.Contains(out.Stdout, "10.9.0.5") || !strings.Contains(out.Stdout, "busy: ") {
		t.Errorf("want %d stalled sessions of 10.9.0.5 ended by their silence or the stop and the surplus turned away as busy; log:\n%s", perPeer, out.Stdout)
	}
	for _, c := range clients {
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		c.collected = true
	}
	noRDMALeft(t)
}
