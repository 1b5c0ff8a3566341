//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestSinglePerfLimits: -w and -y, perftest's verifiers. A limit the run
// cannot reach fails each side exactly where perftest's fails (write_bw:
// the client only; send_bw: both), after the report, with its line and
// exit 1; a limit reached passes. perftest against itself first gives
// each role's verdict in the same boot.
func TestSinglePerfLimits(t *testing.T) {
	const bwMissed, rateMissed = "Error: BW result is below bw limit", "Error: Msg rate  is below msg_rate limit"
	for _, c := range []struct{ test, flags string }{
		{"write_bw", "-w 100000"},
		{"send_bw", "-w 100000"},
		{"write_bw", "-w 100000 -y 100000"},
		{"send_bw", "-w 0.001 -y 0.0000001"},
	} {
		t.Run(c.test+" "+c.flags, func(t *testing.T) {
			args := append([]string{"-d", "rxe0", "-x", ownGID(t), "-n", "100"}, strings.Fields(c.flags)...)
			verdict := func(r result) (int, bool, bool) {
				return r.Code, strings.Contains(r.Stderr, bwMissed), strings.Contains(r.Stderr, rateMissed)
			}
			type seen struct {
				code           int
				bwLine, mrLine bool
			}
			want := map[string]seen{}
			for _, roles := range [][2]string{{"perftest", "perftest"}, {"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
				srv, cli := perfPair(t, c.test, roles[0], roles[1], singlePair(t), args...)
				for i, r := range []result{srv, cli} {
					role := []string{"server", "client"}[i]
					code, bw, mr := verdict(r)
					got := seen{code, bw, mr}
					if !bwRow.MatchString(r.Stdout) && role == "client" {
						t.Errorf("%s %s printed no report:\n%s%s", roles[i], role, r.Stdout, r.Stderr)
					}
					if roles[i] == "perftest" && roles[1-i] == "perftest" {
						want[role] = got
					} else if roles[i] == "rdmactl" && got != want[role] {
						t.Errorf("rdmactl as %s: exit %d, bw line %v, msg rate line %v; perftest: %+v\n%s", role, code, bw, mr, want[role], r.Stderr)
					}
				}
			}
			t.Logf("perftest's verdicts: %+v", want)
		})
	}
}
