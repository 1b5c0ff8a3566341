package perf

import (
	"errors"
	"strings"
	"testing"
)

// wantRefusal checks that err is perftest's refusal (exit 1) saying text.
func wantRefusal(t *testing.T, what string, err error, text string) {
	t.Helper()
	var refusal *Refusal
	if !errors.As(err, &refusal) || !strings.HasSuffix(err.Error(), text) {
		t.Errorf("%s: %v (%T), want perftest's refusal %q", what, err, err, text)
	}
}

// TestAtomicTypeOnlyOnAtomicTests: as ib_write_bw -A FETCH_AND_ADD in the
// lab (perftest 4.5-0.17: two lines on stderr, exit 1), -A is refused on
// every test but atomic_bw and atomic_lat, whatever its value: perftest
// looks at the test before the value.
func TestAtomicTypeOnlyOnAtomicTests(t *testing.T) {
	const text = "You are not running the atomic_lat/bw test! To change the atomic action type, you must run one of the atomic tests"
	for _, c := range []struct {
		test Test
		typ  string
	}{
		{WriteBW, FetchAndAdd}, {WriteBW, CmpAndSwap}, {WriteLat, FetchAndAdd},
		{ReadBW, CmpAndSwap}, {ReadLat, FetchAndAdd}, {SendBW, FetchAndAdd}, {SendLat, CmpAndSwap},
		{WriteBW, "BOGUS"},
	} {
		_, err := resolveFlags(t, c.test, map[string]string{"atomic_type": c.typ})
		wantRefusal(t, c.test.String()+" -A "+c.typ, err, text)
		_, err = Options{Test: c.test, AtomicType: c.typ}.Resolve()
		wantRefusal(t, c.test.String()+" Options.AtomicType "+c.typ, err, text)
	}
	_, err := resolveFlags(t, AtomicBW, map[string]string{"atomic_type": "BOGUS"})
	wantRefusal(t, "atomic_bw -A BOGUS", err, "Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}")
	for _, test := range []Test{AtomicBW, AtomicLat} {
		for _, typ := range []string{FetchAndAdd, CmpAndSwap} {
			if o, err := resolveFlags(t, test, map[string]string{"atomic_type": typ}); err != nil || o.AtomicType != typ {
				t.Errorf("%s -A %s: %v, %q", test, typ, err, o.AtomicType)
			}
		}
	}
}

// TestRxDepthOnlyOneOffSendTests: perftest 4.5-0.17 takes -r above 1 on
// the send tests only; ib_write_bw and ib_write_lat -r 2 exit 1 in the
// lab as the read and atomic tests do. -r 1 is taken everywhere.
func TestRxDepthOnlyOneOffSendTests(t *testing.T) {
	for _, test := range []Test{WriteBW, WriteLat, ReadBW, ReadLat, AtomicBW, AtomicLat} {
		_, err := resolveFlags(t, test, map[string]string{"rx-depth": "2"})
		wantRefusal(t, test.String()+" -r 2", err, "-r 2: On RDMA verbs rx depth can be only 1")
		if _, err := resolveFlags(t, test, map[string]string{"rx-depth": "1"}); err != nil {
			t.Errorf("%s -r 1: %v", test, err)
		}
	}
	_, err := Options{Test: WriteBW, RxDepth: 64}.Resolve()
	wantRefusal(t, "write_bw Options.RxDepth 64", err, "On RDMA verbs rx depth can be only 1")
	for _, test := range []Test{SendBW, SendLat} {
		if _, err := resolveFlags(t, test, map[string]string{"rx-depth": "2"}); err != nil {
			t.Errorf("%s -r 2: %v", test, err)
		}
	}
	// the range comes first, as in perftest's parser
	_, err = resolveFlags(t, WriteBW, map[string]string{"rx-depth": "20000"})
	wantRefusal(t, "write_bw -r 20000", err, "Rx depth should be between 1 and 16384")
}

// TestAtomicSizeAsPerftest: ib_atomic_bw and ib_atomic_lat with a size
// other than 8, or -a, print "Message size cannot be changed for Atomic
// tests" and exit 1 (lab, perftest 4.5-0.17); a size out of -s's range
// is refused by the range first.
func TestAtomicSizeAsPerftest(t *testing.T) {
	const text = "Message size cannot be changed for Atomic tests"
	for _, c := range []struct {
		test Test
		args map[string]string
	}{
		{AtomicBW, map[string]string{"size": "16"}},
		{AtomicLat, map[string]string{"size": "16"}},
		{AtomicBW, map[string]string{"size": "4"}},
		{AtomicBW, map[string]string{"size": "16777216"}}, // past rdmactl's own bound too
		{AtomicBW, map[string]string{"all": ""}},
		{AtomicLat, map[string]string{"all": "", "size": "8"}},
	} {
		_, err := resolveFlags(t, c.test, c.args)
		wantRefusal(t, c.test.String()+" "+strings.Join(keys(c.args), " "), err, text)
	}
	_, err := resolveFlags(t, AtomicBW, map[string]string{"size": "3000000000"})
	wantRefusal(t, "atomic_bw -s 3000000000", err, "Message Size should be between 1 and 2147483647")
	_, err = resolveFlags(t, AtomicBW, map[string]string{"size": "16", "iters": "4"})
	wantRefusal(t, "atomic_bw -s 16 -n 4", err, "Iteration num should be between 5 and 100000000")
	for _, test := range []Test{AtomicBW, AtomicLat} {
		if r, err := (Options{Test: test, Size: 8}).Resolve(); err != nil || r.Size != 8 {
			t.Errorf("%s -s 8: %v, size %d", test, err, r.Size)
		}
	}
	// --run_infinitely takes -a's place in perftest: the size stays 8
	if r, err := (Options{Test: AtomicBW, All: true, RunInfinitely: true}).Resolve(); err != nil || r.Size != 8 {
		t.Errorf("atomic_bw -a --run_infinitely: %v, size %d", err, r.Size)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, "--"+k)
	}
	return out
}

// TestHistogramLongNameAsPerftest: perftest 4.5-0.17's table spells -H's
// long name "report-histogrm"; its getopt_long takes that name and its
// unique prefixes (--report-h … --report-histogr) and refuses
// --report-histogram, which its help prints, and --report-histogra
// (lab: ib_send_lat).
func TestHistogramLongNameAsPerftest(t *testing.T) {
	for _, name := range []string{"report-histogrm", "report-h", "report-hi", "report-histogr"} {
		if full, err := LongOption(name, nil); err != nil || full != "report-histogrm" {
			t.Errorf("--%s: %q, %v; want --report-histogrm", name, full, err)
		}
	}
	for _, name := range []string{"report-histogram", "report-histogra", "report-histogrmx"} {
		if full, err := LongOption(name, nil); err == nil || err.Error() != "unrecognized option '--"+name+"'" {
			t.Errorf("--%s: %q, %v; want getopt's unrecognized option", name, full, err)
		}
	}
	if _, err := resolveFlags(t, WriteBW, map[string]string{"report-histogrm": ""}); err == nil || !strings.HasSuffix(err.Error(), "Available only on Latency tests") {
		t.Errorf("write_bw --report-histogrm: %v", err)
	}
}
