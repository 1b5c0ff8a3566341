package perf

import (
	"regexp"
	"strings"
	"testing"
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
	if _, err := (Options{Test: SendBW, Bidirectional: true}).Resolve(); err == nil {
		t.Error("send_bw -b was taken")
	}
	if _, err := (Options{Test: WriteLat, Bidirectional: true}).Resolve(); err == nil || err.Error() != "-b : Bidirectional is only available in BW test" {
		t.Errorf("write_lat -b: %v", err)
	}
}
