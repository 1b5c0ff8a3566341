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
