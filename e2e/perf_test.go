//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// perfPort numbers the perf tests' TCP ports apart from the other tests'.
var perfPort = 18600

// perfSide is one side of a perf run: perftest's ib_TEST or rdmactl perf TEST.
func perfSide(tool, test string, args []string) (string, []string) {
	if tool == "perftest" {
		return "ib_" + test, args
	}
	return rdmactl, append([]string{"perf", test}, args...)
}

// perfPair runs a server and a client of test, each perftest or rdmactl.
// perftest itself fails now and then under qemu when its CPU-clock
// sampling is off ("Can't produce a report"): such a run is repeated, up
// to perftestAttempts runs in all.
func perfPair(t *testing.T, test, server, client string, run func(srvName string, srvArgs []string, cliName string, cliArgs []string) (result, result), args ...string) (srv, cli result) {
	t.Helper()
	for attempt := 0; attempt < perftestAttempts; attempt++ {
		perfPort++
		common := append([]string{"-p", fmt.Sprint(perfPort)}, args...)
		sn, sa := perfSide(server, test, common)
		cn, ca := perfSide(client, test, common)
		srv, cli = run(sn, sa, cn, ca)
		// Or its clock reads zero MHz and every latency comes out "inf".
		if !strings.Contains(srv.Stderr+cli.Stderr, "Can't produce a report") &&
			!(perftestInf.MatchString(srv.Stdout+cli.Stdout) && (server == "perftest" || client == "perftest")) {
			break
		}
		t.Logf("perftest's clock sampling failed under emulation; running %s again", test)
	}
	return srv, cli
}

// perftestAttempts is how many runs perfPair gives a pair whose
// perftest could not read its clock. perftest samples its clock for
// every report, so an -a run draws 23 times on each bandwidth side and
// fails far more often than a one-size run.
const perftestAttempts = 6

// ibWriteBWClient runs ib_write_bw -F against 10.9.0.1 with GID index gid,
// again while its clock sampling fails under qemu ("Can't produce a
// report"), up to perftestAttempts runs; it returns the last run and how
// many there were.
func ibWriteBWClient(t *testing.T, gid string) (last result, runs int) {
	t.Helper()
	for runs < perftestAttempts {
		last = run(t, 4*time.Minute, "ib_write_bw", "-d", "rxe0", "-x", gid, "-F", "10.9.0.1")
		runs++
		if !strings.Contains(last.Stderr, "Can't produce a report") {
			break
		}
	}
	return last, runs
}

// perftestInf is a latency of perftest's zero-MHz clock: in a row, or
// alone with --output=latency.
var perftestInf = regexp.MustCompile(`(?m)(^| )inf( |$)`)

// singlePair runs both sides in this VM, both on rxe0 10.9.0.1.
func singlePair(t *testing.T) func(string, []string, string, []string) (result, result) {
	return singlePairWithin(t, 4*time.Minute)
}

// singlePairWithin is singlePair with each side killed after limit.
func singlePairWithin(t *testing.T, limit time.Duration) func(string, []string, string, []string) (result, result) {
	return func(sn string, sa []string, cn string, ca []string) (result, result) {
		return runPair(t, limit, sn, sa, func() { waitTCPListen(t, perfPort) }, func() result {
			cli := run(t, limit, cn, append(ca, "10.9.0.1")...)
			logFailure(t, "client", cli)
			return cli
		})
	}
}

var (
	// The average is padded to 7 characters: a wider one meets the tabs.
	bwRow = regexp.MustCompile(`(?m)^ (\d+)\s+(\d+)\s+(\d+\.\d\d)\s+(\d+\.\d\d) *\t\t   (\d+\.\d{6})$`)
	// perftest's t_stdev reads -nan when its int arithmetic overflows; its
	// last column is padded to 7 characters.
	latRow = regexp.MustCompile(`(?m)^ (\d+)\s+(\d+)(?:\s+(?:\d+\.\d\d|-?nan)){7} *$`)
)

// logFailure shows a failed client before the server is waited for: a
// server stuck in perftest's endless polling would hide it otherwise.
func logFailure(t *testing.T, side string, r result) {
	if r.Code != 0 {
		t.Logf("%s exit %d\n%s%s", side, r.Code, r.Stdout, r.Stderr)
	}
}

