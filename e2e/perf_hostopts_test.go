//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSinglePerfHostOptionFailures: options this VM's device or host
// cannot serve fail as perftest's do on it (rxe has one port and no
// on-demand paging; the VM reserves no huge pages; perftest's peers
// always exchange versions): each side exits 1, and rdmactl's message
// holds perftest's first line on that side.
func TestSinglePerfHostOptionFailures(t *testing.T) {
	setHugePages(t, 0)
	for _, c := range []struct{ test, args string }{
		{"write_bw", "-O"},
		{"write_bw", "--odp"},
		{"send_lat", "--odp"},
		{"write_bw", "--use_hugepages"},
		{"write_bw", "--dont_xchg_versions"},
		{"send_bw", "-O"},
		{"read_bw", "-O"},
		{"atomic_bw", "-O"},
		{"send_bw", "--odp"},
		{"read_bw", "--odp"},
		{"write_lat", "--odp"},
		{"read_lat", "--odp"},
	} {
		args := append([]string{"-d", "rxe0", "-x", ownGID(t), "-n", "20"}, strings.Fields(c.args)...)
		realSrv, realCli := pairToTheEnd(t, "perftest", c.test, args)
		srv, cli := pairToTheEnd(t, "rdmactl", c.test, args)
		for _, side := range []struct {
			name       string
			ours, real result
		}{{"server", srv, realSrv}, {"client", cli, realCli}} {
			// past the stray line perftest prints for read tests on rxe
			stderr := strings.TrimPrefix(side.real.Stderr, "Device not recognized to implement inline feature. Disabling it\n")
			line := strings.TrimSpace(strings.SplitN(stderr, "\n", 2)[0])
			if side.real.Code != 1 || line == "" {
				t.Errorf("ib_%s %s, the %s: exit %d, %q: not a failure", c.test, c.args, side.name, side.real.Code, side.real.Stderr)
				continue
			}
			if side.ours.Code != 1 || !strings.Contains(side.ours.Stderr, line) {
				t.Errorf("perf %s %s, the %s: exit %d, %q; perftest's: %q", c.test, c.args, side.name, side.ours.Code, side.ours.Stderr, line)
			}
		}
	}
}

// pairToTheEnd runs tool's server and then its client with args, the
// client once the server listens or has ended, and returns both.
func pairToTheEnd(t *testing.T, tool, test string, args []string) (srv, cli result) {
	t.Helper()
	perfPort++
	port := perfPort
	common := append([]string{"-p", fmt.Sprint(port)}, args...)
	sn, sa := perfSide(tool, test, common)
	cn, ca := perfSide(tool, test, append(common, "10.9.0.1"))
	done := make(chan result, 1)
	go func() { done <- run(t, time.Minute, sn, sa...) }()
	ended := false
	pollUntil(t, 30*time.Second, 50*time.Millisecond, fmt.Sprintf("%s's server neither listens on %d nor ends", tool, port), func() bool {
		select {
		case srv = <-done:
			ended = true
			return true
		default:
			return tcpListening(port)
		}
	})
	cli = run(t, time.Minute, cn, ca...)
	if !ended {
		srv = <-done
	}
	return srv, cli
}

// setHugePages reserves n huge pages for the test and gives back the
// reservation it found afterwards.
func setHugePages(t *testing.T, n int) {
	t.Helper()
	const knob = "/proc/sys/vm/nr_hugepages"
	old, err := os.ReadFile(knob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(knob, old, 0o644) })
	// After a long run of tests the guest's free memory is in pieces
	// too small for a 2 MB page: the page cache is dropped and memory
	// compacted before each try, as one reserves huge pages on a running
	// host.
	var got []byte
	for try := 0; try < hugePageTries; try++ {
		if try > 0 {
			time.Sleep(500 * time.Millisecond)
		}
		for _, w := range [][2]string{{"/proc/sys/vm/drop_caches", "3"}, {"/proc/sys/vm/compact_memory", "1"}, {knob, fmt.Sprint(n)}} {
			if err := os.WriteFile(w[0], []byte(w[1]), 0o200); err != nil {
				t.Fatal(err)
			}
		}
		got, _ = os.ReadFile(knob)
		if v, _ := strconv.Atoi(strings.TrimSpace(string(got))); v == n {
			return
		}
	}
	t.Fatalf("%s reads %s after writing %d %d times", knob, got, n, hugePageTries)
}

// hugePageTries bounds setHugePages: right after other tests a
// reservation can come short and succeed seconds later.
const hugePageTries = 10

