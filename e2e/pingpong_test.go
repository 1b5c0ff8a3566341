//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pingpongPort is the next TCP port a pingpong test uses: a failed test
// may leave its server listening.
var pingpongPort = 18700

func nextPingpongPort() int {
	pingpongPort++
	return pingpongPort
}

// gidOf is the GID index of ip's RoCE v2 GID, as rdmactl gids picks it.
func gidOf(t *testing.T, ip string) string {
	t.Helper()
	r := run(t, 30*time.Second, rdmactl, "gids", "--ip", ip)
	idx := strings.TrimSpace(r.Stdout)
	if r.Code != 0 || idx == "" {
		t.Fatalf("gids --ip %s: exit %d %s%s", ip, r.Code, r.Stdout, r.Stderr)
	}
	return idx
}

// pingpongCmd is one side: the C tool ("c") or rdmactl pingpong.
func pingpongCmd(kind, who string, args ...string) (string, []string) {
	if who == "c" {
		return "ibv_" + kind + "_pingpong", args
	}
	return rdmactl, append([]string{"pingpong", kind}, args...)
}

// pingpongPair runs a server and then a client against it on a fresh
// port; serverArgs and clientArgs follow the common args.
func pingpongPair(t *testing.T, kind, srvWho, cliWho string, common, serverArgs, clientArgs []string) (srv, cli result) {
	t.Helper()
	port := nextPingpongPort()
	base := append([]string{"-p", fmt.Sprint(port)}, common...)
	name, args := pingpongCmd(kind, srvWho, append(append([]string{}, base...), serverArgs...)...)
	s := start(t, 2*time.Minute, name, args...)
	waitTCPListen(t, port)
	name, args = pingpongCmd(kind, cliWho, append(append(append([]string{}, base...), clientArgs...), "10.9.0.1")...)
	cli = run(t, 2*time.Minute, name, args...)
	srv = s.wait(t)
	return srv, cli
}

// The fields that differ from run to run: QP numbers, PSNs, timing.
var pingpongMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`QPN 0x[0-9a-f]{6}`), "QPN 0x……"},
	{regexp.MustCompile(`PSN 0x[0-9a-f]{6}`), "PSN 0x……"},
	{regexp.MustCompile(`in \d+\.\d\d seconds = \d+\.\d\d `), "in … seconds = … "},
}

func maskPingpong(r result) result {
	for _, m := range pingpongMasks {
		r.Stdout = m.re.ReplaceAllString(r.Stdout, m.with)
		r.Stderr = m.re.ReplaceAllString(r.Stderr, m.with)
	}
	return r
}

// TestSinglePingpongInterop: for each QP type, polling and with -e, the
// C tools' own pair is the reference; rdmactl as the client of the C
// server and as the server of the C client must print the same lines and
// exit the same, with the GID index given by address and with -g auto on
// rdmactl's side. With a few receives (-r) both sides top them up all
// through the run: rdmactl at the least depth before it answers, above it
// after. Runs of over a second (-n 8000) carry rdmactl's loop, its
// unsignaled sends among it, across the slices it runs in.
func TestSinglePingpongInterop(t *testing.T) {
	g := gidOf(t, "10.9.0.1")
	for _, kind := range []string{"rc", "uc", "ud", "srq", "rc -e", "uc -e", "ud -e", "srq -e", "rc -r 1", "uc -r 3", "ud -r 3", "srq -r 6", "rc -n 8000", "ud -e -n 8000"} {
		mode := strings.Fields(kind)
		kind := mode[0]
		common := append([]string{"-d", "rxe0", "-n", "20", "-c"}, mode[1:]...)
		if kind == "srq" {
			common = append(common, "-q", "4")
		}
		refSrv, refCli := pingpongPair(t, kind, "c", "c", common, []string{"-g", g}, []string{"-g", g})
		if refSrv.Code != 0 || refCli.Code != 0 {
			t.Fatalf("%s: the C tools fail on their own: server %d %s%s client %d %s%s", kind, refSrv.Code, refSrv.Stdout, refSrv.Stderr, refCli.Code, refCli.Stdout, refCli.Stderr)
		}
		refSrv, refCli = maskPingpong(refSrv), maskPingpong(refCli)
		for _, ours := range []string{g, "auto"} {
			t.Run(strings.Join(mode, "")+"/g="+ours, func(t *testing.T) {
				srv, cli := pingpongPair(t, kind, "c", "rdmactl", common, []string{"-g", g}, []string{"-g", ours})
				sameResult(t, "rdmactl client of the C server", refCli, maskPingpong(cli))
				sameResult(t, "C server of rdmactl", refSrv, maskPingpong(srv))
				srv, cli = pingpongPair(t, kind, "rdmactl", "c", common, []string{"-g", ours}, []string{"-g", g})
				sameResult(t, "rdmactl server of the C client", refSrv, maskPingpong(srv))
				sameResult(t, "C client of rdmactl", refCli, maskPingpong(cli))
			})
		}
	}
}