// checkPerf asserts that both sides exited 0 and printed perftest's table,
// and, for write_bw and read_bw, that the server printed the client's row.
func checkPerf(t *testing.T, test string, srv, cli result) {
	t.Helper()
	if srv.Code != 0 || cli.Code != 0 {
		t.Fatalf("%s: server exit %d\n%s%s\nclient exit %d\n%s%s", test, srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
	}
	lat := strings.HasSuffix(test, "_lat")
	row, head := bwRow, " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
	if lat {
		row, head = latRow, " #bytes #iterations    t_min[usec]"
	}
	for side, r := range map[string]result{"server": srv, "client": cli} {
		if (test == "read_lat" || test == "atomic_lat") && side == "server" {
			continue // ib_read_lat's and ib_atomic_lat's servers print no table
		}
		if !strings.Contains(r.Stdout, head) || !row.MatchString(r.Stdout) {
			t.Errorf("%s %s printed no result table:\n%s", test, side, r.Stdout)
		}
	}
	if test == "write_bw" || test == "read_bw" {
		// The server prints the client's last row (with -a, of 2^23 bytes).
		rows := row.FindAllString(cli.Stdout, -1)
		if s := row.FindString(srv.Stdout); len(rows) == 0 || s != rows[len(rows)-1] {
			t.Errorf("%s: the server's row %q is not the client's last %q", test, s, rows)
		}
	}
}

// TestSinglePerfInteropWithPerftest: every test, rdmactl against the real
// perftest in both roles, both on rxe0 -x 1.
func TestSinglePerfInteropWithPerftest(t *testing.T) {
	for _, test := range []string{"write_bw", "send_lat", "read_bw", "write_lat", "read_lat", "send_bw"} {
		// Few iterations: the whole -run Perf must fit go test's default
		// 10 minutes under emulation, boots included.
		args := []string{"-d", "rxe0", "-x", ownGID(t), "-n", "100"}
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(test+"/"+roles[0]+"-server", func(t *testing.T) {
				srv, cli := perfPair(t, test, roles[0], roles[1], singlePair(t), args...)
				checkPerf(t, test, srv, cli)
			})
		}
	}
}

// TestSinglePerfAllSizes: -a runs 2 … 2^23 against ib_write_bw.
func TestSinglePerfAllSizes(t *testing.T) {
	srv, cli := perfPair(t, "write_bw", "perftest", "rdmactl", singlePair(t), "-d", "rxe0", "-x", ownGID(t), "-a", "-n", "5")
	checkPerf(t, "write_bw", srv, cli)
	if n := len(bwRow.FindAllString(cli.Stdout, -1)); n != 23 {
		t.Fatalf("-a printed %d rows, want 23 (2 … 2^23):\n%s", n, cli.Stdout)
	}
}

