//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
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

	bw, _ := ibWriteBWClient(t, g)
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

	waitSessionsEnded(t)
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

// waitSessionsEnded waits until serve's sessions that end on their
// client's silence (pingpong, udaddy, ucmatose), whose clients are done,
// have seen it and freed their QPs (a SIGTERM before would end them as
// failed).
func waitSessionsEnded(t *testing.T) {
	t.Helper()
	pollUntil(t, time.Minute, 200*time.Millisecond, "serve's sessions still hold QPs", func() bool {
		qp, _ := exec.Command("rdma", "res", "show", "qp").CombinedOutput()
		for _, line := range strings.Split(strings.TrimSpace(string(qp)), "\n") {
			if line != "" && !strings.Contains(line, "type GSI") {
				return false
			}
		}
		return true
	})
}

// TestSingleServePingpongAnySizeAndCount: serve answers the real
// ibv_rc_pingpong and rdmactl pingpong rc with other -s and -n than the
// tool's defaults, and logs each session as ok with the round trips it
// answered and their size once the client falls silent; a message above
// serve's 1 MiB bound fails with a line naming it.
func TestSingleServePingpongAnySizeAndCount(t *testing.T) {
	g := gidIndexOf(t, "rxe0", "10.9.0.1")
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitTCPListen(t, perftestPort)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-s", "1024", "-n", "50", "10.9.0.1"}, "102400 bytes in "},
		{[]string{"ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-s", "65536", "-n", "20", "-c", "10.9.0.1"}, "2621440 bytes in "},
		{[]string{rdmactl, "pingpong", "rc", "-d", "rxe0", "-g", "auto", "-s", "100", "-n", "10", "--stats", "10.9.0.1"}, "2000 bytes in "},
	} {
		r := run(t, 2*time.Minute, c.args[0], c.args[1:]...)
		if r.Code != 0 || !strings.Contains(r.Stdout, c.want) || strings.Contains(r.Stdout, "invalid data") {
			t.Errorf("%s against serve: exit %d\n%s%s", strings.Join(c.args, " "), r.Code, r.Stdout, r.Stderr)
		}
		t.Logf("%s:\n%s", strings.Join(c.args, " "), r.Stdout)
	}
	big := run(t, 2*time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-s", "2000000", "-n", "2", "10.9.0.1")
	if big.Code == 0 {
		t.Errorf("ibv_rc_pingpong -s 2000000 against serve passed:\n%s", big.Stdout)
	}
	waitSessionsEnded(t)
	out := s.stop()
	t.Logf("serve's log:\n%s", out.Stdout)
	for _, want := range []string{
		`(?m)^\S+ pingpong_rc 10\.9\.0\.1 ok [0-9.]+s 50 round trips of 1024 bytes$`,
		`(?m)^\S+ pingpong_rc 10\.9\.0\.1 ok [0-9.]+s 20 round trips of 65536 bytes$`,
		`(?m)^\S+ pingpong_rc 10\.9\.0\.1 ok [0-9.]+s 10 round trips of 100 bytes$`,
		`(?m)^\S+ pingpong_rc 10\.9\.0\.1 FAILED [0-9.]+s: a message larger than 1048576 bytes \(1 MiB\), the most this responder answers, arrived \(its receive failed: [a-zA-Z ]+\) \(hint: run the client with -s 1048576 or less\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.Stdout) {
			t.Errorf("serve's log has no line matching %s", want)
		}
	}
	noRDMALeft(t)
}

// TestTwoHostsServePingpong: serve on B answers the real ibv_rc_pingpong
// on A, rdmactl pingpong rc -g auto and smoke --pingpong from A, across
// two kernels; B logs each as pingpong_rc and holds no QP after SIGTERM.
// With a delay on the path, smoke's bound ends the pingpong check on time,
// saying how far it got and what bound would fit.
func TestTwoHostsServePingpong(t *testing.T) {
	ga := gidOf(t, "10.9.1.1")
	pidFile := "/tmp/rdmactl-serve-pingpong.pid"
	// The emulated link between the kernels is slow: 1000 round trips
	// may take longer than serve's default bound on a session.
	remoteServe := fmt.Sprintf("%s serve -a 10.9.1.2 --timeout 5m & echo $! >%s; wait $!", rdmactl, pidFile)
	if r := run(t, time.Minute, labRemote, "--bg", "servepp", remoteServe); r.Code != 0 {
		t.Fatalf("cannot start serve on B: %+v", r)
	}
	waitRemote := fmt.Sprintf(`for i in $(seq 300); do ss -Hltn 'sport = :%d' | grep -q . && exit 0; sleep 0.1; done; exit 1`, perftestPort)
	if r := remote(t, time.Minute, waitRemote); r.Code != 0 {
		t.Fatalf("serve on B does not listen on TCP port %d: %+v", perftestPort, r)
	}
	c := run(t, 4*time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", ga, "10.9.1.2")
	if c.Code != 0 || !strings.Contains(c.Stdout, "8192000 bytes in ") || !strings.Contains(c.Stdout, "1000 iters in ") {
		t.Errorf("ibv_rc_pingpong -g %s 10.9.1.2 against B's serve: exit %d\n%s%s", ga, c.Code, c.Stdout, c.Stderr)
	}
	ours := run(t, 4*time.Minute, rdmactl, "pingpong", "rc", "-d", "rxe0", "-g", "auto", "10.9.1.2")
	if ours.Code != 0 || !strings.Contains(ours.Stdout, "1000 iters in ") {
		t.Errorf("rdmactl pingpong rc -g auto 10.9.1.2 against B's serve: exit %d\n%s%s", ours.Code, ours.Stdout, ours.Stderr)
	}
	sm := run(t, 4*time.Minute, rdmactl, "smoke", "10.9.1.2", "--pingpong", "--json", "--timeout", "3m")
	if pp := smokeChecks(t, sm)["pingpong"]; sm.Code != 0 || !pp.OK {
		t.Errorf("smoke --pingpong A -> B: exit %d, pingpong check %+v\n%s%s", sm.Code, pp, sm.Stdout, sm.Stderr)
	}

	// A session ends some seconds after its client, on a silence as long
	// as 20 of its slowest round trips, which over this link can outlast
	// the delayed run below: SIGTERM must cut none of these three.
	if !remoteSessionsEnded(t, 3*time.Minute) {
		t.Errorf("serve's sessions on B still hold QPs 3 minutes after their clients ended")
	}

	if r := run(t, time.Minute, "sh", "-c", "modprobe sch_netem && tc qdisc add dev eth0 root netem delay 20ms"); r.Code != 0 {
		t.Fatalf("netem on A: %+v", r)
	}
	slow := run(t, time.Minute, rdmactl, "smoke", "10.9.1.2", "--pingpong", "--json", "--timeout", "3s")
	if r := run(t, time.Minute, "tc", "qdisc", "del", "dev", "eth0", "root"); r.Code != 0 {
		t.Errorf("netem off on A: %+v", r)
	}
	pp := smokeChecks(t, slow)["pingpong"]
	if slow.Code != 1 || pp.OK || !regexp.MustCompile(`^timed out after [1-9][0-9]* of 1000 round trips with 10\.9\.1\.2 in `).MatchString(pp.Message) ||
		!strings.Contains(pp.Hint, "per round trip: the 1000 round trips (the tool's default -n) need about ") ||
		!strings.Contains(pp.Hint, "raise smoke's --timeout above that") {
		t.Errorf("smoke --pingpong --timeout 3s over a delayed path: exit %d, pingpong check %+v", slow.Code, pp)
	}

	if r := remote(t, time.Minute, "kill -TERM $(cat "+pidFile+")"); r.Code != 0 {
		t.Fatalf("cannot stop serve on B: %+v", r)
	}
	stopped := run(t, 2*time.Minute, labRemote, "--wait", "servepp", "60")
	t.Logf("serve's log on B:\n%s", stopped.Stdout)
	// The run smoke stopped ends as ok when it stopped between round
	// trips (serve cannot tell it from a client that ran fewer), as
	// failed when an answer was in flight or SIGTERM came first.
	if n := logLines(stopped.Stdout); stopped.Code != 0 || n["pingpong_rc ok"] < 3 || n["pingpong_rc ok"]+n["pingpong_rc FAILED"] != 4 {
		t.Errorf("serve on B: exit %d, want 4 pingpong_rc lines, 3 or 4 of them ok; log:\n%s%s", stopped.Code, stopped.Stdout, stopped.Stderr)
	}
	if r := remote(t, time.Minute, "rdma res show qp | grep -v 'type GSI'"); strings.TrimSpace(r.Stdout) != "" {
		t.Errorf("serve on B left QPs:\n%s", r.Stdout)
	}
}