// TestSinglePerfHostMemory: --use_hugepages (with huge pages reserved)
// and --mmap run against perftest in both roles. With --mmap each side
// prints perftest's "allocated mmap buffer" line with perftest's size in
// that role, and the client's message lands in the server's file.
func TestSinglePerfHostMemory(t *testing.T) {
	setHugePages(t, 16)
	args := []string{"-d", "rxe0", "-x", ownGID(t), "-n", "20"}
	for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
		srv, cli := perfPair(t, "write_bw", roles[0], roles[1], singlePair(t), append(args, "--use_hugepages")...)
		checkPerf(t, "write_bw --use_hugepages", srv, cli)
	}

	dir := t.TempDir()
	mapped := regexp.MustCompile(`(?m)^allocated mmap buffer of size (\d+) at 0x[0-9a-f]+$`)
	sizes := map[string]string{}
	for _, roles := range [][2]string{{"perftest", "perftest"}, {"perftest", "rdmactl"}, {"rdmactl", "perftest"}, {"rdmactl", "rdmactl"}} {
		srv, cli, srvFile := mmapPair(t, dir, roles, args)
		checkPerf(t, "write_bw --mmap", srv, cli)
		for side, r := range map[string]result{"server " + roles[0]: srv, "client " + roles[1]: cli} {
			m := mapped.FindStringSubmatch(r.Stdout)
			if m == nil {
				t.Errorf("%s: no mmap line:\n%s", side, r.Stdout)
				continue
			}
			role, _, _ := strings.Cut(side, " ")
			if want, ok := sizes[role]; roles[0] == "perftest" && roles[1] == "perftest" {
				sizes[role] = m[1]
			} else if ok && m[1] != want {
				t.Errorf("%s: a buffer of %s bytes, perftest's %s", side, m[1], want)
			}
		}
		b, err := os.ReadFile(srvFile)
		if err != nil {
			t.Fatal(err)
		}
		// perftest's client fills its buffer with random bytes; rdmactl's
		// sends the file as it is
		landed := len(b) - bytes.Count(b, []byte{0})
		if roles[1] == "rdmactl" {
			landed = bytes.Count(b, []byte{0xab})
		}
		if landed < 60000 {
			t.Errorf("%s server, %s client: %d bytes of the client's buffer in the server's file, want about a message's 65536", roles[0], roles[1], landed)
		}
	}
}

// mmapPair runs write_bw between roles with each side's buffer mapped
// from a 4 MiB file of dir (--mmap, and mapping): the server's zeroed,
// the client's of 0xab bytes. It returns the server's file.
func mmapPair(t *testing.T, dir string, roles [2]string, args []string, mapping ...string) (srv, cli result, srvFile string) {
	srvFile, cliFile := filepath.Join(dir, "server.bin"), filepath.Join(dir, "client.bin")
	if err := os.WriteFile(srvFile, make([]byte, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cliFile, bytes.Repeat([]byte{0xab}, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, cli = perfPair(t, "write_bw", roles[0], roles[1], func(sn string, sa []string, cn string, ca []string) (result, result) {
		return singlePair(t)(sn, append(append(sa, "--mmap="+srvFile), mapping...), cn, append(append(ca, "--mmap="+cliFile), mapping...))
	}, args...)
	return srv, cli, srvFile
}

// TestSinglePerfMmapOffset: write_bw with --mmap and --mmap-offset 4096,
// perftest against itself and against rdmactl in both roles: the buffer
// begins 4096 bytes into each file, so the client's message lands in the
// server's file after that offset and none before it.
func TestSinglePerfMmapOffset(t *testing.T) {
	args := []string{"-d", "rxe0", "-x", ownGID(t), "-n", "20"}
	dir := t.TempDir()
	for _, roles := range [][2]string{{"perftest", "perftest"}, {"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
		srv, cli, srvFile := mmapPair(t, dir, roles, args, "--mmap-offset", "4096")
		checkPerf(t, "write_bw --mmap --mmap-offset 4096", srv, cli)
		b, err := os.ReadFile(srvFile)
		if err != nil {
			t.Fatal(err)
		}
		before, after := len(b[:4096])-bytes.Count(b[:4096], []byte{0}), len(b[4096:])-bytes.Count(b[4096:], []byte{0})
		if before != 0 || after < 60000 {
			t.Errorf("%s server, %s client: %d bytes written before the offset, %d after; want none and about a message's 65536", roles[0], roles[1], before, after)
		}
	}
}

// TestSinglePerfHostMemoryEveryTest: --use_hugepages and --mmap (with
// --mmap-offset) on the tests beside write_bw, against perftest in both
// roles: both run, and with --mmap each side prints perftest's
// "allocated mmap buffer" line.
func TestSinglePerfHostMemoryEveryTest(t *testing.T) {
	setHugePages(t, 16)
	dir := t.TempDir()
	mapped := regexp.MustCompile(`(?m)^allocated mmap buffer of size \d+ at 0x[0-9a-f]+$`)
	for _, test := range []string{"send_bw", "read_bw", "atomic_bw", "send_lat", "write_lat", "read_lat", "atomic_lat"} {
		args := []string{"-d", "rxe0", "-x", ownGID(t), "-n", "20"}
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(test+"/"+roles[0]+"-server", func(t *testing.T) {
				srv, cli := perfPair(t, test, roles[0], roles[1], singlePair(t), append(args, "--use_hugepages")...)
				checkPerf(t, test, srv, cli)

				srvFile, cliFile := filepath.Join(dir, "server.bin"), filepath.Join(dir, "client.bin")
				for _, f := range []string{srvFile, cliFile} {
					if err := os.WriteFile(f, make([]byte, 4<<20), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				srv, cli = perfPair(t, test, roles[0], roles[1], func(sn string, sa []string, cn string, ca []string) (result, result) {
					return singlePair(t)(sn, append(sa, "--mmap="+srvFile, "--mmap-offset", "4096"), cn, append(ca, "--mmap="+cliFile, "--mmap-offset", "4096"))
				}, args...)
				checkPerf(t, test, srv, cli)
				for side, r := range map[string]result{"server " + roles[0]: srv, "client " + roles[1]: cli} {
					if !mapped.MatchString(r.Stdout) {
						t.Errorf("%s --mmap: no mmap line:\n%s", side, r.Stdout)
					}
				}
			})
		}
	}
}