// TestSinglePerfHints: the classic failures end in one line and a hint.
func TestSinglePerfHints(t *testing.T) {
	perfPort++
	r := run(t, time.Minute, rdmactl, "perf", "write_bw", "-d", "rxe0", "-x", ownGID(t), "-p", fmt.Sprint(perfPort), "10.9.0.1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "hint: the peer is not started") {
		t.Errorf("no server: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = run(t, time.Minute, rdmactl, "perf", "write_bw", "-d", "rxe0", "-x", "77", "-p", fmt.Sprint(perfPort), "10.9.0.1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "GID index 77") || !strings.Contains(r.Stderr, "hint: ") {
		t.Errorf("empty -x: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = run(t, time.Minute, rdmactl, "perf", "write_bw", "-d", "rxe0", "-m", "8192")
	if r.Code != 2 {
		t.Errorf("-m 8192: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = run(t, time.Minute, rdmactl, "perf", "write_bw", "-d", "rxe0", "-x", ownGID(t), "-m", "4096", "-p", fmt.Sprint(perfPort), "10.9.0.1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "active MTU") || !strings.Contains(r.Stderr, "hint: use -m") {
		t.Errorf("-m above the active MTU: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestSinglePerfJSON: --json carries the numbers and the CPU per iteration;
// -x auto (given last, it overrides -x 1) picks perftest's GID.
func TestSinglePerfJSON(t *testing.T) {
	srv, cli := perfPair(t, "send_lat", "perftest", "rdmactl", func(sn string, sa []string, cn string, ca []string) (result, result) {
		s := start(t, 4*time.Minute, sn, sa...)
		waitTCPListen(t, perfPort)
		// rdmactl finds the GID of 10.9.0.1 itself: the index perftest was given.
		ca = append(append([]string{}, ca...), "-x", "auto", "--json", "10.9.0.1")
		cli := run(t, 4*time.Minute, cn, ca...)
		logFailure(t, "client", cli)
		return s.wait(t), cli
	}, "-d", "rxe0", "-x", ownGID(t), "-n", "200")
	if srv.Code != 0 || cli.Code != 0 {
		t.Fatalf("server %+v\nclient %+v", srv, cli)
	}
	for _, want := range []string{`"t_typical_usec"`, `"usec_per_iteration"`, `"test":"send_lat"`, `"iterations":200`, `"gid_index":1,`} {
		if !strings.Contains(cli.Stdout, want) {
			t.Errorf("--json lacks %s:\n%s", want, cli.Stdout)
		}
	}
}

// perftestQPN is one of perftest's address lines: which side, and its QPN.
var perftestQPN = regexp.MustCompile(`(?m)^ (local|remote) address: LID \w+ QPN (0x[0-9a-f]+) `)

// TestSinglePerfJSONTwoQPs: rdmactl write_bw -q 2 --json against
// ib_write_bw -q 2: qp_pairs holds both QPs, each remote record the QP
// perftest printed as its local one, each local record perftest's remote.
func TestSinglePerfJSONTwoQPs(t *testing.T) {
	srv, cli := perfPair(t, "write_bw", "perftest", "rdmactl", func(sn string, sa []string, cn string, ca []string) (result, result) {
		return singlePair(t)(sn, sa, cn, append(append([]string{}, ca...), "--json"))
	}, "-d", "rxe0", "-x", ownGID(t), "-n", "100", "-q", "2")
	if srv.Code != 0 || cli.Code != 0 {
		t.Fatalf("server %+v\nclient %+v", srv, cli)
	}
	if err := schema.Validate("perf", []byte(cli.Stdout)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	var doc struct {
		QPPairs []struct {
			Local struct {
				QPN uint32 `json:"qp_num"`
			} `json:"local"`
			Remote struct {
				QPN uint32 `json:"qp_num"`
			} `json:"remote"`
		} `json:"qp_pairs"`
	}
	if err := json.Unmarshal([]byte(cli.Stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, cli.Stdout)
	}
	perftest := map[string][]uint32{}
	for _, m := range perftestQPN.FindAllStringSubmatch(srv.Stdout, -1) {
		n, _ := strconv.ParseUint(m[2], 0, 32)
		perftest[m[1]] = append(perftest[m[1]], uint32(n))
	}
	if len(doc.QPPairs) != 2 || len(perftest["local"]) != 2 || len(perftest["remote"]) != 2 {
		t.Fatalf("want two QPs each side: rdmactl %+v, perftest %v:\n%s", doc.QPPairs, perftest, srv.Stdout)
	}
	for i, p := range doc.QPPairs {
		if p.Remote.QPN != perftest["local"][i] || p.Local.QPN != perftest["remote"][i] {
			t.Errorf("QP %d: rdmactl local %#x remote %#x, perftest local %#x remote %#x", i, p.Local.QPN, p.Remote.QPN, perftest["local"][i], perftest["remote"][i])
		}
	}
}

// TestTwoHostsPerfWriteBW: write_bw across two kernels, each tool in each role.
func TestTwoHostsPerfWriteBW(t *testing.T) {
	cross := func(sn string, sa []string, cn string, ca []string) (result, result) {
		s := start(t, 4*time.Minute, sn, sa...)
		waitTCPListen(t, perfPort)
		cli := remote(t, 4*time.Minute, "timeout 230 "+shellJoin(append(append([]string{cn}, ca...), "10.9.1.1")))
		return s.wait(t), cli
	}
	args := []string{"-d", "rxe0", "-x", ownGID(t), "-n", "100"}
	for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
		t.Run(roles[0]+"-server-on-A", func(t *testing.T) {
			srv, cli := perfPair(t, "write_bw", roles[0], roles[1], cross, args...)
			checkPerf(t, "write_bw", srv, cli)
		})
	}
}

// TestSinglePerfBusyPoll: send_lat, read_lat and atomic_lat --busy-poll
// (the endpoint's one-call loops) against the real perftest, each tool in
// each role.
func TestSinglePerfBusyPoll(t *testing.T) {
	busy := func(sn string, sa []string, cn string, ca []string) (result, result) {
		if sn == rdmactl {
			sa = append(append([]string{}, sa...), "--busy-poll")
		}
		if cn == rdmactl {
			ca = append(append([]string{}, ca...), "--busy-poll")
		}
		return singlePair(t)(sn, sa, cn, ca)
	}
	for _, test := range []string{"send_lat", "write_lat", "read_lat", "atomic_lat"} {
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(test+"/"+roles[0]+"-server", func(t *testing.T) {
				srv, cli := perfPair(t, test, roles[0], roles[1], busy, "-d", "rxe0", "-x", ownGID(t), "-n", "200")
				checkPerf(t, test, srv, cli)
			})
		}
	}
}

// TestSinglePerfTwoQPs: -q 2 write_bw, read_bw and send_bw against
// perftest's with -q 2, each tool in each role: two records each way, and
// the rows count both QPs' messages.
func TestSinglePerfTwoQPs(t *testing.T) {
	for _, test := range []string{"write_bw", "read_bw", "send_bw"} {
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(test+"/"+roles[0]+"-server", func(t *testing.T) {
				srv, cli := perfPair(t, test, roles[0], roles[1], singlePair(t), "-d", "rxe0", "-x", ownGID(t), "-n", "100", "-q", "2")
				checkPerf(t, test, srv, cli)
				for side, r := range map[string]result{"server": srv, "client": cli} {
					if l, rr := strings.Count(r.Stdout, " local address:"), strings.Count(r.Stdout, " remote address:"); l != 2 || rr != 2 {
						t.Errorf("%s printed %d local and %d remote records, want 2 each:\n%s", side, l, rr, r.Stdout)
					}
					if m := bwRow.FindStringSubmatch(r.Stdout); m == nil || m[2] != "200" {
						t.Errorf("%s's row should count 2 × 100 messages: %q", side, m)
					}
				}
			})
		}
	}
}

// TestSinglePerfRxDepth: -r 2 on the send tests, with and without -R,
// against perftest's, each tool in each role: both finish, and the server
// posts (and says it posts) two receives at a time.
func TestSinglePerfRxDepth(t *testing.T) {
	for _, c := range []struct {
		test string
		cm   bool
	}{{"send_bw", false}, {"send_bw", true}, {"send_lat", false}} {
		args := []string{"-d", "rxe0", "-x", ownGID(t), "-n", "200", "-r", "2"}
		pair := singlePair(t)
		if c.cm {
			args, pair = append(args, "-R"), cmPair(t)
		}
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(fmt.Sprintf("%s/R=%v/%s-server", c.test, c.cm, roles[0]), func(t *testing.T) {
				srv, cli := perfPair(t, c.test, roles[0], roles[1], pair, args...)
				checkPerf(t, c.test, srv, cli)
				if !strings.Contains(srv.Stdout, " RX depth        : 2\n") {
					t.Errorf("the server's header should show RX depth 2:\n%s", srv.Stdout)
				}
			})
		}
	}
}

// durRow is perftest's duration latency row (REPORT_FMT_LAT_DUR).
var durRow = regexp.MustCompile(`(?m)^ (\d+) +([1-9]\d*) +(\d+\.\d\d) +(\d+\.\d\d) *$`)

// TestSinglePerfBWDuration: -D 4 for write_bw and send_bw (one QP and
// two) against the real perftest, each tool in each role: both exit 0 and
// print a row with messages counted. send_bw's server counts its own, and
// both sides count only perftest's sample window (the 2 s between 1 s
// margins), so their counts agree within a quarter.
func TestSinglePerfBWDuration(t *testing.T) {
	for _, c := range []struct{ test, qps string }{{"write_bw", "1"}, {"send_bw", "1"}, {"send_bw", "2"}} {
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(c.test+"/q"+c.qps+"/"+roles[0]+"-server", func(t *testing.T) {
				srv, cli := perfPair(t, c.test, roles[0], roles[1], singlePair(t), "-d", "rxe0", "-x", ownGID(t), "-D", "4", "-q", c.qps)
				checkPerf(t, c.test, srv, cli)
				counts := map[string]float64{}
				for side, r := range map[string]result{"server": srv, "client": cli} {
					m := bwRow.FindStringSubmatch(r.Stdout)
					if m == nil || m[2] == "0" {
						t.Fatalf("%s's row counts no messages: %q\n%s", side, m, r.Stdout)
					}
					counts[side], _ = strconv.ParseFloat(m[2], 64)
				}
				if r := counts["client"] / counts["server"]; r < 0.75 || r > 1.25 {
					t.Errorf("the client counted %.0f messages, the server %.0f: not the same window\nserver:\n%s\nclient:\n%s", counts["client"], counts["server"], srv.Stdout, cli.Stdout)
				}
			})
		}
	}
}

// TestSinglePerfTimedClientEndsAtItsTime: a timed send_bw client ends at
// its time, as perftest's, though requests are still in flight then and
// the server no longer takes them: here the server's -D 2 ends before the
// client's -D 4 (on one CPU a server's time can end while a client still
// waits for its last requests, and -r 2 leaves it few receives). Both
// exit 0 with their tables, with perftest's client as with rdmactl's.
func TestSinglePerfTimedClientEndsAtItsTime(t *testing.T) {
	for _, client := range []string{"perftest", "rdmactl"} {
		t.Run(client+"-client", func(t *testing.T) {
			shortServer := func(sn string, sa []string, cn string, ca []string) (result, result) {
				sa = append([]string{}, sa...)
				for i := range sa {
					if sa[i] == "-D" {
						sa[i+1] = "2"
					}
				}
				if client == "rdmactl" {
					// a client that waited for its requests would
					// fail at this bound instead of hanging
					ca = append(append([]string{}, ca...), "--timeout", "20s")
				}
				return singlePair(t)(sn, sa, cn, ca)
			}
			srv, cli := perfPair(t, "send_bw", "perftest", client, shortServer, "-d", "rxe0", "-x", ownGID(t), "-D", "4", "-r", "2")
			checkPerf(t, "send_bw", srv, cli)
		})
	}
}

// TestSinglePerfLatencyDuration: -D 4 for the three latency tests against
// the real perftest, each tool in each role: both print the duration
// table (t_avg, tps) with messages counted.
func TestSinglePerfLatencyDuration(t *testing.T) {
	for _, test := range []string{"send_lat", "write_lat", "read_lat"} {
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(test+"/"+roles[0]+"-server", func(t *testing.T) {
				srv, cli := perfPair(t, test, roles[0], roles[1], singlePair(t), "-d", "rxe0", "-x", ownGID(t), "-D", "4")
				if srv.Code != 0 || cli.Code != 0 {
					t.Fatalf("server exit %d\n%s%s\nclient exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
				}
				for side, r := range map[string]result{"server": srv, "client": cli} {
					if test == "read_lat" && side == "server" {
						continue // ib_read_lat's server prints no table
					}
					if !strings.Contains(r.Stdout, " #bytes        #iterations       t_avg[usec]    tps average\n") || !durRow.MatchString(r.Stdout) {
						t.Errorf("%s printed no duration table:\n%s", side, r.Stdout)
					}
				}
			})
		}
	}
}

// TestSinglePerfWriteLatDurationEnd: write_lat -D against ib_write_lat,
// 15 runs in each role, each within 30 s. Debian 12's ib_write_lat (perftest
// 4.5+0.17) waits for each write's completion without looking at its
// clock: when the side that ends first tore its QP down before the other's
// answer to its last write was acknowledged, ib_write_lat spun forever.
// So the end of a run must leave the
// peer's last write acknowledged.
func TestSinglePerfWriteLatDurationEnd(t *testing.T) {
	for _, roles := range [][2]string{{"rdmactl", "perftest"}, {"perftest", "rdmactl"}} {
		t.Run(roles[0]+"-server", func(t *testing.T) {
			for i := 0; i < 15; i++ {
				srv, cli := perfPair(t, "write_lat", roles[0], roles[1], singlePairWithin(t, 30*time.Second), "-d", "rxe0", "-x", ownGID(t), "-D", "1")
				if srv.Code != 0 || cli.Code != 0 || !durRow.MatchString(cli.Stdout) {
					t.Fatalf("run %d: server exit %d\n%s%s\nclient exit %d\n%s%s", i+1, srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
				}
			}
		})
	}
}
