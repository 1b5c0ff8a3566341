//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cmPair runs both sides of a -R test in this VM on rxe0 10.9.0.1; the
// client starts once the server's rdma_cm listener is up.
func cmPair(t *testing.T) func(string, []string, string, []string) (result, result) {
	return func(sn string, sa []string, cn string, ca []string) (result, result) {
		return runPair(t, 4*time.Minute, sn, sa, func() { waitListening(t, perfPort) }, func() result {
			cli := run(t, 4*time.Minute, cn, append(ca, "10.9.0.1")...)
			logFailure(t, "client", cli)
			return cli
		})
	}
}

// cmShape is a side's test information block from "rdma_cm QPs" through
// its address lines (to the end for ib_read_lat's server, which prints no
// table), with the values that differ from run to run (QPN, PSN) blanked:
// what must read as perftest's in the same role.
func cmShape(out string) string {
	i := strings.Index(out, " rdma_cm QPs")
	j := strings.Index(out, " #bytes")
	if j < 0 {
		j = len(out)
	}
	if i < 0 || j < i {
		return ""
	}
	return runVaries.ReplaceAllString(out[i:j], "$1 _")
}

var runVaries = regexp.MustCompile(`(QPN|PSN) 0x[0-9a-f]+`)

// TestSinglePerfRInteropWithPerftest: every test with -R, rdmactl
// against the real perftest in both roles (write_bw on one QP and two),
// and against itself for write_bw, send_lat and read_bw (whose
// connections must both grant reads). Each side's rdma_cm lines and
// address records read as perftest's in the same role, and nothing is
// left behind.
func TestSinglePerfRInteropWithPerftest(t *testing.T) {
	perftest := [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}}
	all := append(perftest, [2]string{"rdmactl", "rdmactl"})
	perftestShape := map[string]string{}
	for _, c := range []struct {
		test, qps string // qps "": no -q, which the ib_*_lat refuse even as -q 1
		roles     [][2]string
	}{
		{"write_bw", "1", all}, {"write_bw", "2", all}, {"send_lat", "", all},
		{"send_bw", "1", perftest}, {"send_bw", "2", perftest}, {"read_bw", "1", all}, {"write_lat", "", perftest}, {"read_lat", "", perftest},
	} {
		args := []string{"-R", "-d", "rxe0", "-x", ownGID(t), "-n", "100"}
		if c.qps != "" {
			args = append(args, "-q", c.qps)
		}
		for _, roles := range c.roles {
			t.Run(c.test+"/q"+c.qps+"/"+roles[0]+"-server-"+roles[1]+"-client", func(t *testing.T) {
				srv, cli := perfPair(t, c.test, roles[0], roles[1], cmPair(t), args...)
				checkPerf(t, c.test, srv, cli)
				if !strings.Contains(srv.Stdout, "Waiting for client rdma_cm QP to connect") {
					t.Errorf("server header lacks the rdma_cm lines:\n%s", srv.Stdout)
				}
				for i, r := range []result{srv, cli} {
					side := roles[i] + "-" + []string{"server", "client"}[i]
					key := c.test + c.qps + []string{"server", "client"}[i]
					shape := cmShape(r.Stdout)
					if !strings.Contains(shape, " rdma_cm QPs\t : ON\n Data ex. method : rdma_cm") {
						t.Errorf("%s: the header does not say rdma_cm:\n%s", side, r.Stdout)
					}
					if roles[i] == "perftest" {
						perftestShape[key] = shape
					} else if want, ok := perftestShape[key]; ok && shape != want {
						t.Errorf("%s: header and addresses differ from perftest's in that role:\n%s", side, diff(want, shape))
					}
				}
				noRDMALeft(t)
			})
		}
	}
}

// TestSinglePerfRHints: -R without a server ends in one line and a hint;
// a server address that is not IPv4 is a usage error.
func TestSinglePerfRHints(t *testing.T) {
	perfPort++
	r := run(t, time.Minute, rdmactl, "perf", "write_bw", "-R", "-d", "rxe0", "-x", ownGID(t), "-p", fmt.Sprint(perfPort), "10.9.0.1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "hint: the peer is not listening") {
		t.Errorf("no server: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = run(t, time.Minute, rdmactl, "perf", "read_bw", "-R", "-d", "rxe0", "fd09::1")
	if r.Code != 2 || !strings.Contains(r.Stderr, "-R") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("read_bw -R fd09::1: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestTwoHostsPerfRWriteBW: write_bw -R across two kernels, each tool in
// each role (the server on A, 10.9.1.1).
func TestTwoHostsPerfRWriteBW(t *testing.T) {
	cross := func(sn string, sa []string, cn string, ca []string) (result, result) {
		s := start(t, 4*time.Minute, sn, sa...)
		waitListening(t, perfPort)
		cli := remote(t, 4*time.Minute, "timeout 230 "+shellJoin(append(append([]string{cn}, ca...), "10.9.1.1")))
		logFailure(t, "client", cli)
		return s.wait(t), cli
	}
	args := []string{"-R", "-d", "rxe0", "-x", ownGID(t), "-n", "100"}
	for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
		t.Run(roles[0]+"-server-on-A", func(t *testing.T) {
			srv, cli := perfPair(t, "write_bw", roles[0], roles[1], cross, args...)
			checkPerf(t, "write_bw", srv, cli)
		})
	}
}

// TestSinglePerfZInteropWithPerftest: -z (the exchange over rdma_cm, the
// QPs connected with its records) against the real perftest in both
// roles: each side's rdma_cm lines and address records read as perftest's
// in the same role (perftest against itself, in the same boot), and
// nothing is left behind.
func TestSinglePerfZInteropWithPerftest(t *testing.T) {
	perftestShape := map[string]string{}
	for _, test := range []string{"write_bw", "send_lat", "read_bw", "send_bw"} {
		// perftest against itself first: its shapes in both roles.
		for _, roles := range [][2]string{{"perftest", "perftest"}, {"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(test+"/"+roles[0]+"-server-"+roles[1]+"-client", func(t *testing.T) {
				srv, cli := perfPair(t, test, roles[0], roles[1], cmPair(t), "-z", "-d", "rxe0", "-x", ownGID(t), "-n", "100")
				checkPerf(t, test, srv, cli)
				for i, r := range []result{srv, cli} {
					side := roles[i] + "-" + []string{"server", "client"}[i]
					key := test + []string{"server", "client"}[i]
					shape := cmShape(r.Stdout)
					if !strings.Contains(shape, " rdma_cm QPs\t : OFF\n Data ex. method : rdma_cm\n") {
						t.Errorf("%s: the header does not say an rdma_cm exchange:\n%s", side, r.Stdout)
					}
					if roles[i] == "perftest" {
						perftestShape[key] = shape
					} else if shape != perftestShape[key] {
						t.Errorf("%s: header and addresses differ from perftest's in that role:\n%s", side, diff(perftestShape[key], shape))
					}
				}
				noRDMALeft(t)
			})
		}
	}
}
