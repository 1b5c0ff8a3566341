package perf

import (
	"regexp"
	"strings"
	"testing"
)

// TestOutstandingReads: -o sets the read and atomic tests' requests in
// flight: both headers' "Outstand reads" and each QP's RTR and RTS. Above
// the device's max_qp_rd_atom it is that max, after perftest's line (its
// words go to stderr, the line of dashes to stdout).
func TestOutstandingReads(t *testing.T) {
	for _, test := range []Test{ReadBW, AtomicBW} {
		v := newFabric()
		srv, cli, serr, cerr := runPair(t, v, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50, OutReads: 4})
		if serr != nil || cerr != nil {
			t.Fatalf("%v -o 4: server %v, client %v", test, serr, cerr)
		}
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if !strings.Contains(out, " Outstand reads  : 4\n") {
				t.Errorf("%v -o 4: the %s's header:\n%s", test, side, out)
			}
		}
		for _, r := range perfQPs(v) {
			if r.RTR.MaxDestRdAtomic != 4 || r.RTS.MaxRdAtomic != 4 {
				t.Errorf("%v -o 4: QP %#x readied with %d reads in, %d out", test, r.Num, r.RTR.MaxDestRdAtomic, r.RTS.MaxRdAtomic)
			}
		}
	}

	srv, cli, serr, cerr := runPair(t, newFabric(), Options{Test: ReadBW, GIDIndex: 1, IBPort: 1, Iters: 50, OutReads: 100000})
	if serr != nil || cerr != nil {
		t.Fatalf("-o 100000: server %v, client %v", serr, cerr)
	}
	header := regexp.MustCompile(` Outstand reads  : (\d+)\n`)
	for side, out := range map[string]string{"server": srv, "client": cli} {
		m := header.FindStringSubmatch(out)
		if !strings.HasPrefix(out, resultLine) || m == nil || m[1] == "100000" {
			t.Errorf("-o 100000: the %s's output does not start with perftest's line or keeps -o:\n%s", side, out)
		}
	}
}