// TestSinglePingpongFailuresAsTheTools: the failures before any peer is
// needed print the same and exit the same.
func TestSinglePingpongFailuresAsTheTools(t *testing.T) {
	g := gidOf(t, "10.9.0.1")
	port := fmt.Sprint(nextPingpongPort())
	for _, c := range []struct {
		kind string
		args []string
	}{
		{"rc", []string{"-d", "rxe0", "-g", g, "-p", port, "10.9.0.1"}}, // no server
		{"ud", []string{"-d", "rxe0", "-g", g, "-p", port, "10.9.0.1"}},
		{"srq", []string{"-d", "rxe0", "-g", g, "-q", "2", "-p", port, "10.9.0.1"}},
		{"rc", []string{"-d", "mlx5_7", "-g", g, "10.9.0.1"}},    // bad device
		{"uc", []string{"-d", "rxe0", "-g", "4000", "10.9.0.1"}}, // bad -g
		{"ud", []string{"-d", "rxe0", "-g", "4000", "10.9.0.1"}},
		{"srq", []string{"-d", "rxe0", "-g", "4000", "10.9.0.1"}},
		{"ud", []string{"-d", "rxe0", "-g", g, "-s", "4096", "10.9.0.1"}}, // above the MTU
		{"rc", []string{"-d", "rxe0", "-g", g, "-m", "1000", "10.9.0.1"}}, // not an MTU
		{"rc", []string{"-d", "rxe0", "-g", g, "-t", "10.9.0.1"}},         // rxe has no timestamps
		{"srq", []string{"-d", "rxe0", "-q", "600", "10.9.0.1"}},
		{"srq", []string{"-d", "rxe0", "-g", g, "-o", "10.9.0.1"}}, // rxe has no ODP
		{"rc", []string{"-d", "rxe0", "-g", g, "-o", "10.9.0.1"}},
	} {
		name, args := pingpongCmd(c.kind, "c", c.args...)
		real := maskPingpong(run(t, time.Minute, name, args...))
		name, args = pingpongCmd(c.kind, "rdmactl", c.args...)
		ours := maskPingpong(run(t, time.Minute, name, args...))
		what := c.kind + " " + strings.Join(c.args, " ")
		if real.Code == 0 {
			t.Errorf("%s: the C tool succeeded", what)
		}
		if strings.HasPrefix(real.Stdout, "Usage:") {
			// The usage names its program: compare the exit code and
			// the options part.
			if ours.Code != real.Code || !strings.HasSuffix(real.Stdout, ours.Stdout[strings.Index(ours.Stdout, "\nOptions:"):]) {
				t.Errorf("%s: exit %d %q, the tool %d %q", what, ours.Code, ours.Stdout, real.Code, real.Stdout)
			}
			continue
		}
		sameResult(t, what, real, ours)
	}
}

