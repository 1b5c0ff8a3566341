package perf

import (
	"regexp"
	"testing"
)

// TestMRPerQP: with --mr_per_qp each QP's record carries the key of a
// region of its own, and the data still lands: write, read and send
// tests over two QPs. Without it, the QPs share one key.
func TestMRPerQP(t *testing.T) {
	rkey := regexp.MustCompile(`(?m)^ local address: .* RKey (0x[0-9a-f]+) `)
	for _, test := range []Test{WriteBW, ReadBW, SendBW} {
		for _, perQP := range []bool{false, true} {
			srv, cli := runBoth(t, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 20, QPs: 2, MRPerQP: perQP})
			for side, out := range map[string]string{"server": srv, "client": cli} {
				keys := rkey.FindAllStringSubmatch(out, -1)
				if test == SendBW {
					// send_bw's records have no RKey: the run passing is the check
					continue
				}
				if len(keys) != 2 || (keys[0][1] != keys[1][1]) == !perQP {
					t.Errorf("%v --mr_per_qp=%v, the %s's keys %q:\n%s", test, perQP, side, keys, out)
				}
			}
		}
	}
}
