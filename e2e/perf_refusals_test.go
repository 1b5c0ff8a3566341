//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSinglePerfRefusesLikePerftest: values ib_write_bw's parser refuses
// are refused by rdmactl with ib_write_bw's line and exit code, before
// anything is allocated or exchanged (-n 1000000000 ran out of memory
// after the exchange; -s 0 ran 65536 bytes; -D 9223372037 ran 5000
// iterations).
func TestSinglePerfRefusesLikePerftest(t *testing.T) {
	for _, c := range []struct{ test, args string }{
		{"write_bw", "-n 1000000000"},
		{"write_bw", "-n 100000001"},
		{"write_bw", "-n 4"},
		{"write_bw", "-s 0"},
		{"send_bw", "-s 0"},
		{"write_bw", "-D 0"},
		{"write_bw", "-D -3"},
		{"write_bw", "-t 20000"},
		{"send_bw", "-r 20000"},
		{"read_bw", "-r 2"},
		{"write_lat", "-q 2"},
		{"write_bw", "-q 20000"},
		{"write_bw", "-D 5 -a"},
		{"write_lat", "-b"},
		{"write_lat", "-N"},
		{"write_bw", "-H"},
		{"write_bw", "-U"},
		{"write_bw", "-C"},
		{"write_bw", "-e"},
		{"send_bw", "-e -D 4"},
		{"send_lat", "-e -D 4"},
		{"read_bw", "-e --run_infinitely"},
		{"send_bw", "-b --run_infinitely"},
		{"send_bw", "-b --rate_limit 1 --rate_limit_type SW --burst_size 4"},
		{"write_bw", "-Q 2000"},
		{"write_bw", "-S 16"},
		{"write_bw", "-c XX"},
		{"write_bw", "-c UD"},
		{"read_bw", "-c UC"},
		{"read_lat", "-c UC"},
		{"atomic_bw", "-c UC"},
		{"write_bw", "-c UC -R"},
		{"write_lat", "-c UD"},
		{"read_bw", "-c UD"},
		{"write_bw", "--output=foo"},
		{"write_bw", "--output=latency"},
		{"write_lat", "--output=bandwidth"},
		{"write_bw", "-T 5"},
		{"write_bw", "--report"},
		{"write_bw", "--bogus"},
		{"write_bw", "-D 4 -f 2"},
		{"write_bw", "-n 102 -l 4"},
		{"write_bw", "-n 100 -l 4 -Q 3"},
		{"write_lat", "-l 4"},
		{"write_bw", "-I 913"},
		{"read_bw", "-I 0"},
		{"write_bw", "-R -T 256"},
		{"write_bw", "-L 5"},
		{"write_bw", "-L 300"},
		{"write_bw", "-o 4"},
		{"send_lat", "-o 4"},
		{"write_bw", "-z -T 5"},
		{"write_bw", "-w -1"},
		{"send_bw", "-y -2"},
		{"send_lat", "--recv_post_list 2"},
		{"send_bw", "-n 1001 --recv_post_list 2"},
		{"write_bw", "--rate_limit 0"},
		{"write_bw", "--rate_limit abc"},
		{"write_bw", "--rate_limit 1 --rate_units k"},
		{"write_bw", "--rate_limit 1 --rate_limit_type sw"},
		{"write_bw", "--burst_size 8"},
		{"write_bw", "--burst_size -1"},
		{"write_bw", "--rate_limit 1 --rate_limit_type PP"},
		{"write_bw", "--typical_pkt_size 100"},
		{"send_lat", "--rate_limit 1 --rate_limit_type SW --burst_size 4"},
		{"atomic_bw", "--rate_limit 1 --rate_limit_type SW --burst_size 4"},
		{"write_bw", "--rate_limit 3"},
		{"write_bw", "--rate_limit 1000 --rate_units p"},
		{"write_bw", "-R --rate_limit 10"},
		{"write_bw", "--run_infinitely --rate_limit 10"},
		{"write_bw", "--aes_xts"},
		{"write_bw", "--aes_xts -c UC"},
		{"write_bw", "--aes_xts --kek_path /tmp/k"},
		{"write_lat", "-O"},
		{"atomic_bw", "--odp"},
		{"write_bw", "--odp -c UC"},
		{"write_bw", "-c SRD"},
		{"write_bw", "--use-srq"},
		{"send_bw", "--use-srq -q 4 -r 2"},
		// -A off the atomic tests, whatever its value
		{"write_bw", "-A FETCH_AND_ADD"},
		{"write_lat", "-A CMP_AND_SWAP"},
		{"read_bw", "-A CMP_AND_SWAP"},
		{"send_lat", "-A FETCH_AND_ADD"},
		{"write_bw", "-A BOGUS"},
		{"atomic_bw", "-A BOGUS"},
		// -r above 1 off the send tests (4.5-0.17: the write tests too)
		{"write_bw", "-r 2"},
		{"write_lat", "-r 2"},
		{"atomic_lat", "-r 2"},
		// the atomic tests' fixed size, after the parser's ranges
		{"atomic_bw", "-s 16"},
		{"atomic_lat", "-s 16"},
		{"atomic_bw", "-s 4"},
		{"atomic_bw", "-a"},
		{"atomic_bw", "-s 3000000000"},
		{"atomic_bw", "-s 16 -n 4"},
		// -H's long name is "report-histogrm" (sic) in perftest's table:
		// its prefixes are -H (refused off the latency tests), the
		// spelling perftest's help prints is unknown to it
		{"write_bw", "--report-histogrm"},
		{"write_bw", "--report-h"},
		{"send_lat", "--report-histogram"},
		{"send_lat", "--report-histogra"},
		// an option without an argument given one
		{"send_lat", "--report-histogrm=1"},
		{"write_bw", "--report_gbits=yes"},
		{"write_bw", "--bidirectional=1"},
		{"write_bw", "--bidirectional=true"},
		{"send_lat", "--report-histogrm=true"},
		// the SW rate limiter off the bandwidth tests (with a burst size:
		// without one perftest first warns that it sets it to -t's)
		{"write_lat", "--rate_limit 1 --rate_limit_type SW --burst_size 4"},
		{"read_lat", "--rate_limit 1 --rate_limit_type SW --burst_size 4"},
		{"atomic_lat", "--rate_limit 1 --rate_limit_type SW --burst_size 4"},
		// the encryption options, which this perftest refuses on every test
		// (built without HAVE_AES_XTS, or the keys' paths without --aes_xts)
		{"send_bw", "--aes_xts"},
		{"read_bw", "--aes_xts"},
		{"atomic_bw", "--aes_xts"},
		{"send_lat", "--aes_xts"},
		{"read_lat", "--aes_xts"},
		{"atomic_lat", "--aes_xts"},
		{"send_bw", "--kek_path /tmp/k"},
		{"read_bw", "--kek_path /tmp/k"},
		{"atomic_bw", "--kek_path /tmp/k"},
		{"send_lat", "--kek_path /tmp/k"},
		{"write_lat", "--kek_path /tmp/k"},
		{"read_lat", "--kek_path /tmp/k"},
		{"atomic_lat", "--kek_path /tmp/k"},
		{"write_bw", "--data_enc_key_app_path /tmp/k"},
		{"send_bw", "--data_enc_key_app_path /tmp/k"},
		{"read_bw", "--data_enc_key_app_path /tmp/k"},
		{"atomic_bw", "--data_enc_key_app_path /tmp/k"},
		{"send_lat", "--data_enc_key_app_path /tmp/k"},
		{"write_lat", "--data_enc_key_app_path /tmp/k"},
		{"read_lat", "--data_enc_key_app_path /tmp/k"},
		{"atomic_lat", "--data_enc_key_app_path /tmp/k"},
		{"write_bw", "--credentials_path /tmp/k"},
		{"send_bw", "--credentials_path /tmp/k"},
		{"read_bw", "--credentials_path /tmp/k"},
		{"atomic_bw", "--credentials_path /tmp/k"},
		{"send_lat", "--credentials_path /tmp/k"},
		{"write_lat", "--credentials_path /tmp/k"},
		{"read_lat", "--credentials_path /tmp/k"},
		{"atomic_lat", "--credentials_path /tmp/k"},
	} {
		args := append([]string{"-d", "rxe0", "-x", ownGID(t)}, strings.Fields(c.args)...)
		real := run(t, time.Minute, "ib_"+c.test, args...)
		ours := run(t, time.Minute, rdmactl, append([]string{"perf", c.test}, args...)...)
		// perftest's line: its first on stderr, past getopt's "ib_x: "
		// prefix (on stdout for -T, which prints usage lines for an
		// unknown option, and for -c UC -R, past a line of dashes).
		line := strings.TrimSpace(strings.SplitN(real.Stderr, "\n", 2)[0])
		for _, l := range strings.Split(real.Stdout, "\n") {
			if line != "" {
				break
			}
			if l = strings.TrimSpace(l); strings.Trim(l, "-") != "" {
				line = l
			}
		}
		line = strings.TrimPrefix(line, "ib_"+c.test+": ")
		// getopt lists the candidates in its table's order, rdmactl
		// sorted: compare up to the list.
		line, _, _ = strings.Cut(line, "; possibilities")
		if real.Code != 1 || line == "" {
			t.Errorf("ib_%s %s: exit %d, %q: not a refusal", c.test, c.args, real.Code, real.Stderr)
			continue
		}
		if ours.Code != real.Code || !strings.Contains(ours.Stderr, line) || strings.Count(ours.Stderr, "\n") != 1 || ours.Stdout != "" {
			t.Errorf("perf %s %s: exit %d, stderr %q, stdout %q; ib_%s: exit %d, %q", c.test, c.args, ours.Code, ours.Stderr, ours.Stdout, c.test, real.Code, line)
		}
	}
	// Beyond perftest's C int, which it truncates.
	r := run(t, time.Minute, rdmactl, "perf", "write_bw", "-d", "rxe0", "-D", "9223372037")
	if r.Code != 1 || !strings.Contains(r.Stderr, "-D 9223372037: Duration period should be at most 2147483647 seconds") {
		t.Errorf("-D 9223372037: exit %d, %q", r.Code, r.Stderr)
	}
}