// TestSinglePingpongRoCEWithoutGIDHints: without -g on rxe the tools fail
// after the exchange; rdmactl stops before it, exit 1, with one hint line
// naming the index of the address that reaches the server.
func TestSinglePingpongRoCEWithoutGIDHints(t *testing.T) {
	g := gidOf(t, "10.9.0.1")
	port := nextPingpongPort()
	start(t, time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-p", fmt.Sprint(port))
	waitTCPListen(t, port)
	r := run(t, time.Minute, rdmactl, "pingpong", "rc", "-d", "rxe0", "-p", fmt.Sprint(port), "10.9.0.1")
	hints := regexp.MustCompile(`(?m)^hint: `).FindAllString(r.Stderr, -1)
	if r.Code != 1 || len(hints) != 1 || !strings.Contains(r.Stderr, "hint: use -g "+g+" ") || r.Stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one hint naming -g %s", r.Code, r.Stdout, r.Stderr, g)
	}
	// The C server kept waiting: the client never reached it.
	cli := run(t, time.Minute, "ibv_rc_pingpong", "-d", "rxe0", "-g", g, "-n", "5", "-p", fmt.Sprint(port), "10.9.0.1")
	if cli.Code != 0 {
		t.Errorf("the C server did not survive rdmactl's refusal: client exit %d %s%s", cli.Code, cli.Stdout, cli.Stderr)
	}
}

