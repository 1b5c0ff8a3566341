package perf

import (
	"strings"
	"testing"
)

// TestLimits: -w and -y fail a bandwidth run (after its report) whose
// result stays below them, on the sides perftest checks: send_bw's two,
// write_bw's client but not its server; a limit reached passes.
func TestLimits(t *testing.T) {
	high, zero := 1e9, 0.0
	for _, c := range []struct {
		o                    Options
		serverErr, clientErr string
	}{
		{Options{Test: WriteBW, LimitBW: &high}, "", "Error: BW result is below bw limit (-w 1e+09)"},
		{Options{Test: SendBW, LimitBW: &high}, "Error: BW result is below bw limit", "Error: BW result is below bw limit"},
		{Options{Test: SendBW, LimitMsgRate: &high}, "Error: Msg rate  is below msg_rate limit", "Error: Msg rate  is below msg_rate limit"},
		{Options{Test: WriteBW, LimitBW: &zero, LimitMsgRate: &zero}, "", ""},
		{Options{Test: SendLat, LimitBW: &high}, "", ""},
	} {
		o := c.o
		o.GIDIndex, o.IBPort, o.Iters = 1, 1, 50
		srv, cli, serr, cerr := runPair(t, newFabric(), o)
		for side, got := range map[string]struct {
			err  error
			want string
			out  string
		}{"server": {serr, c.serverErr, srv}, "client": {cerr, c.clientErr, cli}} {
			switch {
			case got.want == "" && got.err != nil:
				t.Errorf("%v, the %s: %v", o.Test, side, got.err)
			case got.want != "" && (got.err == nil || !strings.Contains(got.err.Error(), got.want)):
				t.Errorf("%v, the %s: %v, want %q", o.Test, side, got.err, got.want)
			case got.want != "" && !strings.Contains(got.out, "#bytes"):
				t.Errorf("%v, the %s failed before its report:\n%s", o.Test, side, got.out)
			}
		}
	}
}
