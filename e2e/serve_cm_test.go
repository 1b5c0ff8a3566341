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

// waitUDListen waits until the kernel's rdma_cm table shows a listener in
// the UDP port space on port (udaddy's; rping's 7174 is in the TCP one).
func waitUDListen(t *testing.T, port string) {
	t.Helper()
	pollUntil(t, 30*time.Second, 100*time.Millisecond, "no rdma_cm UDP port space listener on port "+port, func() bool {
		out, _ := exec.Command("rdma", "res", "show", "cm_id").CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "state LISTEN") && strings.Contains(line, "ps UDP") && strings.Contains(line, ":"+port+" ") {
				return true
			}
		}
		return false
	})
}

// TestSingleServeCM: one serve with the default ports answers the real
// udaddy, ucmatose and rdma_client, rdmactl's emulations of them, rping
// and `smoke --cm`; one log line per client, each told by its tool;
// SIGTERM leaves no QP or cm_id.
func TestSingleServeCM(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitListening(t, 7471)
	waitUDListen(t, "7174")

	for _, c := range []struct {
		tool cmTool
		want []string
	}{
		{cTool("udaddy"), []string{"udaddy: connecting\n", "data transfers complete\n", "return status 0\n"}},
		{cTool("ucmatose"), []string{"cmatose: connecting\n", "receiving data transfers\nsending replies\ndata transfers complete\n", "return status 0\n"}},
		{cTool("rdma_client"), []string{"rdma_client: start\n", "rdma_client: end 0\n"}},
		{ourTool("udaddy"), []string{"data transfers complete\n", "return status 0\n"}},
		{ourTool("ucmatose"), []string{"data transfers complete\n", "return status 0\n"}},
		{ourTool("rdma_client"), []string{"rdma_client: end 0\n"}},
	} {
		n, a := c.tool.argv("-s", "10.9.0.1")
		r := run(t, 2*time.Minute, n, a...)
		ok := r.Code == 0
		for _, w := range c.want {
			ok = ok && strings.Contains(r.Stdout, w)
		}
		if !ok {
			t.Errorf("%s -s 10.9.0.1 against serve: exit %d, want 0 and %q\n%s%s", c.tool, r.Code, c.want, r.Stdout, r.Stderr)
		}
	}
	if r := run(t, time.Minute, "rping", "-c", "-a", "10.9.0.1", "-C", "3", "-V"); r.Code != 0 {
		t.Errorf("rping -c against the same serve: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := run(t, 2*time.Minute, rdmactl, "--json", "smoke", "10.9.0.1", "--cm", "-C", "3")
	doc := parseSmoke(t, r)
	if r.Code != 0 || !doc.OK || len(doc.Peers) != 1 {
		t.Errorf("smoke --cm: exit %d, %+v\n%s", r.Code, doc, r.Stderr)
	}
	seen := map[string]bool{}
	for _, p := range doc.Peers {
		for _, c := range p.Checks {
			if c.Check == "cm_rc" || c.Check == "cm_ud" {
				seen[c.Check] = true
				if !c.OK || !strings.Contains(c.Message, "20 messages of 100 bytes") {
					t.Errorf("smoke --cm %s: %+v", c.Check, c)
				}
			}
		}
	}
	if !seen["cm_rc"] || !seen["cm_ud"] {
		t.Errorf("smoke --cm rows: %v\n%s", seen, r.Stdout)
	}

	waitSessionsEnded(t)
	out := s.stop()
	lines := logLines(out.Stdout)
	want := map[string]int{"udaddy ok": 3, "ucmatose ok": 3, "rdma_client ok": 2, "ping ok": 2, "demo ok": 1}
	for k, n := range want {
		if lines[k] != n {
			t.Errorf("serve log: %d %q lines, want %d:\n%s", lines[k], k, n, out.Stdout)
		}
	}
	if len(lines) != len(want) {
		t.Errorf("serve log has other lines: %v\n%s", lines, out.Stdout)
	}
	noRDMALeft(t)
}

// TestSingleServeCMAnyCountAndSize: serve answers the real udaddy and
// ucmatose and rdmactl's ucmatose with other -C and -S than the tools'
// defaults, and logs each session as ok with the messages it exchanged
// once the client falls silent; a ucmatose reply above serve's 64 KiB
// bound fails the session with a line naming it.
func TestSingleServeCMAnyCountAndSize(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitListening(t, 7471)
	waitUDListen(t, "7174")
	for _, c := range []struct {
		tool cmTool
		args []string
	}{
		{cTool("udaddy"), []string{"-C", "25", "-S", "1000"}},
		{cTool("ucmatose"), []string{"-C", "50", "-S", "4096"}},
		{ourTool("ucmatose"), []string{"-C", "7", "-S", "300"}},
	} {
		n, a := c.tool.argv(append([]string{"-s", "10.9.0.1"}, c.args...)...)
		// The old serve answered 10 messages only: a client that waits
		// for more waits without end.
		r := run(t, time.Minute, n, a...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "data transfers complete\n") || !strings.Contains(r.Stdout, "return status 0\n") {
			t.Errorf("%s %s against serve: exit %d\n%s%s", c.tool, strings.Join(c.args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	// ucmatose checks no completion: its failed replies end as serve
	// disconnects.
	run(t, time.Minute, "ucmatose", "-s", "10.9.0.1", "-C", "2", "-S", "100000")
	waitSessionsEnded(t)
	out := s.stop()
	t.Logf("serve's log:\n%s", out.Stdout)
	for _, want := range []string{
		`(?m)^\S+ udaddy 10\.9\.0\.1 ok [0-9.]+s 25 messages each way, the client's of 1000 bytes$`,
		`(?m)^\S+ ucmatose 10\.9\.0\.1 ok [0-9.]+s 50 messages each way, the client's of 4096 bytes$`,
		`(?m)^\S+ ucmatose 10\.9\.0\.1 ok [0-9.]+s 7 messages each way, the client's of 300 bytes$`,
		`(?m)^\S+ ucmatose 10\.9\.0\.1 FAILED [0-9.]+s: a reply larger than 65536 bytes \(64 KiB\), the most serve takes from a ucmatose client, arrived \(its receive failed: [a-zA-Z ]+\) \(hint: run ucmatose with -S 65536 or less\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out.Stdout) {
			t.Errorf("serve's log has no line matching %s", want)
		}
	}
	noRDMALeft(t)
}

// TestSingleSmokeCMWithoutServe: smoke --cm against a host that runs no
// serve fails both cm rows with a hint that names serve.
func TestSingleSmokeCMWithoutServe(t *testing.T) {
	smokeWithoutServe(t, []string{"--cm"}, "cm_rc", "cm_ud")
}

// TestSingleServeCMStopsDuringASession: SIGTERM ends serve promptly while
// a real ucmatose client holds a session (serve sends its -C 1000
// messages one round trip at a time, then waits for the client's
// silence); the line says why, and serve leaves no QP or cm_id of its
// own.
func TestSingleServeCMStopsDuringASession(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitListening(t, 7471)
	client := start(t, 3*time.Minute, "ucmatose", "-s", "10.9.0.1", "-C", "1000")
	waitConnectedQP(t)
	out := stopWithin(t, s.background, 10*time.Second)
	if !strings.Contains(out.Stdout, " ucmatose 10.9.0.1 FAILED ") || !strings.Contains(out.Stdout, "server shutting down") {
		t.Errorf("serve's log does not say the ucmatose session was cut by the stop:\n%s", out.Stdout)
	}
	// The C client polls without end for those of its 1000 messages
	// that serve did not send.
	_ = client.cmd.Process.Kill()
	_ = client.cmd.Wait()
	client.collected = true
	noRDMALeft(t)
}

// TestSingleSmokeCMLoopback: smoke --cm without PEER starts its temporary
// responder's udaddy and ucmatose listeners too, and both rows pass.
func TestSingleSmokeCMLoopback(t *testing.T) {
	r := run(t, time.Minute, rdmactl, "smoke", "--cm", "--json")
	checks := smokeChecks(t, r)
	if r.Code != 0 || !checks["cm_rc"].OK || !checks["cm_ud"].OK {
		t.Errorf("loopback smoke --cm: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noRDMALeft(t)
}

// TestTwoHostsServeCM: serve on B answers the real udaddy, ucmatose and
// rdma_client on A and smoke --cm from A, across two kernels; one line
// each in B's log, and B holds no QP or cm_id after SIGTERM.
func TestTwoHostsServeCM(t *testing.T) {
	pidFile := "/tmp/rdmactl-serve-cm.pid"
	remoteServe := fmt.Sprintf("%s serve -a 10.9.1.2 & echo $! >%s; wait $!", rdmactl, pidFile)
	if r := run(t, time.Minute, labRemote, "--bg", "servecm", remoteServe); r.Code != 0 {
		t.Fatalf("cannot start serve on B: %+v", r)
	}
	waitRemote := `for i in $(seq 300); do rdma res show cm_id | grep LISTEN | grep 'ps UDP' | grep -q ':7174 ' && rdma res show cm_id | grep LISTEN | grep -q ':7471 ' && exit 0; sleep 0.1; done; exit 1`
	if r := remote(t, time.Minute, waitRemote); r.Code != 0 {
		t.Fatalf("serve on B does not listen for the rdma_cm tools: %+v", r)
	}
	cmToolsPassAgainstServe(t, "10.9.1.2", "against B's serve")

	if !remoteSessionsEnded(t, time.Minute) {
		t.Errorf("serve's sessions on B still hold QPs a minute after their clients ended")
	}
	if r := remote(t, time.Minute, "kill -TERM $(cat "+pidFile+")"); r.Code != 0 {
		t.Fatalf("cannot stop serve on B: %+v", r)
	}
	stopped := run(t, 2*time.Minute, labRemote, "--wait", "servecm", "60")
	n := logLines(stopped.Stdout)
	if stopped.Code != 0 || n["udaddy ok"] != 2 || n["ucmatose ok"] != 2 || n["rdma_client ok"] != 1 {
		t.Errorf("serve on B: exit %d, log:\n%s%s", stopped.Code, stopped.Stdout, stopped.Stderr)
	}
	if r := remote(t, time.Minute, "rdma res show qp | grep -v 'type GSI'; rdma res show cm_id"); strings.TrimSpace(r.Stdout) != "" {
		t.Errorf("serve on B left RDMA resources:\n%s", r.Stdout)
	}
}

// cmToolsPassAgainstServe runs the real udaddy, ucmatose and rdma_client
// and smoke --cm against serve at addr (one session each, two for smoke);
// when says in which situation, for the failure lines.
func cmToolsPassAgainstServe(t *testing.T, addr, when string) {
	t.Helper()
	for _, c := range []struct{ tool, want string }{
		{"udaddy", "data transfers complete\n"},
		{"ucmatose", "data transfers complete\n"},
		{"rdma_client", "rdma_client: end 0\n"},
	} {
		if r := run(t, 2*time.Minute, c.tool, "-s", addr); r.Code != 0 || !strings.Contains(r.Stdout, c.want) {
			t.Errorf("%s -s %s %s: exit %d\n%s%s", c.tool, addr, when, r.Code, r.Stdout, r.Stderr)
		}
	}
	r := run(t, 2*time.Minute, rdmactl, "smoke", addr, "--cm", "--json")
	if checks := smokeChecks(t, r); r.Code != 0 || !checks["cm_rc"].OK || !checks["cm_ud"].OK {
		t.Errorf("smoke --cm %s %s: exit %d\n%s%s", addr, when, r.Code, r.Stdout, r.Stderr)
	}
}
