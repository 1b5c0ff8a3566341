//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSinglePerfBandwidthSleepsOnOneCPU: a bandwidth loop whose peer polls
// sleeps on one CPU on its completion channel while it waits, as perftest
// -e does, and leaves the CPU to the peer and to rxe's kernel work;
// --busy-poll spins as perftest. rdmactl's send_bw server (its receive
// loop, which waits for every message; with -D a loop of its own) runs
// pinned to one CPU against perftest's client, and strace counts its read
// calls (a sleep takes its event with one).
func TestSinglePerfBandwidthSleepsOnOneCPU(t *testing.T) {
	for _, run := range [][]string{{"-n", "300"}, {"-D", "2"}} {
		t.Run(strings.Join(run, " "), func(t *testing.T) {
			reads := map[bool]int{}
			for _, busy := range []bool{false, true} {
				summary := filepath.Join(t.TempDir(), "strace")
				pinnedServer := func(sn string, sa []string, cn string, ca []string) (result, result) {
					sn, sa = pinnedUnderStrace(summary, "read", busy, sn, sa)
					return singlePair(t)(sn, sa, cn, ca)
				}
				srv, cli := perfPair(t, "send_bw", "rdmactl", "perftest", pinnedServer, append([]string{"-d", "rxe0", "-x", ownGID(t)}, run...)...)
				checkPerf(t, "send_bw", srv, cli)
				reads[busy] = straceCalls(t, summary, "read")
			}
			t.Logf("rdmactl's server on one CPU: %d read calls, %d with --busy-poll", reads[false], reads[true])
			// both runs read the same sysfs files and exchange the same
			// records; the sleeping one also takes its completion events
			if reads[false] < reads[true]+20 {
				t.Errorf("rdmactl's server on one CPU made %d read calls against %d with --busy-poll: it did not sleep on completion events", reads[false], reads[true])
			}
		})
	}
}

// TestSinglePerfOneWayClientSpinsOnOneCPU: a write, read or atomic
// stream's peer is passive and rxe does the work inside the stream's own
// posts, so rdmactl's client spins on one CPU as perftest's does (a
// sleeping one found its completions made whenever it looked, yet ran
// slower, under the 10 ms signals of the timer that bounds a sleep).
// Pinned to one CPU against perftest's server, under strace, it creates
// that timer no more often than with --busy-poll (never) and reads no
// more completion events.
func TestSinglePerfOneWayClientSpinsOnOneCPU(t *testing.T) {
	for _, test := range []string{"write_bw", "read_bw", "atomic_bw"} {
		t.Run(test, func(t *testing.T) {
			calls := map[bool]map[string]int{}
			for _, busy := range []bool{false, true} {
				summary := filepath.Join(t.TempDir(), "strace")
				pinnedClient := func(sn string, sa []string, cn string, ca []string) (result, result) {
					cn, ca = pinnedUnderStrace(summary, "read,timer_create", busy, cn, ca)
					return singlePair(t)(sn, sa, cn, ca)
				}
				srv, cli := perfPair(t, test, "perftest", "rdmactl", pinnedClient, "-d", "rxe0", "-x", ownGID(t), "-n", "300")
				checkPerf(t, test, srv, cli)
				calls[busy] = map[string]int{"read": straceCalls(t, summary, "read"), "timer_create": straceCalls(t, summary, "timer_create")}
			}
			t.Logf("rdmactl's %s client on one CPU: %v; with --busy-poll: %v", test, calls[false], calls[true])
			// both runs read the same sysfs files and exchange the same
			// records
			if calls[false]["timer_create"] > calls[true]["timer_create"] || calls[false]["read"] > calls[true]["read"]+20 {
				t.Errorf("rdmactl's %s client on one CPU made %v calls against %v with --busy-poll: it slept between completions", test, calls[false], calls[true])
			}
		})
	}
}

// TestSinglePerfDuplexOnOneCPU: send_bw -b with both sides on one CPU,
// counted and timed: the receiving beside each side's stream sleeps as
// its stream does (a timed stream spins, a counted one sleeps), and both
// print their tables.
func TestSinglePerfDuplexOnOneCPU(t *testing.T) {
	for _, run := range [][]string{{"-n", "300"}, {"-D", "2"}} {
		t.Run(strings.Join(run, " "), func(t *testing.T) {
			pinned := func(sn string, sa []string, cn string, ca []string) (result, result) {
				return singlePair(t)("taskset", append([]string{"-c", "0", sn}, sa...), "taskset", append([]string{"-c", "0", cn}, ca...))
			}
			srv, cli := perfPair(t, "send_bw", "rdmactl", "rdmactl", pinned, append([]string{"-d", "rxe0", "-x", ownGID(t), "-b"}, run...)...)
			checkPerf(t, "send_bw", srv, cli)
		})
	}
}

// TestSinglePerfSendServerRowsSpanTheRun: send_bw's server times each
// size from the poll that took the first message to the end of its loop,
// as perftest's server does, so a size whose messages all came in one poll
// still spans some time. On one CPU the sleeping server finds all of a
// size's 5 messages in the CQ at once, often; it printed 5000 Mpps then.
func TestSinglePerfSendServerRowsSpanTheRun(t *testing.T) {
	pinned := func(sn string, sa []string, cn string, ca []string) (result, result) {
		return singlePair(t)("taskset", append([]string{"-c", "0", sn}, sa...), "taskset", append([]string{"-c", "0", cn}, ca...))
	}
	srv, cli := perfPair(t, "send_bw", "rdmactl", "rdmactl", pinned, "-d", "rxe0", "-x", ownGID(t), "-a", "-n", "5")
	checkPerf(t, "send_bw", srv, cli)
	rows := bwRow.FindAllStringSubmatch(srv.Stdout, -1)
	if len(rows) != 23 {
		t.Fatalf("the server printed %d rows, want 23:\n%s", len(rows), srv.Stdout)
	}
	for _, m := range rows {
		// 5 messages in 0.1 µs make 50 Mpps; a size timed as lasting
		// no time at all made 5000
		if rate, _ := strconv.ParseFloat(m[5], 64); rate >= 50 {
			t.Errorf("the server's row %q: %s Mpps, no run makes that\n%s", strings.TrimSpace(m[0]), m[5], srv.Stdout)
		}
	}
}

// pinnedUnderStrace is name args pinned to CPU 0 under strace, which
// counts the calls in trace into summary; busy adds --busy-poll (for
// rdmactl's side). --seccomp-bpf stops at those calls only: tracing every
// call would slow the loop down under TCG.
func pinnedUnderStrace(summary, trace string, busy bool, name string, args []string) (string, []string) {
	if busy {
		args = append(append([]string{}, args...), "--busy-poll")
	}
	return "strace", append([]string{"--seccomp-bpf", "-f", "-qq", "-c", "-e", "trace=" + trace, "-o", summary, "taskset", "-c", "0", name}, args...)
}

// straceCalls reads the calls of syscall from strace -c's summary at path
// (0 when the summary has no line for it).
func straceCalls(t *testing.T, path, syscall string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("strace summary: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 5 && f[len(f)-1] == syscall {
			n, err := strconv.Atoi(f[3])
			if err != nil {
				t.Fatalf("strace summary line %q: %v", l, err)
			}
			return n
		}
	}
	return 0
}
