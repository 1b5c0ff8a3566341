//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// cmTool is how a test names one of the rdma_cm test tools: the C tool, or
// rdmactl's emulation of it.
type cmTool struct {
	c    string // the C tool's name
	ours bool
}

func (c cmTool) argv(args ...string) (string, []string) {
	if c.ours {
		return rdmactl, append([]string{"cm", c.c}, args...)
	}
	return c.c, args
}

func (c cmTool) String() string {
	if c.ours {
		return "rdmactl cm " + c.c
	}
	return c.c
}

func cTool(name string) cmTool   { return cmTool{c: name} }
func ourTool(name string) cmTool { return cmTool{c: name, ours: true} }

// waitCMID polls the kernel's rdma_cm table until a line holds needle (a
// listener's ":port ", a multicast group), so a client never races its
// server's start.
func waitCMID(t *testing.T, needle string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("rdma", "res", "show", "cm_id").CombinedOutput()
		if strings.Contains(string(out), needle) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no rdma_cm id with %q after 30s", needle)
}

// cmToolPair runs server then client on 10.9.0.1, the client once the
// kernel shows needle.
func cmToolPair(t *testing.T, server cmTool, serverArgs []string, client cmTool, clientArgs []string, needle string) (srv, cli result) {
	t.Helper()
	sn, sa := server.argv(serverArgs...)
	s := start(t, 3*time.Minute, sn, sa...)
	waitCMID(t, needle)
	cn, ca := client.argv(clientArgs...)
	cli = run(t, 3*time.Minute, cn, ca...)
	return s.wait(t), cli
}

// sameCMResult is sameResult with rdmactl's hint lines (stderr, after the
// C tool's own) left out: everything the C tool prints must be there.
func sameCMResult(t *testing.T, what string, real, ours result) {
	t.Helper()
	ours.Stderr = dropHints(ours.Stderr)
	sameResult(t, what, real, ours)
}

