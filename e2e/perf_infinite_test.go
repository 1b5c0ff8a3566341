//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// infinitePair runs test with --run_infinitely -D 3, the server of one
// tool and the client of the other, stops the client with SIGINT after
// about three periods and returns both results.
func infinitePair(t *testing.T, test, server, client string, extra ...string) (srv, cli result) {
	t.Helper()
	perfPort++
	args := append([]string{"-p", fmt.Sprint(perfPort), "-d", "rxe0", "-x", ownGID(t), "--run_infinitely", "-D", "3"}, extra...)
	sn, sa := lineBuffered(perfSide(server, test, args))
	cn, ca := lineBuffered(perfSide(client, test, args))
	s := start(t, 45*time.Second, sn, sa...)
	waitTCPListen(t, perfPort)
	c := start(t, 40*time.Second, cn, append(ca, "10.9.0.1")...)
	// A row every 3 s once connected (a second or two under emulation).
	time.Sleep(10 * time.Second)
	if err := c.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	cli = c.wait(t)
	if server == "rdmactl" {
		srv = s.wait(t)
		if d := time.Since(stopped); d > 10*time.Second {
			t.Errorf("rdmactl's server took %v to end after the client left", d)
		}
	} else if server == "perftest" && test == "send_bw" {
		// ib_send_bw's server polls forever once its client left.
		_ = s.cmd.Process.Signal(os.Interrupt)
		srv = s.wait(t)
	} else {
		srv = s.wait(t)
	}
	return srv, cli
}

// parameterBlock is a bandwidth test's header from its title to the line
// before the addresses: the parameters both tools print alike.
func parameterBlock(out string) string {
	from := strings.Index(out, " BW Test\n")
	to := strings.Index(out, " local address:")
	if from < 0 || to < from {
		return ""
	}
	return out[from:to]
}

// lineBuffered runs perftest with its stdout line-buffered: killed by
// SIGINT, as a user stops it, it would lose its rows in a pipe's buffer.
func lineBuffered(name string, args []string) (string, []string) {
	if strings.HasPrefix(name, "ib_") {
		return "stdbuf", append([]string{"-oL", name}, args...)
	}
	return name, args
}

// TestSinglePerfRunInfinitely: --run_infinitely against the real perftest
// in both roles (write_bw and read_bw), and rdmactl against itself. The
// client prints a row per -D period, each counting messages, its best
// period's rate near perftest's; its header equals perftest's; SIGINT
// ends it as it ends perftest's, and the server ends when the client
// left: write_bw's and read_bw's with exit 1 as perftest's, send_bw's
// after printing its own rows. write_lat refuses it as perftest does.
func TestSinglePerfRunInfinitely(t *testing.T) {
	rates := map[string]float64{}
	blocks := map[string]string{}
	for _, test := range []string{"write_bw", "read_bw", "send_bw", "atomic_bw"} {
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}, {"rdmactl", "rdmactl"}} {
			if test == "send_bw" && roles != [2]string{"rdmactl", "rdmactl"} {
				// ib_send_bw, client and server alike, samples its clock
				// in a thread beside its busy loop at every row, and under
				// emulation fails that check ("Can't produce a report")
				// at its first or second row more often than not, against
				// its own peer too: no run to compare.
				continue
			}
			t.Run(test+"/"+roles[0]+"-server/"+roles[1]+"-client", func(t *testing.T) {
				// perftest samples its clock at every row, and under
				// emulation that check fails now and then ("Can't produce
				// a report"), ending perftest: such a run is repeated.
				srv, cli := infinitePair(t, test, roles[0], roles[1])
				for attempt := 1; attempt < perftestAttempts && strings.Contains(srv.Stderr+cli.Stderr, "Can't produce a report"); attempt++ {
					t.Logf("perftest's clock sampling failed under emulation; running %s again", test)
					srv, cli = infinitePair(t, test, roles[0], roles[1])
				}
				defer func() {
					if t.Failed() {
						t.Logf("server exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr)
					}
				}()
				if cli.Code != -1 {
					t.Errorf("%s client: exit %d after SIGINT, want death by the signal\n%s%s", roles[1], cli.Code, cli.Stdout, cli.Stderr)
				}
				rows := bwRow.FindAllStringSubmatch(cli.Stdout, -1)
				if len(rows) < 2 {
					t.Errorf("%s client: %d rows in 10 s of 3 s periods\n%s%s", roles[1], len(rows), cli.Stdout, cli.Stderr)
				}
				for _, r := range rows {
					if n, _ := strconv.Atoi(r[2]); n == 0 || r[3] != "0.00" {
						t.Errorf("%s client row %q: want messages counted and no peak", roles[1], r[0])
					}
				}
				if roles[0] != roles[1] {
					// the best period's rate, for the comparison below:
					// under emulation one period can stall, for either tool
					for _, r := range rows {
						if v, _ := strconv.ParseFloat(r[4], 64); v > rates[test+"/"+roles[1]] {
							rates[test+"/"+roles[1]] = v
						}
					}
				}
				blocks[test+"/"+roles[1]] = parameterBlock(cli.Stdout)
				if !strings.Contains(cli.Stdout, " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n") {
					t.Errorf("%s client printed no table head:\n%s", roles[1], cli.Stdout)
				}
				switch {
				case roles[0] == "rdmactl" && test != "send_bw":
					if srv.Code != 1 || !strings.Contains(srv.Stderr, "the client left") {
						t.Errorf("rdmactl server after the client left: exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr)
					}
				case roles[0] == "rdmactl":
					if srv.Code != 1 || !strings.Contains(srv.Stderr, "the client left") || len(bwRow.FindAllString(srv.Stdout, -1)) < 2 {
						t.Errorf("rdmactl send_bw server: exit %d, want rows and the client's leaving\n%s%s", srv.Code, srv.Stdout, srv.Stderr)
					}
				case test != "send_bw":
					if srv.Code != 1 || !strings.Contains(srv.Stderr, "Failed to exchange data between server and clients") {
						t.Errorf("perftest server after the client left: exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr)
					}
				}
			})
		}
		if p, r := blocks[test+"/perftest"], blocks[test+"/rdmactl"]; test != "send_bw" && (p == "" || p != r) {
			t.Errorf("%s client's header: perftest's\n%s\nrdmactl's\n%s", test, p, r)
		}
		if p, r := rates[test+"/perftest"], rates[test+"/rdmactl"]; p > 0 && (r < p/2 || r > 2*p) {
			t.Errorf("%s: rdmactl's client sent %.6f Mpps, perftest's %.6f", test, r, p)
		}
	}
	r := run(t, time.Minute, rdmactl, "perf", "write_lat", "--run_infinitely")
	real := run(t, time.Minute, "ib_write_lat", "--run_infinitely")
	if real.Code != 1 || r.Code != 1 || !strings.Contains(real.Stderr, "run_infinitely exists only in BW tests for now.") ||
		!strings.Contains(r.Stderr, "run_infinitely exists only in BW tests for now.") {
		t.Errorf("write_lat --run_infinitely: perftest exit %d %q, rdmactl exit %d %q", real.Code, real.Stderr, r.Code, r.Stderr)
	}
}
