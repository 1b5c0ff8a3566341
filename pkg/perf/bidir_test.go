package perf

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestBidirectionalAsPerftest: with -b both sides of write_bw, read_bw
// and atomic_bw stream, name it in the title, show their TX depth, and
// print the sum of both results (the fabric takes 1 ms a message: 2 ×
// 0.0625 MB/sec at 64 KiB, 2 × 8000 bytes/sec for atomics);
// --report-both adds each side's own row after, under perftest's titles
// (ib_atomic_bw's end without a space).
func TestBidirectionalAsPerftest(t *testing.T) {
	for _, c := range []struct {
		test       Test
		verb, size string
		sum, each  string
		local      string
	}{
		{WriteBW, "RDMA_Write", "65536", "125.00", "62.50", "\n Local results: \n"},
		{ReadBW, "RDMA_Read", "65536", "125.00", "62.50", "\n Local results: \n"},
		{AtomicBW, "Atomic FETCH_AND_ADD", "8", "0.02", "0.01", "\n Local results:\n"},
	} {
		v := newFabric()
		srv, cli, serr, cerr := runPair(t, v, Options{Test: c.test, GIDIndex: 1, IBPort: 1, Iters: 50, Bidirectional: true, ReportBoth: true})
		if serr != nil || cerr != nil {
			t.Fatalf("%s -b: server %v, client %v", c.test, serr, cerr)
		}
		if n := v.Posts(opcodeOf(c.test, FetchAndAdd)); n != 2*50 {
			t.Errorf("%s -b: %d requests posted, want 50 by each side", c.test, n)
		}
		title := "                    " + c.verb + " Bidirectional BW Test\n"
		row := regexp.MustCompile(`(?m)^ ` + c.size + ` +50 +[0-9.]+ +([0-9.]+) `)
		for side, out := range map[string]string{"server": srv, "client": cli} {
			rows := row.FindAllStringSubmatch(out, -1)
			if !strings.Contains(out, title) || !strings.Contains(out, " TX depth        : 50\n") || len(rows) != 3 {
				t.Fatalf("%s -b %s:\n%s", c.test, side, out)
			}
			if rows[0][1] != c.sum || rows[1][1] != c.each || rows[2][1] != c.each {
				t.Errorf("%s -b %s: sum, local, remote %s %s %s, want %s %s %s", c.test, side, rows[0][1], rows[1][1], rows[2][1], c.sum, c.each, c.each)
			}
			remote := strings.Replace(c.local, "Local", "Remote", 1)
			if !strings.Contains(out, c.local) || !strings.Contains(out, remote) || !strings.HasSuffix(out, resultLine) {
				t.Errorf("%s --report-both %s:\n%s", c.test, side, out)
			}
		}
	}
	if _, err := (Options{Test: WriteLat, Bidirectional: true}).Resolve(); err == nil || err.Error() != "-b : Bidirectional is only available in BW test" {
		t.Errorf("write_lat -b: %v", err)
	}
}

// TestSendBidirectional: send_bw -b posts receives and sends on both
// sides, and each side's header shows both depths; both print the same
// sum, and with --report-both this side's own row is the peer's "Remote"
// one.
func TestSendBidirectional(t *testing.T) {
	v := newFabric()
	srv, cli, serr, cerr := runPair(t, v, Options{Test: SendBW, GIDIndex: 1, IBPort: 1, Iters: 50, QPs: 2, Bidirectional: true, ReportBoth: true})
	if serr != nil || cerr != nil {
		t.Fatalf("send_bw -b: server %v, client %v", serr, cerr)
	}
	if n := v.Posts(rdma.WRSend); n != 2*2*50 {
		t.Errorf("send_bw -b -q 2: %d sends, want 100 by each side", n)
	}
	row := regexp.MustCompile(`(?m)^ 65536 +100 +.*$`)
	var rows [2][]string
	for i, out := range []string{srv, cli} {
		rows[i] = row.FindAllString(out, -1)
		if !strings.Contains(out, "                    Send Bidirectional BW Test\n") || !strings.Contains(out, " TX depth        : 50\n") ||
			!strings.Contains(out, " RX depth        : 50\n") || len(rows[i]) != 3 || !strings.Contains(out, "\n Local results: \n") {
			t.Fatalf("send_bw -b side %d:\n%s", i, out)
		}
	}
	if rows[0][0] != rows[1][0] || rows[0][1] != rows[1][2] || rows[0][2] != rows[1][1] {
		t.Errorf("server rows %q, client rows %q: want the same sum, each side's own the other's remote", rows[0], rows[1])
	}
}

// TestSendBidirectionalTimed: send_bw -b -D runs as perftest's
// run_iter_bi with a duration: both sides send and receive for the time,
// trade no results, and each prints one row of its own that counts what
// it sent and received (at 1 ms a message on the fabric, more than each
// side's sends alone).
func TestSendBidirectionalTimed(t *testing.T) {
	v := newFabric()
	srv, cli, serr, cerr := runPair(t, v, Options{Test: SendBW, GIDIndex: 1, IBPort: 1, Iters: 50, Bidirectional: true, Duration: time.Second})
	if serr != nil || cerr != nil {
		t.Fatalf("send_bw -b -D 1: server %v, client %v", serr, cerr)
	}
	row := regexp.MustCompile(`(?m)^ 65536 +([0-9]+) +0\.00 +[0-9.]+\s+[0-9.]+$`)
	sends := v.Posts(rdma.WRSend)
	for side, out := range map[string]string{"server": srv, "client": cli} {
		rows := row.FindAllStringSubmatch(out, -1)
		if len(rows) != 1 || strings.Contains(out, "Local results") || !strings.HasSuffix(out, resultLine) {
			t.Fatalf("send_bw -b -D %s: want one row of its own:\n%s", side, out)
		}
		n, _ := strconv.Atoi(rows[0][1])
		if n <= sends/2 || n > sends {
			t.Errorf("send_bw -b -D %s: %d messages counted of %d sent by both sides; want its sends and receives", side, n, sends)
		}
	}
}

// TestSendBidirectionalRefusals: perftest's refusals of send_bw -b with
// --run_infinitely and the SW rate limiter; rdmactl's own of
// --report-both with -D, where perftest's remote row is unset memory.
func TestSendBidirectionalRefusals(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: SendBW, Bidirectional: true, RunInfinitely: true}, "run_infinitely mode is not supported in SEND Bidirectional BW test"},
		{Options{Test: SendBW, Bidirectional: true, RateLimit: &RateLimit{Rate: 1, Units: "g", Type: limiterSW}}, "SW Rate limiter cann't be executed on non-BW, ATOMIC or bidirectional SEND tests"},
		{Options{Test: SendBW, Bidirectional: true, ReportBoth: true, Duration: 4 * time.Second}, "--report-both with -b -D: a timed send_bw -b trades no results (perftest prints an unset remote row); drop --report-both, each side prints its own"},
	} {
		if _, err := c.o.Resolve(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