// TestSinglePingpongJSON: --json on both sides against each other, one
// document each, validated and ok.
func TestSinglePingpongJSONStats(t *testing.T) {
	srv, cli := pingpongPair(t, "rc", "rdmactl", "rdmactl", []string{"-d", "rxe0", "-g", "auto", "-n", "20", "--timeout", "30s"}, []string{"--stats"}, []string{"--json"})
	if srv.Code != 0 || cli.Code != 0 {
		t.Fatalf("server %d %s%s client %d %s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
	}
	for _, want := range []string{`"schema_version":2`, `"tool":"ibv_rc_pingpong"`, `"validated":true`, `"ok":true`, `"latency_usec":{"count":20`} {
		if !strings.Contains(cli.Stdout, want) {
			t.Errorf("client document lacks %s: %s", want, cli.Stdout)
		}
	}
	if strings.Count(strings.TrimSpace(cli.Stdout), "\n") != 0 {
		t.Errorf("more than one line on stdout: %q", cli.Stdout)
	}
	if !strings.Contains(srv.Stdout, "latency usec p50/p90/p99/p99.9 = ") {
		t.Errorf("server --stats: %s", srv.Stdout)
	}
}

// crossPingpong runs the server here on host A and the client on host B.
func crossPingpong(t *testing.T, kind, srvWho, cliWho string, common, serverArgs, clientArgs []string) (srv, cli result) {
	t.Helper()
	port := nextPingpongPort()
	base := append([]string{"-p", fmt.Sprint(port)}, common...)
	name, args := pingpongCmd(kind, srvWho, append(append([]string{}, base...), serverArgs...)...)
	s := start(t, 3*time.Minute, name, args...)
	waitTCPListen(t, port)
	name, args = pingpongCmd(kind, cliWho, append(append(append([]string{}, base...), clientArgs...), "10.9.1.1")...)
	cli = remote(t, 3*time.Minute, "timeout 170 "+shellJoin(append([]string{name}, args...)))
	srv = s.wait(t)
	return srv, cli
}

// TestTwoHostsPingpongInterop: rc, ud and rc -e between two kernels, rdmactl on
// either side of the C tool, compared with the C tools' own pair.
func TestTwoHostsPingpongInterop(t *testing.T) {
	ga := gidOf(t, "10.9.1.1")
	r := remote(t, 30*time.Second, shellJoin([]string{rdmactl, "gids", "--ip", "10.9.1.2"}))
	gb := strings.TrimSpace(r.Stdout)
	if r.Code != 0 || gb == "" {
		t.Fatalf("gids on B: %+v", r)
	}
	for _, mode := range []string{"rc", "ud", "rc -e"} {
		kind, events, _ := strings.Cut(mode, " ")
		common := []string{"-d", "rxe0", "-n", "20"}
		if events != "" {
			common = append(common, events)
		}
		refSrv, refCli := crossPingpong(t, kind, "c", "c", common, []string{"-g", ga}, []string{"-g", gb})
		if refSrv.Code != 0 || refCli.Code != 0 {
			t.Fatalf("%s: the C tools fail across hosts: %+v %+v", mode, refSrv, refCli)
		}
		refSrv, refCli = maskPingpong(refSrv), maskPingpong(refCli)
		srv, cli := crossPingpong(t, kind, "c", "rdmactl", common, []string{"-g", ga}, []string{"-g", "auto"})
		sameResult(t, mode+": rdmactl client on B of the C server on A", refCli, maskPingpong(cli))
		sameResult(t, mode+": C server on A of rdmactl on B", refSrv, maskPingpong(srv))
		srv, cli = crossPingpong(t, kind, "rdmactl", "c", common, []string{"-g", "auto"}, []string{"-g", gb})
		sameResult(t, mode+": rdmactl server on A of the C client on B", refSrv, maskPingpong(srv))
		sameResult(t, mode+": C client on B of rdmactl on A", refCli, maskPingpong(cli))
	}
}

// TestSinglePingpongLostPeer: the C server stops (SIGSTOP) in the middle
// of a run. An rdmactl client, polling or sleeping on completion events
// (-e, which waits in read as the tools do), ends within its --timeout
// with exit 1; and one without --timeout ends on SIGINT, also while the
// server still answers (the loop runs in C for the whole run and looks at
// a flag between completions).
func TestSinglePingpongLostPeer(t *testing.T) {
	g := gidOf(t, "10.9.0.1")
	for _, c := range []struct {
		kind, mode string
		interrupt  bool
		// answering: the server keeps answering; SIGINT alone ends the client
		answering bool
	}{{"rc", "-e", false, false}, {"srq", "-e", false, false}, {"rc", "", false, false}, {"rc", "-e", true, false},
		{"rc", "", true, false}, {"rc", "", true, true}, {"ud", "-e", true, true}} {
		t.Run(strings.TrimSpace(fmt.Sprintf("%s %s interrupt=%v answering=%v", c.kind, c.mode, c.interrupt, c.answering)), func(t *testing.T) {
			port := nextPingpongPort()
			common := []string{"-p", fmt.Sprint(port), "-d", "rxe0", "-g", g, "-n", "1000000"}
			if c.mode != "" {
				common = append(common, c.mode)
			}
			sn, sa := pingpongCmd(c.kind, "c", common...)
			srv := start(t, 2*time.Minute, sn, sa...)
			waitTCPListen(t, port)
			args := append([]string{}, common...)
			if !c.interrupt {
				args = append(args, "--timeout", "3s")
			}
			cn, ca := pingpongCmd(c.kind, "rdmactl", append(args, "10.9.0.1")...)
			cli := start(t, 2*time.Minute, cn, ca...)
			time.Sleep(2 * time.Second) // some round trips first
			if !c.answering {
				if err := srv.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				defer srv.cmd.Process.Signal(syscall.SIGCONT)
			}
			stopped := time.Now()
			bound := 3 * time.Second
			if c.interrupt {
				time.Sleep(time.Second)
				stopped = time.Now()
				bound = 0
				if err := cli.cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			r := cli.wait(t)
			if took := time.Since(stopped); took > bound+2*time.Second {
				t.Errorf("the client ended %v after the peer was lost or it was interrupted, bound %v", took, bound)
			}
			if c.interrupt {
				if r.Code == 0 {
					t.Errorf("interrupted client: exit 0: %+v", r)
				}
			} else if r.Code != 1 || !strings.Contains(r.Stderr, "--timeout") {
				t.Errorf("want exit 1 naming --timeout: %+v", r)
			}
		})
	}
}
