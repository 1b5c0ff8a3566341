package perf

import (
	"regexp"
	"strings"
	"testing"
)

// TestBidirectionalAsPerftest: with -b both sides of write_bw and read_bw
// stream, name it in the title, show their TX depth, and print the sum of
// both results (the fabric takes 1 ms a message: 2 × 0.0625 MB/sec at 64
// KiB); --report-both adds each side's own row after.
func TestBidirectionalAsPerftest(t *testing.T) {
	for _, test := range []Test{WriteBW, ReadBW} {
		v := newFabric()
		srv, cli, serr, cerr := runPair(t, v, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50, Bidirectional: true, ReportBoth: true})
		if serr != nil || cerr != nil {
			t.Fatalf("%s -b: server %v, client %v", test, serr, cerr)
		}
		if n := v.Posts(opcodeOf(test, "")); n != 2*50 {
			t.Errorf("%s -b: %d requests posted, want 50 by each side", test, n)
		}
		title := "                    " + test.Verb() + " Bidirectional BW Test\n"
		row := regexp.MustCompile(`(?m)^ 65536 +50 +[0-9.]+ +([0-9.]+) `)
		for side, out := range map[string]string{"server": srv, "client": cli} {
			rows := row.FindAllStringSubmatch(out, -1)
			if !strings.Contains(out, title) || !strings.Contains(out, " TX depth        : 50\n") || len(rows) != 3 {
				t.Fatalf("%s -b %s:\n%s", test, side, out)
			}
			if rows[0][1] != "125.00" || rows[1][1] != "62.50" || rows[2][1] != "62.50" {
				t.Errorf("%s -b %s: sum, local, remote %s %s %s, want 125.00 62.50 62.50", test, side, rows[0][1], rows[1][1], rows[2][1])
			}
			if !strings.Contains(out, "\n Local results: \n") || !strings.Contains(out, "\n Remote results: \n") || !strings.HasSuffix(out, resultLine) {
				t.Errorf("%s --report-both %s:\n%s", test, side, out)
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