func dropHints(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "hint: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// cmInterop runs C<->C, then rdmactl as the client and as the server
// against the C tool, and holds each rdmactl side to the C tool's
// result in its role.
func cmInterop(t *testing.T, server, client string, serverArgs, clientArgs []string, needle string) {
	t.Helper()
	realSrv, realCli := cmToolPair(t, cTool(server), serverArgs, cTool(client), clientArgs, needle)
	if realSrv.Code != 0 || realCli.Code != 0 {
		t.Fatalf("%s<->%s failed in the lab: server %+v client %+v", server, client, realSrv, realCli)
	}
	_, ourCli := cmToolPair(t, cTool(server), serverArgs, ourTool(client), clientArgs, needle)
	sameCMResult(t, "rdmactl cm "+client+" against "+server, realCli, ourCli)
	ourSrv, _ := cmToolPair(t, ourTool(server), serverArgs, cTool(client), clientArgs, needle)
	sameCMResult(t, "rdmactl cm "+server+" against "+client, realSrv, ourSrv)
}

// TestSingleCMInterop: each rdma_cm test tool against the C tool in both
// roles, with the C tool's output and exit code.
func TestSingleCMInterop(t *testing.T) {
	for _, c := range []struct {
		server, client         string
		serverArgs, clientArgs []string
		needle                 string
	}{
		{"ucmatose", "ucmatose", []string{"-p", "7481"}, []string{"-s", "10.9.0.1", "-p", "7481"}, ":7481 "},
		{"ucmatose", "ucmatose", []string{"-p", "7482", "-c", "8", "-C", "100"}, []string{"-s", "10.9.0.1", "-p", "7482", "-c", "8", "-C", "100"}, ":7482 "},
		{"ucmatose", "ucmatose", []string{"-p", "7488", "-m", "-a", "14"}, []string{"-s", "10.9.0.1", "-p", "7488", "-m", "-t", "32", "-a", "14"}, ":7488 "},
		{"udaddy", "udaddy", nil, []string{"-s", "10.9.0.1"}, ":7174 "},
		{"udaddy", "udaddy", []string{"-t", "0x20", "-C", "0"}, []string{"-s", "10.9.0.1", "-t", "0x20", "-C", "0"}, ":7174 "},
		{"udaddy", "udaddy", []string{"-c", "4", "-C", "50", "-S", "512"}, []string{"-s", "10.9.0.1", "-c", "4", "-C", "50", "-S", "512"}, ":7174 "},
		{"rdma_server", "rdma_client", []string{"-p", "7483"}, []string{"-s", "10.9.0.1", "-p", "7483"}, ":7483 "},
	} {
		t.Run(c.server+" "+strings.Join(c.clientArgs, " "), func(t *testing.T) {
			cmInterop(t, c.server, c.client, c.serverArgs, c.clientArgs, c.needle)
		})
	}
}

// TestSingleCMMckey: a multicast sender and receiver, each either side,
// and two receivers (the C tool's and rdmactl's) of one rdmactl sender.
func TestSingleCMMckey(t *testing.T) {
	recv := []string{"-m", "239.1.1.1", "-b", "10.9.0.1"}
	send := append(append([]string{}, recv...), "-s")
	realRecv, realSend := cmToolPair(t, cTool("mckey"), recv, cTool("mckey"), send, "239.1.1.1")
	if realRecv.Code != 0 || realSend.Code != 0 {
		t.Fatalf("mckey<->mckey failed in the lab: receiver %+v sender %+v", realRecv, realSend)
	}
	_, ourSend := cmToolPair(t, cTool("mckey"), recv, ourTool("mckey"), send, "239.1.1.1")
	sameCMResult(t, "rdmactl cm mckey -s to mckey", realSend, ourSend)
	ourRecv, _ := cmToolPair(t, ourTool("mckey"), recv, cTool("mckey"), send, "239.1.1.1")
	sameCMResult(t, "rdmactl cm mckey receiving from mckey -s", realRecv, ourRecv)

	rn, ra := cTool("mckey").argv(recv...)
	first := start(t, 3*time.Minute, rn, ra...)
	waitCMID(t, "239.1.1.1")
	on, oa := ourTool("mckey").argv(recv...)
	second := start(t, 3*time.Minute, on, oa...)
	waitCMIDCount(t, "239.1.1.1", 2)
	sn, sa := ourTool("mckey").argv(send...)
	sender := run(t, 3*time.Minute, sn, sa...)
	sameCMResult(t, "rdmactl cm mckey -s to two receivers", realSend, sender)
	sameCMResult(t, "mckey, one of two receivers", realRecv, first.wait(t))
	sameCMResult(t, "rdmactl cm mckey, one of two receivers", realRecv, second.wait(t))
}

func waitCMIDCount(t *testing.T, needle string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("rdma", "res", "show", "cm_id").CombinedOutput()
		if strings.Count(string(out), needle) >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("fewer than %d rdma_cm ids with %q after 30s", n, needle)
}

// cmtimeNumbers are the timings of cmtime's table, which differ run to run.
var cmtimeNumbers = regexp.MustCompile(`(?m)^(.{13}):(\s+-?[0-9.]+|\s*[0-9.]+)+$`)

func maskCmtime(out string) string {
	return cmtimeNumbers.ReplaceAllString(out, "$1: (timings)")
}

// cmtimeAgainstCServer runs a cmtime client (args end with "-p PORT")
// against a C cmtime server of its own. That server creates each QP on a
// worker thread apart from its event thread; a run in which it failed its
// own QPs (its stderr says "failure creating qp") tells nothing about the
// client, so it is logged and run once more on a fresh server.
func cmtimeAgainstCServer(t *testing.T, client cmTool, args ...string) result {
	t.Helper()
	port := args[len(args)-1]
	for attempt := 1; ; attempt++ {
		sn, sa := cTool("cmtime").argv("-p", port)
		srv := start(t, 3*time.Minute, sn, sa...)
		waitCMID(t, ":"+port+" ")
		cn, ca := client.argv(args...)
		cli := run(t, time.Minute, cn, ca...)
		srv.cmd.Process.Kill()
		s := srv.wait(t)
		if !strings.Contains(s.Stderr, "failure creating qp") {
			return cli
		}
		if attempt == 2 {
			t.Fatalf("the C cmtime server failed its own QPs twice:\n%s", outputs(s.Stdout, s.Stderr))
		}
		t.Logf("the C cmtime server failed its own QPs; once more on a fresh server:\n%s", outputs(s.Stdout, s.Stderr))
	}
}

// TestSingleCMCmtime: cmtime's client lines and table (timings masked)
// from rdmactl against the C server and from the C client against
// rdmactl's server, and --json's table as numbers.
func TestSingleCMCmtime(t *testing.T) {
	args := []string{"-s", "10.9.0.1", "-c", "20", "-p", "7484"}
	var real result
	// -b adds the bind step, and the resolves start from that address.
	for _, a := range [][]string{args, append([]string{"-b", "10.9.0.1"}, args...)} {
		ref := cmtimeAgainstCServer(t, cTool("cmtime"), a...)
		ours := cmtimeAgainstCServer(t, ourTool("cmtime"), a...)
		if ref.Code != 0 || !strings.Contains(ref.Stdout, "connect      :") || a[0] == "-b" && !strings.Contains(ref.Stdout, "bind addr    :") {
			t.Fatalf("cmtime %v failed in the lab: %+v", a, ref)
		}
		ref.Stdout, ours.Stdout = maskCmtime(ref.Stdout), maskCmtime(ours.Stdout)
		sameCMResult(t, fmt.Sprintf("rdmactl cm cmtime %v against cmtime's server", a), ref, ours)
		if real.Stdout == "" {
			real = ref
		}
	}

	// rdmactl's server, which ends after --timeout without a connection.
	sn, sa := ourTool("cmtime").argv("-p", "7485", "--timeout", "5s")
	our := start(t, 3*time.Minute, sn, sa...)
	waitCMID(t, ":7485 ")
	args[len(args)-1] = "7485"
	cn, ca := cTool("cmtime").argv(args...)
	againstOurs := run(t, time.Minute, cn, ca...)
	againstOurs.Stdout = maskCmtime(againstOurs.Stdout)
	sameCMResult(t, "cmtime against rdmactl cm cmtime's server", real, againstOurs)
	on, oa := ourTool("cmtime").argv(append(args, "--json")...)
	js := run(t, time.Minute, on, oa...)
	if err := schema.ValidateResult("cmtime", []byte(js.Stdout), js.Code); err != nil {
		t.Errorf("rdmactl cm cmtime --json: %v", err)
	}
	if js.Code != 0 || !strings.Contains(js.Stdout, `"step":"connect"`) || !strings.Contains(js.Stdout, `"connections_per_second":`) || !strings.Contains(js.Stdout, `"p99_us":`) {
		t.Errorf("rdmactl cm cmtime --json: %+v", js)
	}
	if r := our.wait(t); r.Code != 0 {
		t.Errorf("rdmactl cm cmtime server with --timeout: %+v", r)
	}
}

// TestSingleCMFailures: no server, an address nobody answers and a bad
// port space, each compared with the C tool's output and exit code.
func TestSingleCMFailures(t *testing.T) {
	for _, args := range [][]string{
		{"ucmatose", "-s", "10.9.0.1", "-p", "7486"},
		{"udaddy", "-s", "10.9.0.1"},
		{"rdma_client", "-s", "10.9.0.1", "-p", "7486"},
		{"cmtime", "-s", "10.9.0.1", "-c", "2", "-p", "7486"},
		{"cmtime", "-s", "10.9.0.77", "-c", "2", "-t", "500"},
		{"ucmatose", "-s", "10.9.0.77"},
		{"udaddy", "-s", "10.9.0.77"},
		{"rdma_client", "-s", "10.9.0.77"},
		{"udaddy", "-p", "0x999"},
		{"udaddy", "-s", "10.9.0.1", "-p", "0x999"},
		{"mckey", "-m", "239.1.1.1", "-p", "0x999"},
		{"ucmatose", "-x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cn, ca := cTool(args[0]).argv(args[1:]...)
			real := run(t, time.Minute, cn, ca...)
			on, oa := ourTool(args[0]).argv(args[1:]...)
			ours := run(t, time.Minute, on, oa...)
			// cmtime reports failed connections and still exits 0.
			if real.Code == 0 && args[0] != "cmtime" || args[0] == "cmtime" && !strings.Contains(real.Stdout, "REJECTED") && !strings.Contains(real.Stdout, "_ERROR") {
				t.Fatalf("%s did not fail in the lab: %+v", cn, real)
			}
			if args[0] == "cmtime" {
				real.Stdout, ours.Stdout = maskCmtime(real.Stdout), maskCmtime(ours.Stdout)
			}
			if args[1] == "-x" {
				// getopt's complaint and rdmactl's differ; the usage and code are the tool's.
				real.Stderr, ours.Stderr = "", ""
			}
			sameCMResult(t, "rdmactl cm "+strings.Join(args, " "), real, ours)
			if args[1] != "-x" && !strings.Contains(ours.Stderr, "hint: ") {
				t.Errorf("no hint for a failure: %q", ours.Stderr)
			}
		})
	}
}

