//go:build e2e

package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// atomicRow is an 8-byte row of a bandwidth or latency table.
var atomicRow = regexp.MustCompile(`(?m)^ 8 +\d+ +\d+\.\d\d`)

// TestSinglePerfAtomicInterop: atomic_bw (both -A) and atomic_lat against
// ib_atomic_bw and ib_atomic_lat in both roles: both exit 0, rdmactl
// prints perftest's title, and the rows carry 8 bytes; the atomic_bw
// server prints the client's row.
func TestSinglePerfAtomicInterop(t *testing.T) {
	for _, c := range []struct{ test, atomic, title string }{
		{"atomic_bw", "FETCH_AND_ADD", "Atomic FETCH_AND_ADD BW Test"},
		{"atomic_bw", "CMP_AND_SWAP", "Atomic CMP_AND_SWAP BW Test"},
		{"atomic_lat", "FETCH_AND_ADD", "Atomic FETCH_AND_ADD Latency Test"},
		{"atomic_lat", "CMP_AND_SWAP", "Atomic CMP_AND_SWAP Latency Test"},
	} {
		for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			t.Run(c.test+" "+c.atomic+"/"+roles[0]+"-server", func(t *testing.T) {
				srv, cli := perfPair(t, c.test, roles[0], roles[1], singlePair(t), "-d", "rxe0", "-x", ownGID(t), "-n", "100", "-A", c.atomic)
				if srv.Code != 0 || cli.Code != 0 {
					t.Fatalf("server exit %d\n%s%s\nclient exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
				}
				ours := cli
				if roles[0] == "rdmactl" {
					ours = srv
				}
				if !strings.Contains(ours.Stdout, "                    "+c.title+"\n") || !strings.Contains(ours.Stdout, " Outstand reads  : ") {
					t.Errorf("rdmactl's header:\n%s", ours.Stdout)
				}
				if !atomicRow.MatchString(cli.Stdout) {
					t.Errorf("the client printed no 8-byte row:\n%s", cli.Stdout)
				}
				if c.test == "atomic_bw" {
					if s, k := atomicRow.FindString(srv.Stdout), atomicRow.FindString(cli.Stdout); s == "" || s != k {
						t.Errorf("the server's row %q is not the client's %q", s, k)
					}
				}
			})
		}
	}
}