// TestSinglePerfVersionLikePerftest: -V and --version print perftest's
// version line, on every test, with the tool's exit code, whatever else
// is on the line.
func TestSinglePerfVersionLikePerftest(t *testing.T) {
	for _, test := range []string{"write_bw", "send_bw", "read_bw", "atomic_bw", "send_lat", "write_lat", "read_lat", "atomic_lat"} {
		for _, args := range [][]string{{"-V"}, {"--version"}, {"-d", "rxe0", "-s", "64", "-V"}} {
			real := run(t, time.Minute, "ib_"+test, args...)
			ours := run(t, time.Minute, rdmactl, append([]string{"perf", test}, args...)...)
			if !strings.HasPrefix(real.Stdout, "Version: ") {
				t.Errorf("ib_%s %v: exit %d, stdout %q: no version line", test, args, real.Code, real.Stdout)
				continue
			}
			if ours.Code != real.Code || ours.Stdout != real.Stdout || ours.Stderr != real.Stderr {
				t.Errorf("perf %s %v: exit %d, stdout %q, stderr %q; ib_%s: exit %d, %q, %q",
					test, args, ours.Code, ours.Stdout, ours.Stderr, test, real.Code, real.Stdout, real.Stderr)
			}
		}
	}
}

// TestSinglePerfMismatchSaysWhatDiffers: against a perftest peer that
// runs another test or another -q, rdmactl's hint names what differs
// and nothing it did not see (write_bw against ib_read_bw said "run both
// sides with the same -s/-a" though both ran 65536 bytes; -q 2 against
// -q 1 said both sides must run the same test).
func TestSinglePerfMismatchSaysWhatDiffers(t *testing.T) {
	pair := func(srvName string, srvArgs []string, cliName string, cliArgs []string) (result, result) {
		perfPort++
		port := []string{"-p", fmt.Sprint(perfPort), "-d", "rxe0", "-x", ownGID(t), "-n", "50"}
		s := start(t, 20*time.Second, srvName, append(srvArgs, port...)...)
		waitTCPListen(t, perfPort)
		cliArgs = append(cliArgs, port...)
		if cliName == rdmactl {
			cliArgs = append(cliArgs, "--timeout", "10s")
		}
		c := run(t, time.Minute, cliName, append(cliArgs, "10.9.0.1")...)
		return s.wait(t), c
	}
	_, c := pair("ib_read_bw", nil, rdmactl, []string{"perf", "write_bw"})
	if c.Code != 1 || !strings.Contains(c.Stderr, "hint: the peer's QP does not take RDMA_WRITE requests: run write_bw on the peer too") ||
		strings.Contains(c.Stderr, "-s/-a") {
		t.Errorf("write_bw against ib_read_bw: exit %d, %q", c.Code, c.Stderr)
	}
	_, c = pair("ib_write_bw", []string{"-q", "1"}, rdmactl, []string{"perf", "write_bw", "-q", "2"})
	if c.Code != 1 || !strings.Contains(c.Stderr, "the peer runs fewer QPs") || !strings.Contains(c.Stderr, "hint: give both sides the same -q") {
		t.Errorf("-q 2 against ib_write_bw -q 1: exit %d, %q", c.Code, c.Stderr)
	}
	s, c := pair(rdmactl, []string{"perf", "write_bw", "-q", "1", "--timeout", "10s"}, "ib_write_bw", []string{"-q", "2"})
	if s.Code != 1 || !strings.Contains(s.Stderr, "the peer runs more QPs") || !strings.Contains(s.Stderr, "hint: give both sides the same -q") {
		t.Errorf("-q 1 against ib_write_bw -q 2: exit %d, %q (client exit %d)", s.Code, s.Stderr, c.Code)
	}
}