// TestSingleCMTimeout: a lost peer (a server stopped with SIGSTOP: its
// connect requests go unanswered), a server nobody connects to and a
// multicast that never arrives end within --timeout, exit 1, with a hint.
func TestSingleCMTimeout(t *testing.T) {
	sn, sa := cTool("ucmatose").argv("-p", "7487")
	stopped := start(t, 3*time.Minute, sn, sa...)
	waitCMID(t, ":7487 ")
	if err := stopped.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer stopped.cmd.Process.Signal(syscall.SIGCONT)
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"ucmatose", "-s", "10.9.0.1", "-p", "7487", "--timeout", "3s"}, "no answer from 10.9.0.1"},
		{[]string{"udaddy", "--timeout", "3s"}, "no client connected"},
		{[]string{"mckey", "-m", "239.1.1.2", "-b", "10.9.0.1", "--timeout", "2s"}, "no datagram arrived"},
		{[]string{"rdma_client", "-s", "10.9.0.1", "-p", "7487", "--timeout", "3s"}, "no answer from 10.9.0.1"},
		{[]string{"cmtime", "-s", "10.9.0.1", "-p", "7487", "-c", "4", "--timeout", "3s"}, "no answer from 10.9.0.1"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			began := time.Now()
			on, oa := ourTool(c.args[0]).argv(c.args[1:]...)
			r := run(t, time.Minute, on, oa...)
			took := time.Since(began)
			if r.Code != 1 || !strings.Contains(r.Stderr, "--timeout") && !strings.Contains(r.Stderr, "timed out") || !strings.Contains(r.Stderr, c.hint) {
				t.Errorf("want exit 1, a timeout and a hint with %q: %+v", c.hint, r)
			}
			if took > 12*time.Second {
				t.Errorf("took %v, bound 3s (+ mckey's 3s settle)", took)
			}
		})
	}
	js := run(t, time.Minute, rdmactl, "cm", "udaddy", "--timeout", "2s", "--json")
	if err := schema.ValidateResult("cm", []byte(js.Stdout), js.Code); err != nil || js.Code != 1 || !strings.Contains(js.Stdout, `"hint":"no client connected`) {
		t.Errorf("udaddy --timeout --json: %v: %+v", err, js)
	}
}

