//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSingleServePingpong: serve's perftest port answers ibv_rc_pingpong
// with the tool's defaults: the real client prints what it prints against
// the real server (same boot, masked), rdmactl pingpong rc -g auto passes,
// ib_write_bw still passes on the same port, smoke --pingpong passes with
// its pingpong row, and serve logs each pingpong client as pingpong_rc.
func TestSingleServePingpong(t *testing.T) {
	g := gidIndexOf(t, "rxe0", "10.9.0.1")
	// The reference: the C tool's own pair on another port.
	port := nextPingpongPort()
	ref := start(t, 2*time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-p", fmt.Sprint(port))
	waitTCPListen(t, port)
	real := run(t, 2*time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-p", fmt.Sprint(port), "10.9.0.1")
	if srv := ref.wait(t); real.Code != 0 || srv.Code != 0 {
		t.Fatalf("the C pair: client exit %d %s%s, server exit %d %s%s", real.Code, real.Stdout, real.Stderr, srv.Code, srv.Stdout, srv.Stderr)
	}

	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitTCPListen(t, perftestPort)
	c := run(t, 2*time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", g, "10.9.0.1")
	sameResult(t, "ibv_rc_pingpong against serve", maskPingpong(real), maskPingpong(c))
	if c.Code != 0 || !strings.Contains(c.Stdout, "8192000 bytes in ") || !strings.Contains(c.Stdout, "1000 iters in ") {
		t.Errorf("ibv_rc_pingpong against serve: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
	}

	ours := run(t, 2*time.Minute, rdmactl, "pingpong", "rc", "-d", "rxe0", "-g", "auto", "10.9.0.1")
	if ours.Code != 0 || !strings.Contains(ours.Stdout, "remote address: LID 0x0000") || !strings.Contains(ours.Stdout, "1000 iters in ") {
		t.Errorf("rdmactl pingpong rc -g auto against serve: exit %d\n%s%s", ours.Code, ours.Stdout, ours.Stderr)
	}

	var bw result
	for attempt := 0; attempt < 2; attempt++ {
		bw = run(t, 4*time.Minute, "ib_write_bw", "-d", "rxe0", "-x", g, "-F", "10.9.0.1")
		// perftest's CPU-clock sampling fails now and then under qemu.
		if !strings.Contains(bw.Stderr, "Can't produce a report") {
			break
		}
	}
	if bw.Code != 0 || bwRow.FindStringSubmatch(bw.Stdout) == nil {
		t.Errorf("ib_write_bw on the same port: exit %d\n%s%s", bw.Code, bw.Stdout, bw.Stderr)
	}

	sm := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--pingpong", "--json")
	pp, ok := smokeChecks(t, sm)["pingpong"]
	if sm.Code != 0 || !ok || !pp.OK || !strings.HasPrefix(pp.Message, "1000 RC round trips of 4096 bytes with 10.9.0.1 TCP port 18515 over rxe0 GID index "+g+", data validated") {
		t.Errorf("smoke --pingpong: exit %d, pingpong check %+v\n%s%s", sm.Code, pp, sm.Stdout, sm.Stderr)
	}
	table := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--pingpong")
	// Four passing checks (route, ping, demo, pingpong) are counted.
	if table.Code != 0 || !regexp.MustCompile(`(?m)^10\.9\.0\.1\s+4 checks ok\s`).MatchString(table.Stdout) {
		t.Errorf("smoke --pingpong table: exit %d\n%s%s", table.Code, table.Stdout, table.Stderr)
	}

	out := s.stop()
	lines := logLines(out.Stdout)
	if n := lines["pingpong_rc ok"]; n != 4 {
		t.Errorf("serve log: %d pingpong_rc ok lines, want 4 (two clients, two smoke runs):\n%s", n, out.Stdout)
	}
	// A connection that closed before its first byte is no misrouted
	// client: perftest's retried runs leave one now and then.
	for _, l := range strings.Split(out.Stdout, "\n") {
		if strings.Contains(l, " FAILED ") && !strings.Contains(l, "write_bw") || strings.Contains(l, "write_bw") && strings.Contains(l, " FAILED ") && !strings.Contains(l, ": 0 bytes arrived") {
			t.Errorf("serve log has a failed session: %s\n%s", l, out.Stdout)
		}
	}
	if !strings.Contains(out.Stderr, "perftest write_bw and ibv_rc_pingpong on TCP port 18515") {
		t.Errorf("serve's start line:\n%s", out.Stderr)
	}
	noRDMALeft(t)
}

// TestSingleServePingpongWithoutServe: smoke --pingpong against a host
// where nothing answers the perftest port fails the pingpong row with a
// hint naming serve and the port.
func TestSingleServePingpongWithoutServe(t *testing.T) {
	if tcpListening(perftestPort) {
		t.Fatalf("something listens on TCP port %d already", perftestPort)
	}
	r := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--pingpong", "--json", "--timeout", "5s")
	if r.Code != 1 {
		t.Errorf("smoke --pingpong with no serve: exit %d, want 1", r.Code)
	}
	pp, ok := smokeChecks(t, r)["pingpong"]
	if !ok || pp.OK || pp.Message != "Couldn't connect to 10.9.0.1:18515" ||
		!strings.Contains(pp.Hint, "is `rdmactl serve` running there") || !strings.Contains(pp.Hint, "TCP port 18515") {
		t.Errorf("pingpong check with no serve: %+v\n%s", pp, r.Stdout)
	}
	table := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--pingpong", "--timeout", "5s")
	if table.Code != 1 || !strings.Contains(table.Stdout, "10.9.0.1: pingpong: ") || !strings.Contains(table.Stdout, "hint: nothing answered on TCP port 18515 of 10.9.0.1: is `rdmactl serve` running there") {
		t.Errorf("table: exit %d\n%s%s", table.Code, table.Stdout, table.Stderr)
	}
	noRDMALeft(t)
}

// TestSingleServePingpongOtherItersThenSIGTERM: a client with another -n
// passes (serve answers what it sends) but leaves serve's session waiting
// for the default count; SIGTERM ends that session at once, logged as
// failed with its count.
func TestSingleServePingpongOtherItersThenSIGTERM(t *testing.T) {
	g := gidIndexOf(t, "rxe0", "10.9.0.1")
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1", "--timeout", "5m")
	waitTCPListen(t, perftestPort)
	c := run(t, 2*time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-n", "5", "10.9.0.1")
	if c.Code != 0 || !strings.Contains(c.Stdout, "5 iters in ") {
		t.Errorf("ibv_rc_pingpong -n 5 against serve: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	out := s.stop() // fails when serve takes more than 10s
	if !strings.Contains(out.Stdout, " pingpong_rc 10.9.0.1 FAILED ") || !strings.Contains(out.Stdout, "server shutting down: ") ||
		!strings.Contains(out.Stdout, "after 5 of 1000 receives and 5 sends") || !strings.Contains(out.Stdout, "-s 4096 -n 1000") {
		t.Errorf("serve log:\n%s", out.Stdout)
	}
	noRDMALeft(t)
}
