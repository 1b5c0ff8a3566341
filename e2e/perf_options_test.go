//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// perfOptionCases are the options people type daily that rdmactl takes,
// each run against the real perftest in both roles.
var perfOptionCases = []struct {
	test, args string
	check      func(t *testing.T, side string, r result, peer result)
}{
	{"write_bw", "-Q 4", headerHas(" CQ Moderation   : 4\n")},
	{"send_bw", "-Q 4", headerHas(" CQ Moderation   : 4\n")},
	{"write_bw", "-N", clientPeakZero},
	{"write_bw", "-u 16", nil},
	{"write_bw", "-S 0", nil},
	{"write_bw", "-S 3", nil},
	{"send_bw", "-S 7", nil},
	{"read_bw", "-S 1", nil},
	{"atomic_bw", "-S 15", nil},
	{"send_lat", "-S 15", nil},
	{"write_lat", "-S 2", nil},
	{"read_lat", "-S 9", nil},
	{"atomic_lat", "-S 4", nil},
	{"send_bw", "-c UD -S 5", udRun("send_bw")},
	{"write_bw", "-c RC", nil},
	{"write_bw", "-c UC", ucRun("write_bw", 0)},
	{"write_lat", "-c UC", ucRun("write_lat", 0)},
	{"send_bw", "-c UC", ucRun("send_bw", 0)},
	{"send_lat", "-c UC", ucRun("send_lat", 0)},
	{"send_bw", "-c UC -q 2", ucRun("send_bw", 0)},
	{"send_bw", "-c UC -n 1000", ucRun("send_bw", 1000)},
	{"write_bw", "-c UC -b", bothDirections(false)},
	{"send_bw", "-c UD", udRun("send_bw")},
	{"send_lat", "-c UD", udRun("send_lat")},
	{"send_bw", "-c UD -q 2 -s 512", udRun("send_bw")},
	{"write_bw", "--report_gbit", headerHas("BW peak[Gb/sec]")},
	{"write_bw", "--output=bandwidth", oneNumber},
	{"send_bw", "--output=message_rate", oneNumber},
	{"write_lat", "--output=latency", oneNumber},
	{"write_lat", "-H", sameSamples},
	{"send_lat", "-U", sameSamples},
	{"send_lat", "-e", nil},
	{"send_bw", "-e", eventsRun("send_bw")},
	{"send_bw", "-e -q 2", eventsRun("send_bw")},
	{"read_bw", "-e", eventsRun("read_bw")},
	{"atomic_bw", "-e", eventsRun("atomic_bw")},
	{"write_bw", "-D 4 -f 1", nil},
	{"write_bw", "-c UC -D 4 -f 1", nil},
	{"send_bw", "-c UC -D 4 -f 1", nil},
	{"send_bw", "-c UD -D 4 -f 1", nil},
	{"write_bw", "-D 4 -f 1 --cpu_util", cpuUtilColumn},
	{"send_bw", "-D 4 -f 1 --cpu_util", cpuUtilColumn},
	{"send_lat", "-D 4 -f 1 --cpu_util", cpuUtilColumn},
	{"write_bw", "--cpu_util", cpuUtilNeedsDuration},
	{"write_bw", "-l 4", headerHas(" Post List       : 4\n CQ Moderation   : 4\n")},
	{"send_bw", "-l 4", headerHas("                    Send Post List BW Test\n")},
	{"write_bw", "-I 64 -s 64", inlineRun("write_bw", 64)},
	{"send_bw", "-I 128 -s 100", inlineRun("send_bw", 128)},
	{"write_lat", "-I 220", inlineRun("write_lat", 220)},
	{"send_lat", "-I 236", inlineRun("send_lat", 236)},
	{"write_bw", "--tclass 106", nil},
	{"send_lat", "--tclass 106", nil},
	{"write_bw", "-L 64", nil},
	{"read_bw", "-o 4", headerHas(" Outstand reads  : 4\n")},
	{"read_lat", "-o 2", headerHas(" Outstand reads  : 2\n")},
	{"atomic_bw", "-o 8", headerHas(" Outstand reads  : 8\n")},
	{"read_bw", "-o 100000", readsCutToMax},
	{"write_bw", "--reversed", reversedParts},
	{"send_bw", "--reversed", reversedParts},
	{"send_lat", "--reversed", reversedParts},
	{"send_bw", "--recv_post_list 4 -r 30", headerHas(" Recv Post List  : 4\n")},
	{"send_bw", "--recv_post_list 5 -q 2", headerHas(" Recv Post List  : 5\n")},
	{"write_bw", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", countersLike},
	{"send_bw", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", countersLike},
	{"send_lat", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", countersLike},
	{"send_lat", "-C", cyclesLike},
	{"write_lat", "-C -H", cyclesLike},
	{"write_bw", "-b", bothDirections(false)},
	{"read_bw", "-b", bothDirections(false)},
	{"write_bw", "-b --report-both", bothDirections(true)},
	{"atomic_bw", "-b", bothDirections(false)},
	{"send_bw", "-b", bothDirections(false)},
	{"send_bw", "-b -q 2", bothDirections(false)},
	{"send_bw", "-b --report-both", bothDirections(true)},
	{"send_bw", "-b -e", allOf(bothDirections(false), eventsRun("send_bw"))},
	{"send_bw", "-b -D 4 -f 1", eachOwnTimedRow},
	{"send_bw", "-b -N", allOf(bothDirections(false), clientPeakZero)},
	{"read_bw", "-b -e", allOf(bothDirections(false), eventsRun("read_bw"))},
	{"atomic_bw", "-b --report-both", bothDirections(true)},
	{"write_bw", "--mr_per_qp -q 2", keyPerQP},
	{"read_bw", "--mr_per_qp -q 2", keyPerQP},
	{"send_bw", "--mr_per_qp -q 2", nil},
	{"send_bw", "--use-srq", headerHas("Using SRQ      : ON\n")},
	{"send_bw", "--use-srq -q 2", headerHas("Using SRQ      : ON\n")},
	{"send_bw", "--use-srq -c UD", headerHas("Using SRQ      : ON\n")},
	{"send_lat", "--use-srq", headerHas("Using SRQ      : ON\n")},

	// The cells of docs/perf-options.md's gap: options perftest takes on
	// a test, each run on that test in both roles.
	{"write_bw", "-i 1", nil},
	{"send_bw", "-i 1", nil},
	{"read_bw", "-i 1", nil},
	{"atomic_bw", "-i 1", nil},
	{"send_lat", "-i 1", nil},
	{"write_lat", "-i 1", nil},
	{"read_lat", "-i 1", nil},
	{"atomic_lat", "-i 1", nil},
	{"read_bw", "-s 64", nil},
	{"write_lat", "-s 64", nil},
	{"read_lat", "-s 64", nil},
	{"write_bw", "-a -n 5", allSizes("write_bw")},
	{"send_bw", "-a -n 5", allSizes("send_bw")},
	{"read_bw", "-a -n 5", allSizes("read_bw")},
	{"send_lat", "-a -n 5", allSizes("send_lat")},
	{"write_lat", "-a -n 5", allSizes("write_lat")},
	{"read_lat", "-a -n 5", allSizes("read_lat")},
	{"read_bw", "-D 3 -f 1", nil},
	{"atomic_bw", "-D 3 -f 1", nil},
	{"write_lat", "-D 3 -f 1", timedLatTable("write_lat", false)},
	{"read_lat", "-D 3 -f 1", timedLatTable("read_lat", false)},
	{"atomic_lat", "-D 3 -f 1", timedLatTable("atomic_lat", false)},
	{"atomic_bw", "-q 2", nil},
	{"write_bw", "-t 64", nil},
	{"send_bw", "-t 64", nil},
	{"read_bw", "-t 64", nil},
	{"atomic_bw", "-t 64", nil},
	{"send_lat", "-t 64", nil},
	{"write_lat", "-t 64", nil},
	{"read_lat", "-t 64", nil},
	{"atomic_lat", "-t 64", nil},
	{"write_bw", "-m 1024", nil},
	{"send_bw", "-m 1024", nil},
	{"read_bw", "-m 1024", nil},
	{"atomic_bw", "-m 1024", nil},
	{"send_lat", "-m 1024", nil},
	{"write_lat", "-m 1024", nil},
	{"read_lat", "-m 1024", nil},
	{"atomic_lat", "-m 1024", nil},
	{"read_bw", "-Q 2", nil},
	{"atomic_bw", "-Q 2", nil},
	{"send_lat", "-Q 2", nil},
	{"write_lat", "-Q 2", nil},
	{"read_lat", "-Q 2", nil},
	{"atomic_lat", "-Q 2", nil},
	{"send_bw", "-N", nil},
	{"read_bw", "-N", nil},
	{"atomic_bw", "-N", nil},
	{"send_bw", "-u 16", nil},
	{"read_bw", "-u 16", nil},
	{"atomic_bw", "-u 16", nil},
	{"send_lat", "-u 16", nil},
	{"write_lat", "-u 16", nil},
	{"read_lat", "-u 16", nil},
	{"atomic_lat", "-u 16", nil},
	{"read_bw", "-c RC", nil},
	{"atomic_bw", "-c RC", nil},
	{"read_lat", "-c RC", nil},
	{"atomic_lat", "-c RC", nil},
	{"read_lat", "-e", nil},
	{"atomic_lat", "-e", nil},
	{"read_bw", "--output=bandwidth", oneNumberPastStrayLine("read_bw")},
	{"atomic_bw", "--output=message_rate", oneNumberPastStrayLine("atomic_bw")},
	{"send_lat", "--output=latency", oneNumber},
	{"read_lat", "--output=latency", oneNumberPastStrayLine("read_lat")},
	{"atomic_lat", "--output=latency", oneNumberPastStrayLine("atomic_lat")},
	{"send_lat", "-H", nil},
	{"read_lat", "-H", nil},
	{"atomic_lat", "-H", nil},
	{"write_lat", "-U", nil},
	{"read_lat", "-U", nil},
	{"atomic_lat", "-U", nil},
	{"read_bw", "-l 4", nil},
	{"atomic_bw", "-l 4", nil},
	{"read_bw", "--reversed", nil},
	{"atomic_bw", "--reversed", nil},
	{"write_lat", "--reversed", nil},
	{"read_lat", "--reversed", reversedLatTable},
	{"atomic_lat", "--reversed", reversedLatTable},
	{"write_bw", "--recv_post_list 2", nil},
	{"read_bw", "--recv_post_list 2", nil},
	{"atomic_bw", "--recv_post_list 2", nil},
	{"atomic_lat", "-o 2", nil},
	{"send_bw", "-R -T 32", nil},
	{"read_bw", "-R -T 32", nil},
	{"atomic_bw", "-R -T 32", nil},
	{"send_lat", "-R -T 32", nil},
	{"write_lat", "-R -T 32", nil},
	{"read_lat", "-R -T 32", nil},
	{"atomic_lat", "-R -T 32", nil},
	{"atomic_bw", "-R", nil},
	{"atomic_lat", "-R", nil},
	{"atomic_bw", "-z", nil},
	{"write_lat", "-z", nil},
	{"read_lat", "-z", nil},
	{"atomic_lat", "-z", nil},
	{"send_bw", "--tclass 32", nil},
	{"read_bw", "--tclass 32", nil},
	{"atomic_bw", "--tclass 32", nil},
	{"write_lat", "--tclass 32", nil},
	{"read_lat", "--tclass 32", nil},
	{"atomic_lat", "--tclass 32", nil},
	{"read_bw", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", nil},
	{"atomic_bw", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", nil},
	{"write_lat", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", nil},
	{"read_lat", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", nil},
	{"atomic_lat", "-W hw_counters/sent_pkts,hw_counters/rcvd_pkts", nil},
	{"read_lat", "-C", nil},
	{"atomic_lat", "-C", nil},
	{"read_bw", "-b --report-both", bothDirections(true)},
	{"send_bw", "--report-both", nil},
	{"atomic_bw", "--report-both", nil},
	{"send_lat", "--report-both", nil},
	{"write_lat", "--report-both", nil},
	{"read_lat", "--report-both", nil},
	{"atomic_lat", "--report-both", nil},
	{"send_bw", "--report_gbits", headerHas("BW peak[Gb/sec]")},
	{"read_bw", "--report_gbits", headerHas("BW peak[Gb/sec]")},
	{"send_lat", "--report_gbits", nil},
	{"write_lat", "--report_gbits", nil},
	{"read_lat", "--report_gbits", nil},
	{"atomic_lat", "--report_gbits", nil},
	{"write_bw", "-F", nil},
	{"send_bw", "-F", nil},
	{"read_bw", "-F", nil},
	{"atomic_bw", "-F", nil},
	{"send_lat", "-F", nil},
	{"write_lat", "-F", nil},
	{"read_lat", "-F", nil},
	{"atomic_lat", "-F", nil},
	{"read_bw", "-w 0.001", nil},
	{"atomic_bw", "-w 0.001", nil},
	{"send_lat", "-w 0.001", nil},
	{"write_lat", "-w 0.001", nil},
	{"read_lat", "-w 0.001", nil},
	{"atomic_lat", "-w 0.001", nil},
	{"read_bw", "-y 0.0001", nil},
	{"atomic_bw", "-y 0.0001", nil},
	{"send_lat", "-y 0.0001", nil},
	{"write_lat", "-y 0.0001", nil},
	{"read_lat", "-y 0.0001", nil},
	{"atomic_lat", "-y 0.0001", nil},
	{"write_bw", "--perform_warm_up", nil},
	{"send_bw", "--perform_warm_up", nil},
	{"read_bw", "--perform_warm_up", nil},
	{"send_lat", "--perform_warm_up", nil},
	{"write_lat", "--perform_warm_up", nil},
	{"read_lat", "--perform_warm_up", nil},
	{"atomic_lat", "--perform_warm_up", nil},
	{"read_bw", "-D 3 --cpu_util", cpuUtilColumn},
	{"atomic_bw", "-D 3 --cpu_util", cpuUtilColumn},
	{"write_lat", "-D 3 --cpu_util", timedLatTable("write_lat", true)},
	{"read_lat", "-D 3 --cpu_util", timedLatTable("read_lat", true)},
	{"atomic_lat", "-D 3 --cpu_util", timedLatTable("atomic_lat", true)},
	{"read_bw", "--rate_limit 0.1 --rate_units g --rate_limit_type SW --burst_size 16", nil},
	{"atomic_bw", "--rate_limit 10 --rate_units M", nil},
	{"send_lat", "--rate_limit 10 --rate_units M", nil},
	{"write_lat", "--rate_limit 10 --rate_units g --burst_size 16", nil},
	{"read_lat", "--rate_limit 10 --rate_units g --burst_size 16", nil},
	{"atomic_lat", "--rate_limit 10 --rate_units g --burst_size 16", nil},
	{"atomic_bw", "--mr_per_qp -q 2", nil},
	{"send_lat", "--mr_per_qp", nil},
	{"write_lat", "--mr_per_qp", nil},
	{"read_lat", "--mr_per_qp", nil},
	{"atomic_lat", "--mr_per_qp", nil},
}

// timedLatTable: a latency test with -D prints perftest's timed table
// (t_avg and tps average, and CPU_Util[%] with --cpu_util) on each side
// that prints one: not on ib_read_lat's and ib_atomic_lat's servers,
// which print no table, nor on rdmactl's in their place.
func timedLatTable(test string, cpu bool) func(*testing.T, string, result, result) {
	head := ` #bytes        #iterations       t_avg[usec]    tps average`
	if cpu {
		head += `    CPU_Util[%]`
	}
	table := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(head) + `\n \d+ +[1-9]\d* +\d+\.\d\d +\d+\.\d\d`)
	return func(t *testing.T, side string, r, peer result) {
		peerSide := map[string]string{"client": "server", "server": "client"}[side]
		for _, s := range []struct {
			who, role, out string
		}{{"rdmactl", side, r.Stdout}, {"perftest", peerSide, peer.Stdout}} {
			want := !(s.role == "server" && (test == "read_lat" || test == "atomic_lat"))
			if got := table.MatchString(s.out); got != want {
				t.Errorf("%s %s: the timed table %q printed %v, want %v:\n%s", s.who, s.role, head, got, want, s.out)
			}
		}
	}
}

// reversedLatTable: with --reversed the listening side runs the test's
// client part, so on read_lat and atomic_lat it prints the table and the
// connecting side none, in rdmactl as in perftest.
func reversedLatTable(t *testing.T, side string, r, peer result) {
	listening, connecting := r, peer
	if side == "client" {
		listening, connecting = peer, r
	}
	if !latRow.MatchString(listening.Stdout) || strings.Contains(connecting.Stdout, " #bytes") {
		t.Errorf("--reversed, rdmactl as the %s: the table is not the listening side's alone:\nlistening:\n%s\nconnecting:\n%s", side, listening.Stdout, connecting.Stdout)
	}
}

// oneNumberPastStrayLine: --output on the read and atomic tests. rdmactl
// prints the number alone; perftest first prints the stray line of
// dashes it prints on those tests for a device it does not know (rxe),
// which rdmactl leaves out of every output. ib_read_lat's and
// ib_atomic_lat's servers print no number, nor does rdmactl's.
func oneNumberPastStrayLine(test string) func(*testing.T, string, result, result) {
	stray := strings.Repeat("-", 87) + "\n"
	return func(t *testing.T, side string, r, peer result) {
		peerIsServer := side == "client"
		noNumber := test == "read_lat" || test == "atomic_lat"
		ours, theirs := r.Stdout, strings.TrimPrefix(peer.Stdout, stray)
		if noNumber && side == "server" {
			if ours != "" || !oneNumberOut.MatchString(theirs) {
				t.Errorf("--output, rdmactl server %q, perftest client %q", r.Stdout, peer.Stdout)
			}
			return
		}
		if noNumber && peerIsServer {
			if !oneNumberOut.MatchString(ours) || theirs != "" {
				t.Errorf("--output, rdmactl client %q, perftest server %q", r.Stdout, peer.Stdout)
			}
			return
		}
		if !oneNumberOut.MatchString(ours) || !oneNumberOut.MatchString(theirs) {
			t.Errorf("--output: rdmactl %s %q, perftest %q", side, r.Stdout, peer.Stdout)
		}
	}
}

// allSizes: -a runs every size from 2 to 2^23 bytes, a row each on the
// client (and on a bandwidth test's server), as perftest's peer does.
func allSizes(test string) func(*testing.T, string, result, result) {
	return func(t *testing.T, side string, r, peer result) {
		srv, cli := r, peer
		if side == "client" {
			srv, cli = peer, r
		}
		checkPerf(t, test, srv, cli)
		row := bwRow
		if strings.HasSuffix(test, "_lat") {
			row = latRow
		}
		n := len(row.FindAllString(cli.Stdout, -1))
		if side == "server" {
			// perftest's client: where its clock sampling failed for a
			// size (perfPair runs it again, and -a has 23 chances),
			// that size's row reads "inf"
			n += len(perftestInfRow.FindAllString(cli.Stdout, -1))
		}
		if n != 23 {
			t.Errorf("-a: the client printed %d rows, want 23 (2 … 2^23):\n%s", n, cli.Stdout)
		}
	}
}

// perftestInfRow is a row of a latency test's table that perftest's
// zero-MHz clock filled with "inf".
var perftestInfRow = regexp.MustCompile(`(?m)^ \d+\s+\d+\s+inf\s+inf\s`)

// keyPerQP: with --mr_per_qp each QP's record has a key of its own, on
// this side as on perftest's.
func keyPerQP(t *testing.T, side string, r, peer result) {
	t.Helper()
	rkey := regexp.MustCompile(`(?m)^ local address: .* RKey (0x[0-9a-f]+) `)
	for who, out := range map[string]string{"rdmactl": r.Stdout, "perftest": peer.Stdout} {
		keys := rkey.FindAllStringSubmatch(out, -1)
		if len(keys) != 2 || keys[0][1] == keys[1][1] {
			t.Errorf("%s (rdmactl's %s): keys %q, want one per QP:\n%s", who, side, keys, out)
		}
	}
}

// bothDirections: with -b both sides print perftest's Bidirectional title
// and the same row, the sum of both sides' results; with --report-both
// each side's own row follows, this side's "Local" being the peer's
// "Remote", under the titles the peer prints.
func bothDirections(each bool) func(*testing.T, string, result, result) {
	return func(t *testing.T, side string, r, peer result) {
		if !strings.Contains(r.Stdout, " Bidirectional BW Test\n") {
			t.Errorf("rdmactl %s: no Bidirectional title:\n%s", side, r.Stdout)
		}
		ours, theirs := bwRow.FindAllString(r.Stdout, -1), bwRow.FindAllString(peer.Stdout, -1)
		n := 1
		if each {
			n = 3
		}
		if len(ours) != n || len(theirs) != n || ours[0] != theirs[0] || each && (ours[1] != theirs[2] || ours[2] != theirs[1]) {
			t.Errorf("rdmactl %s rows %q, perftest %q:\n%s\n%s", side, ours, theirs, r.Stdout, peer.Stdout)
		}
		titles := regexp.MustCompile(`(?m)^ (Local|Remote) results: ?$`)
		if ours, theirs := titles.FindAllString(r.Stdout, -1), titles.FindAllString(peer.Stdout, -1); each && (len(ours) != 2 || strings.Join(ours, "|") != strings.Join(theirs, "|")) {
			t.Errorf("rdmactl %s --report-both titles %q, perftest %q:\n%s", side, ours, theirs, r.Stdout)
		}
	}
}

// eachOwnTimedRow: send_bw -b -D trades no results: each side prints one
// row of its own, counting what it sent and received, with no peak, in
// rdmactl as in perftest; the two rows' averages within a factor of two
// of each other (both sides move the same traffic for the same time).
func eachOwnTimedRow(t *testing.T, side string, r, peer result) {
	for who, out := range map[string]string{"rdmactl": r.Stdout, "perftest": peer.Stdout} {
		rows := bwRow.FindAllStringSubmatch(out, -1)
		if !strings.Contains(out, " Bidirectional BW Test\n") || len(rows) != 1 || rows[0][3] != "0.00" || strings.Contains(out, "results:") {
			t.Fatalf("%s (rdmactl as the %s): want one row of its own, no peak:\n%s", who, side, out)
		}
	}
	avg := func(out string) float64 {
		v, _ := strconv.ParseFloat(bwRow.FindStringSubmatch(out)[4], 64)
		return v
	}
	if ours, theirs := avg(r.Stdout), avg(peer.Stdout); !(ours > theirs/2 && ours < theirs*2) {
		t.Errorf("rdmactl %s averages %.2f MB/sec, perftest %.2f: not the same traffic", side, ours, theirs)
	}
}

// cyclesLike: -C prints perftest's table heading (its [usec] labels kept)
// and rows in cycles: rdmactl's typical latency within a factor of 20 of
// perftest's in the same VM, where microseconds would be a thousand times
// smaller; with -H both list the samples in cycles.
func cyclesLike(t *testing.T, side string, r, peer result) {
	head := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, " #bytes") {
				return l
			}
		}
		return ""
	}
	if h := head(r.Stdout); h == "" || h != head(peer.Stdout) {
		t.Errorf("rdmactl %s heading %q, perftest %q", side, h, head(peer.Stdout))
	}
	typical := func(out string) float64 {
		f := strings.Fields(latRow.FindString(out))
		if len(f) < 5 {
			return 0
		}
		v, _ := strconv.ParseFloat(f[4], 64)
		return v
	}
	ours, theirs := typical(r.Stdout), typical(peer.Stdout)
	if ours <= 0 || theirs <= 0 || ours > 20*theirs || theirs > 20*ours {
		t.Errorf("-C t_typical: rdmactl %s %.2f, perftest %.2f cycles:\n%s\n%s", side, ours, theirs, r.Stdout, peer.Stdout)
	}
	if strings.Contains(peer.Stdout, "#, cycles\n") != strings.Contains(r.Stdout, "#, cycles\n") {
		t.Errorf("-C samples: rdmactl %s and perftest differ:\n%s\n%s", side, r.Stdout, peer.Stdout)
	}
}

var counterLine = regexp.MustCompile(`(?m)^\t(hw_counters/\w+)=(\d+)$`)

// countersLike: -W prints the counters' blocks as perftest does (the same
// names in the same order, each block after a row and closed by a blank
// line), and the packets this run sent show in rdmactl's.
func countersLike(t *testing.T, side string, r, peer result) {
	names := func(out string) (ns []string) {
		for _, m := range counterLine.FindAllStringSubmatch(out, -1) {
			ns = append(ns, m[1])
		}
		return ns
	}
	ours, theirs := names(r.Stdout), names(peer.Stdout)
	if len(ours) == 0 || strings.Join(ours, ",") != strings.Join(theirs, ",") {
		t.Errorf("rdmactl %s printed counters %q, perftest %q:\n%s\n%s", side, ours, theirs, r.Stdout, peer.Stdout)
		return
	}
	if !regexp.MustCompile(`\n\thw_counters/sent_pkts=[1-9]\d*\n\thw_counters/rcvd_pkts=\d+\n\n`).MatchString(r.Stdout) {
		t.Errorf("rdmactl %s: no block with a rise of sent_pkts:\n%s", side, r.Stdout)
	}
}

// inlineRun: rdmactl names -I's size in its header and runs the test as
// usual (perftest turns -I off on rxe, a device it does not know, and
// says so on stderr).
func inlineRun(test string, n int) func(*testing.T, string, result, result) {
	return func(t *testing.T, side string, r, peer result) {
		if want := fmt.Sprintf(" Max inline data : %d[B]\n", n); !strings.Contains(r.Stdout, want) {
			t.Errorf("rdmactl %s lacks %q:\n%s", side, want, r.Stdout)
		}
		srv, cli := r, peer
		if side == "client" {
			srv, cli = peer, r
		}
		checkPerf(t, test, srv, cli)
	}
}

// TestSinglePerfInlineBeyondDevice: -I above what rxe's QPs hold inline
// fails at ibv_create_qp on both sides, with the hint to lower -I.
func TestSinglePerfInlineBeyondDevice(t *testing.T) {
	srv, cli := perfPair(t, "write_bw", "rdmactl", "rdmactl", singlePair(t), "-d", "rxe0", "-x", ownGID(t), "-n", "20", "-I", "912", "-s", "64")
	for side, r := range map[string]result{"server": srv, "client": cli} {
		if r.Code != 1 || !strings.Contains(r.Stderr, "ibv_create_qp") || !strings.Contains(r.Stderr, "try a smaller -I") {
			t.Errorf("%s -I 912: exit %d\n%s%s", side, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// allOf runs every check.
func allOf(checks ...func(*testing.T, string, result, result)) func(*testing.T, string, result, result) {
	return func(t *testing.T, side string, r, peer result) {
		for _, c := range checks {
			c(t, side, r, peer)
		}
	}
}

// eventsRun: with -e both headers say that the test runs with events, on
// the device's first completion vector, and the run is perftest's usual
// one.
func eventsRun(test string) func(*testing.T, string, result, result) {
	return headersSayThenRun(test, " Test with events. Using rxe0_comp0\n", "that it runs with events")
}

// headersSayThenRun: both sides' headers hold line (the test says what
// it means), and the run is perftest's usual one.
func headersSayThenRun(test, line, what string) func(*testing.T, string, result, result) {
	return func(t *testing.T, side string, r, peer result) {
		for who, out := range map[string]string{"rdmactl " + side: r.Stdout, "perftest": peer.Stdout} {
			if !strings.Contains(out, line) {
				t.Errorf("%s's header does not say %s:\n%s", who, what, out)
			}
		}
		srv, cli := r, peer
		if side == "client" {
			srv, cli = peer, r
		}
		checkPerf(t, test, srv, cli)
	}
}

// ucRun: with -c UC both headers name the connection type and the run
// is perftest's usual one; an rdmactl server with rx > 0 posts that many
// receives (-n 1000: a receive per message, not -r's 512, or the UC
// messages finding none are lost and the run never ends).
func ucRun(test string, rx int) func(*testing.T, string, result, result) {
	run := headersSayThenRun(test, " Connection type : UC\t\tUsing SRQ      : OFF\n", "UC")
	return func(t *testing.T, side string, r, peer result) {
		if want := fmt.Sprintf(" RX depth        : %d\n", rx); rx > 0 && side == "server" && !strings.Contains(r.Stdout, want) {
			t.Errorf("rdmactl server lacks %q:\n%s", want, r.Stdout)
		}
		run(t, side, r, peer)
	}
}

// udRun: with -c UD both headers name the connection type, and both
// sides run messages of the same sizes, at most the path MTU (perftest
// cuts send_bw's default size and -a's to it).
func udRun(test string) func(*testing.T, string, result, result) {
	return func(t *testing.T, side string, r, peer result) {
		for who, out := range map[string]string{"rdmactl " + side: r.Stdout, "perftest": peer.Stdout} {
			if !strings.Contains(out, " Connection type : UD\t\tUsing SRQ      : OFF\n") {
				t.Errorf("%s's header does not name UD:\n%s", who, out)
			}
		}
		sizes := func(out string) []string {
			rows := bwRow.FindAllStringSubmatch(out, -1)
			if strings.HasSuffix(test, "_lat") {
				rows = latRow.FindAllStringSubmatch(out, -1)
			}
			var s []string
			for _, m := range rows {
				s = append(s, m[1])
			}
			return s
		}
		ours, theirs := sizes(r.Stdout), sizes(peer.Stdout)
		mtu := regexp.MustCompile(`(?m)^ Mtu             : (\d+)\[B\]$`).FindStringSubmatch(peer.Stdout)
		if len(ours) == 0 || strings.Join(ours, " ") != strings.Join(theirs, " ") || mtu == nil || atoiOr(ours[len(ours)-1]) > atoiOr(mtu[1]) {
			t.Errorf("rdmactl %s ran %q bytes, perftest %q (MTU %v):\n%s\n%s", side, ours, theirs, mtu, r.Stdout, peer.Stdout)
		}
		srv, cli := r, peer
		if side == "client" {
			srv, cli = peer, r
		}
		checkPerf(t, test, srv, cli)
	}
}

// atoiOr is s as a number, or -1.
func atoiOr(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func headerHas(s string) func(*testing.T, string, result, result) {
	return func(t *testing.T, side string, r, _ result) {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("rdmactl %s lacks %q:\n%s", side, s, r.Stdout)
		}
	}
}

// readsCutToMax: -o above the device's max_qp_rd_atom is cut to it, with
// the two lines perftest prints on stderr (the peer, perftest, gets the
// same -o and prints them too) and the max in the header.
func readsCutToMax(t *testing.T, side string, r, peer result) {
	m := regexp.MustCompile(` Number of outstanding reads is above max = (\d+)\n Changing to that max value\n`).FindStringSubmatch(peer.Stderr)
	if m == nil {
		t.Fatalf("perftest with -o 100000 printed no warning:\n%s", peer.Stderr)
	}
	if !strings.Contains(r.Stderr, m[0]) || !strings.Contains(r.Stdout, " Outstand reads  : "+m[1]+"\n") {
		t.Errorf("rdmactl %s with -o 100000: want perftest's %q on stderr and %s in the header:\n%s%s", side, m[0], m[1], r.Stdout, r.Stderr)
	}
}

// cpuUtilColumn: with -D --cpu_util both sides' tables, rdmactl's as
// perftest's, end their head with CPU_Util[%] and their row with the
// share in the form perftest prints it.
func cpuUtilColumn(t *testing.T, side string, r, peer result) {
	table := regexp.MustCompile(`(?m)^ #bytes .*(tps average|MsgRate\[Mpps\])    CPU_Util\[%\]\n [0-9].*\t    \d+\.\d\d\n`)
	for who, out := range map[string]string{"rdmactl " + side: r.Stdout, "perftest (its peer)": peer.Stdout} {
		if !table.MatchString(out) {
			t.Errorf("%s with -D --cpu_util: no table with the CPU_Util[%%] column:\n%s", who, out)
		}
	}
}

// cpuUtilNeedsDuration: without -D, --cpu_util gets perftest's warning on
// stderr, and the run goes on without the column.
func cpuUtilNeedsDuration(t *testing.T, side string, r, peer result) {
	const warning = " CPU Utilization works only with Duration mode.\n"
	if !strings.Contains(peer.Stderr, warning) {
		t.Fatalf("perftest gave no warning:\n%s", peer.Stderr)
	}
	if !strings.Contains(r.Stderr, warning) || strings.Contains(r.Stdout, "CPU_Util") {
		t.Errorf("rdmactl %s with --cpu_util but no -D:\n%s%s", side, r.Stdout, r.Stderr)
	}
}

// reversedParts: with --reversed on both sides the listening side runs
// the test's client part, whose header has the TX depth, in rdmactl as in
// perftest (the peer, in the other role).
func reversedParts(t *testing.T, side string, r, peer result) {
	listening, connecting := r, peer
	if side == "client" {
		listening, connecting = peer, r
	}
	if !strings.Contains(listening.Stdout, " TX depth ") || strings.Contains(connecting.Stdout, " TX depth ") {
		t.Errorf("--reversed, rdmactl as the %s: the TX depth is not the listening side's alone:\nlistening:\n%s\nconnecting:\n%s", side, listening.Stdout, connecting.Stdout)
	}
}

// clientPeakZero: with -N the bandwidth client prints a peak of 0.00
// (the server prints the client's row).
func clientPeakZero(t *testing.T, side string, r, _ result) {
	if m := bwRow.FindStringSubmatch(r.Stdout); m == nil || m[3] != "0.00" {
		t.Errorf("rdmactl %s with -N: row %q, want BW peak 0.00", side, m)
	}
}

var oneNumberOut = regexp.MustCompile(`^\d+\.\d{6}\n$`)

// oneNumber: --output prints the number alone on both sides.
func oneNumber(t *testing.T, side string, r, peer result) {
	if !oneNumberOut.MatchString(r.Stdout) || !oneNumberOut.MatchString(peer.Stdout) {
		t.Errorf("--output: rdmactl %s %q, perftest %q", side, r.Stdout, peer.Stdout)
	}
}

var sampleLine = regexp.MustCompile(`(?m)^\d+, \d+(\.\d+)?(e[+-]\d+)?$`)

// sameSamples: -H and -U list as many samples as perftest's, in its form.
func sameSamples(t *testing.T, side string, r, peer result) {
	ours, theirs := sampleLine.FindAllString(r.Stdout, -1), sampleLine.FindAllString(peer.Stdout, -1)
	if strings.Count(r.Stdout, "#, usec\n") != strings.Count(peer.Stdout, "#, usec\n") || len(ours) == 0 || len(ours) != len(theirs) {
		t.Errorf("rdmactl %s listed %d samples, perftest %d:\n%s\n%s", side, len(ours), len(theirs), r.Stdout, peer.Stdout)
	}
}

// TestSinglePerfOptionsInterop: each option people type daily, rdmactl
// against ib_TEST with the same option, in both roles: both exit 0 and
// print what perftest prints.
func TestSinglePerfOptionsInterop(t *testing.T) {
	for _, c := range perfOptionCases {
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(c.test+" "+c.args+"/"+roles[0]+"-server", func(t *testing.T) {
				args := append([]string{"-d", "rxe0", "-x", ownGID(t), "-n", "20"}, strings.Fields(c.args)...)
				if strings.HasPrefix(c.args, "-D") {
					args = append([]string{"-d", "rxe0", "-x", ownGID(t)}, strings.Fields(c.args)...)
				}
				pair := singlePair(t)
				if strings.Contains(" "+c.args+" ", " -R ") || strings.Contains(" "+c.args+" ", " -z ") {
					pair = cmPair(t) // the server listens on rdma_cm, not TCP
				}
				srv, cli := perfPair(t, c.test, roles[0], roles[1], pair, args...)
				if srv.Code != 0 || cli.Code != 0 {
					t.Fatalf("server exit %d\n%s%s\nclient exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
				}
				ours, peer, side := cli, srv, "client"
				if roles[0] == "rdmactl" {
					ours, peer, side = srv, cli, "server"
				}
				if c.check == nil {
					checkPerf(t, c.test, srv, cli)
					return
				}
				if c.check != nil {
					c.check(t, side, ours, peer)
				}
			})
		}
	}
}

// TestSinglePerfTOS: -R -T 96 against the real perftest in both roles:
// both run, and rdmactl's header names the TOS as perftest's does. (The
// TOS itself shows nowhere in this VM: iproute2 prints no cm_id's TOS,
// and rxe loops local traffic back without a packet.)
func TestSinglePerfTOS(t *testing.T) {
	for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
		t.Run(roles[0]+"-server", func(t *testing.T) {
			srv, cli := perfPair(t, "write_bw", roles[0], roles[1], cmPair(t), "-R", "-T", "96", "-d", "rxe0", "-x", ownGID(t), "-n", "20")
			checkPerf(t, "write_bw", srv, cli)
			for i, r := range []result{srv, cli} {
				if !strings.Contains(r.Stdout, " Data ex. method : rdma_cm \tTOS    : 96\n") {
					t.Errorf("%s-%s header lacks the TOS:\n%s", roles[i], []string{"server", "client"}[i], r.Stdout)
				}
			}
		})
	}
}

// TestSinglePerfUDBusyPoll: send_lat -c UD with rdmactl's --busy-poll
// (its loop in C, which addresses each send by the peer's address
// handle) against ib_send_lat in both roles.
func TestSinglePerfUDBusyPoll(t *testing.T) {
	pair := singlePair(t)
	busy := func(sn string, sa []string, cn string, ca []string) (result, result) {
		if sn == rdmactl {
			sa = append(sa, "--busy-poll")
		}
		if cn == rdmactl {
			ca = append(ca, "--busy-poll")
		}
		return pair(sn, sa, cn, ca)
	}
	for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
		t.Run(roles[0]+"-server", func(t *testing.T) {
			srv, cli := perfPair(t, "send_lat", roles[0], roles[1], busy, "-d", "rxe0", "-x", ownGID(t), "-n", "20", "-c", "UD", "-s", "64")
			if srv.Code != 0 || cli.Code != 0 {
				t.Fatalf("server exit %d\n%s%s\nclient exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
			}
			ours, peer, side := cli, srv, "client"
			if roles[0] == "rdmactl" {
				ours, peer, side = srv, cli, "server"
			}
			udRun("send_lat")(t, side, ours, peer)
		})
	}
}