// crossCM runs server here on host A and client on host B (10.9.1.1).
func crossCM(t *testing.T, server cmTool, serverArgs []string, client cmTool, clientArgs []string, needle string) (srv, cli result) {
	t.Helper()
	sn, sa := server.argv(serverArgs...)
	s := start(t, 3*time.Minute, sn, sa...)
	waitCMID(t, needle)
	cn, ca := client.argv(clientArgs...)
	cli = remote(t, 3*time.Minute, "timeout 170 "+shellJoin(append([]string{cn}, ca...)))
	return s.wait(t), cli
}

// TestTwoHostsCM: ucmatose (RC) and udaddy (UD) across a real link, the C
// tool on one host and rdmactl on the other, in both roles.
func TestTwoHostsCM(t *testing.T) {
	for _, c := range []struct {
		tool                   string
		serverArgs, clientArgs []string
		needle                 string
	}{
		{"ucmatose", []string{"-p", "7491", "-c", "4", "-C", "20"}, []string{"-s", "10.9.1.1", "-p", "7491", "-c", "4", "-C", "20"}, ":7491 "},
		{"udaddy", []string{"-c", "2"}, []string{"-s", "10.9.1.1", "-c", "2"}, ":7174 "},
	} {
		t.Run(c.tool, func(t *testing.T) {
			realSrv, realCli := crossCM(t, cTool(c.tool), c.serverArgs, cTool(c.tool), c.clientArgs, c.needle)
			if realSrv.Code != 0 || realCli.Code != 0 {
				t.Fatalf("%s across hosts failed: server %+v client %+v", c.tool, realSrv, realCli)
			}
			_, ourCli := crossCM(t, cTool(c.tool), c.serverArgs, ourTool(c.tool), c.clientArgs, c.needle)
			sameCMResult(t, "rdmactl cm "+c.tool+" client on B", realCli, ourCli)
			ourSrv, _ := crossCM(t, ourTool(c.tool), c.serverArgs, cTool(c.tool), c.clientArgs, c.needle)
			sameCMResult(t, "rdmactl cm "+c.tool+" server on A", realSrv, ourSrv)
		})
	}
}