// TestSinglePerfUDSizeAboveMTU: send_lat -c UD -s above the path MTU
// is refused once the peers agreed on the MTU, as perftest refuses it:
// both sides exit 1, rdmactl with perftest's line.
func TestSinglePerfUDSizeAboveMTU(t *testing.T) {
	const line = "Max message size in UD cannot be greater than MTU"
	for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
		srv, cli := perfPair(t, "send_lat", roles[0], roles[1], singlePair(t), "-d", "rxe0", "-x", ownGID(t), "-n", "20", "-c", "UD", "-s", "8192")
		for i, r := range []result{srv, cli} {
			if r.Code != 1 || !strings.Contains(r.Stderr, line) {
				t.Errorf("%s as the %s: exit %d, want 1 and %q:\n%s%s", roles[i], []string{"server", "client"}[i], r.Code, line, r.Stdout, r.Stderr)
			}
		}
	}
}

// TestSinglePerfSWLimiterRefusalNotice: the SW limiter on a test that
// refuses it, with no --burst_size: perftest's parser first says on
// stderr that the burst is the TX depth, then refuses; rdmactl's stderr
// has the same first line, then the refusal, and both exit 1.
func TestSinglePerfSWLimiterRefusalNotice(t *testing.T) {
	for _, c := range []struct{ test, args string }{
		{"send_lat", "--rate_limit 1 --rate_limit_type SW"},
		{"write_lat", "--rate_limit 1 --rate_limit_type SW"},
		{"atomic_bw", "--rate_limit 1 --rate_limit_type SW"},
		{"send_bw", "-b --rate_limit 1 --rate_limit_type SW"},
	} {
		args := append([]string{"-d", "rxe0", "-x", ownGID(t)}, strings.Fields(c.args)...)
		real := run(t, time.Minute, "ib_"+c.test, args...)
		ours := run(t, time.Minute, rdmactl, append([]string{"perf", c.test}, args...)...)
		realLines := strings.SplitN(real.Stderr, "\n", 3)
		ourLines := strings.SplitN(ours.Stderr, "\n", 3)
		if real.Code != 1 || len(realLines) < 3 || !strings.HasPrefix(realLines[0], " Setting burst size to tx depth = ") {
			t.Errorf("ib_%s %s: exit %d, stderr %q: not the notice and a refusal", c.test, c.args, real.Code, real.Stderr)
			continue
		}
		if ours.Code != 1 || len(ourLines) < 3 || ourLines[0] != realLines[0] || !strings.Contains(ourLines[1], strings.TrimSpace(realLines[1])) {
			t.Errorf("perf %s %s: exit %d, stderr %q; ib_%s: %q", c.test, c.args, ours.Code, ours.Stderr, c.test, real.Stderr)
		}
	}
}
