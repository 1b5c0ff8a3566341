//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// waitListening waits until the kernel's rdma_cm table shows a listener on
// port, so a client never races its server's start.
func waitListening(t *testing.T, port int) {
	t.Helper()
	pollUntil(t, 30*time.Second, 100*time.Millisecond, fmt.Sprintf("no rdma_cm listener on port %d", port), func() bool { return cmIDInState("LISTEN", port) })
}

// pingPair runs a server and a client (each either "rping" or rdmactl) with
// the given flags on the local VM and returns both results.
func pingPair(t *testing.T, server, client string, serverFlags, clientFlags []string, port int) (srv, cli result) {
	t.Helper()
	portFlag := []string{"-p", fmt.Sprint(port)}
	return runPair(t, 3*time.Minute, server, append(append(toolArgs(server, "-s"), serverFlags...), portFlag...),
		func() { waitListening(t, port) },
		func() result {
			return run(t, 3*time.Minute, client, append(append(toolArgs(client, "-c"), clientFlags...), portFlag...)...)
		})
}

// toolArgs prefixes rdmactl's subcommand; rping takes the flags as they are.
func toolArgs(tool, role string) []string {
	if tool == "rping" {
		return []string{role}
	}
	return []string{"ping", role}
}

var nextPort = 7300

func freshPort() int { nextPort++; return nextPort }

// TestSinglePingInteropWithRping: the real rping on one side, rdmactl on the
// other, each side's output identical to what rping prints in its place.
func TestSinglePingInteropWithRping(t *testing.T) {
	flags := []string{"-a", "10.9.0.1", "-v", "-C", "3"}
	realSrv, realCli := pingPair(t, "rping", "rping", flags, flags, freshPort())
	if realSrv.Code != 0 || realCli.Code != 0 {
		t.Fatalf("rping<->rping failed in the lab: server %+v client %+v", realSrv, realCli)
	}
	_, ourCli := pingPair(t, "rping", rdmactl, flags, flags, freshPort())
	sameResult(t, "rdmactl client against rping server", realCli, ourCli)
	ourSrv, _ := pingPair(t, rdmactl, "rping", flags, flags, freshPort())
	sameResult(t, "rdmactl server against rping client", realSrv, ourSrv)
}

// TestSinglePingRdmactlBothSides covers the flag sets rping users rely on,
// rdmactl on both ends.
func TestSinglePingRdmactlBothSides(t *testing.T) {
	for _, c := range []struct {
		name        string
		flags       []string
		wantClient  string
		wantServer  string
		clientLines int
	}{
		{"validate-1000B-500x", []string{"-a", "10.9.0.1", "-V", "-S", "1000", "-C", "500"}, "", "", 0},
		{"qp-by-hand", []string{"-a", "10.9.0.1", "-q", "-v", "-C", "5"}, "ping data: rdma-ping-4: ", "server ping data: rdma-ping-4: ", 5},
		{"ipv6", []string{"-a", "fd09::1", "-v", "-C", "5"}, "ping data: rdma-ping-4: ", "server ping data: rdma-ping-4: ", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, cli := pingPair(t, rdmactl, rdmactl, c.flags, c.flags, freshPort())
			if srv.Code != 0 || cli.Code != 0 {
				t.Fatalf("server exit %d (%q), client exit %d (%q)", srv.Code, srv.Stderr, cli.Code, cli.Stderr)
			}
			if got := strings.Count(cli.Stdout, "ping data: "); got != c.clientLines {
				t.Errorf("client printed %d ping data lines, want %d:\n%s", got, c.clientLines, cli.Stdout)
			}
			if !strings.Contains(cli.Stdout, c.wantClient) || !strings.Contains(srv.Stdout, c.wantServer) {
				t.Errorf("missing last iteration: client %q server %q", cli.Stdout, srv.Stdout)
			}
		})
	}
}

// TestSinglePingPersistentServer: -P serves clients one after another.
func TestSinglePingPersistentServer(t *testing.T) {
	port := freshPort()
	// The persistent server never ends by itself; the test's cleanup stops it.
	start(t, 3*time.Minute, rdmactl, "ping", "-s", "-P", "-a", "10.9.0.1", "-p", fmt.Sprint(port), "-v")
	waitListening(t, port)
	for i := 0; i < 3; i++ {
		cli := run(t, time.Minute, rdmactl, "ping", "-c", "-a", "10.9.0.1", "-p", fmt.Sprint(port), "-C", "2", "-v")
		if cli.Code != 0 || strings.Count(cli.Stdout, "ping data: ") != 2 {
			t.Fatalf("client %d against -P server: exit %d stdout %q stderr %q", i, cli.Code, cli.Stdout, cli.Stderr)
		}
	}
	// The persistent server must still be listening after three clients.
	waitListening(t, port)
}

// TestSinglePingNoListener: a client aimed where nothing listens gets an
// error, a hint and a non-zero exit within its timeout instead of a hang.
func TestSinglePingNoListener(t *testing.T) {
	for _, c := range []struct {
		addr, hint string
	}{
		{"10.9.0.1", "listen"},   // REJECTED: nothing on that port
		{"10.9.0.77", "rdmactl"}, // no such host on the link: ADDR_ERROR
	} {
		begin := time.Now()
		res := run(t, time.Minute, rdmactl, "ping", "-c", "-a", c.addr, "-p", fmt.Sprint(freshPort()), "-C", "1", "--timeout", "5s")
		took := time.Since(begin)
		if res.Code == 0 {
			t.Errorf("client to %s with no server exited 0", c.addr)
		}
		if !strings.Contains(strings.ToLower(res.Stderr), "hint") || !strings.Contains(res.Stderr, c.hint) {
			t.Errorf("client to %s: stderr %q lacks a hint mentioning %q", c.addr, res.Stderr, c.hint)
		}
		if took > 20*time.Second {
			t.Errorf("client to %s took %v with --timeout 5s", c.addr, took)
		}
	}
}

// TestSinglePingStats: --stats adds RTT lines and an ICMP-ping-like summary.
func TestSinglePingStats(t *testing.T) {
	flags := []string{"-a", "10.9.0.1", "-C", "10"}
	_, cli := pingPair(t, rdmactl, rdmactl, flags, append(flags, "--stats"), freshPort())
	if cli.Code != 0 {
		t.Fatalf("client exit %d: %s", cli.Code, cli.Stderr)
	}
	for _, want := range []string{"10 iterations", "min/avg/max/mdev", "rtt p50/p90/p99/p99.9 = ", "cpu per iteration "} {
		if !strings.Contains(cli.Stdout, want) {
			t.Errorf("--stats output lacks %q:\n%s", want, cli.Stdout)
		}
	}
	// --json: percentiles and the CPU time per iteration beside the RTTs
	_, js := pingPair(t, rdmactl, rdmactl, flags, append(flags, "--json"), freshPort())
	var doc struct {
		Completed int                `json:"completed"`
		RTTMs     []float64          `json:"rtt_ms"`
		Summary   map[string]float64 `json:"summary"`
	}
	if err := json.Unmarshal([]byte(js.Stdout), &doc); err != nil || js.Code != 0 {
		t.Fatalf("--json exit %d, %v: %s", js.Code, err, js.Stdout)
	}
	s := doc.Summary
	if doc.Completed != 10 || len(doc.RTTMs) != 10 || s["cpu_per_iteration_us"] <= 0 ||
		s["p50_ms"] < s["min_ms"] || s["p99_9_ms"] > s["max_ms"] || s["p90_ms"] < s["p50_ms"] {
		t.Errorf("--json summary %s", js.Stdout)
	}
}
