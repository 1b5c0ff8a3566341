package perf

import (
	"strconv"
	"strings"
	"testing"
)

// TestInlineAsPerftest: -I N posts messages of up to N bytes inline on
// every data path, none above N, and names N in the header; a device that
// holds less gives perftest's line and its own size.
func TestInlineAsPerftest(t *testing.T) {
	for _, c := range []struct {
		o       Options
		inlined bool // the client posted inline
	}{
		{Options{Test: WriteBW, Size: 64, InlineSize: 64}, true},
		{Options{Test: WriteBW, Size: 65, InlineSize: 64}, false},
		{Options{Test: SendBW, Size: 32, InlineSize: 64}, true},
		{Options{Test: WriteLat, Size: 2, InlineSize: 220}, true},
		{Options{Test: SendLat, Size: 2, InlineSize: 236}, true},
		{Options{Test: SendLat, Size: 2, InlineSize: 236, BusyPoll: true}, true},
		{Options{Test: WriteLat, Size: 2, InlineSize: 0}, false},
	} {
		o := c.o
		o.GIDIndex, o.IBPort, o.Iters = 1, 1, 50
		v := newFabric()
		srv, cli, serr, cerr := runPair(t, v, o)
		if serr != nil || cerr != nil {
			t.Fatalf("%s -s %d -I %d: server %v, client %v", o.Test, o.Size, o.InlineSize, serr, cerr)
		}
		if got := v.InlinePosts() > 0; got != c.inlined {
			t.Errorf("%s -s %d -I %d: %d requests inline, want inline %v", o.Test, o.Size, o.InlineSize, v.InlinePosts(), c.inlined)
		}
		for _, out := range []string{srv, cli} {
			want := " Max inline data : " + strconv.Itoa(o.InlineSize) + "[B]\n"
			if !strings.Contains(out, want) {
				t.Errorf("%s -I %d: header lacks %q:\n%s", o.Test, o.InlineSize, want, out)
			}
		}
	}
	_, cli := runBoth(t, Options{Test: WriteLat, GIDIndex: 1, IBPort: 1, Iters: 50, InlineSize: 900})
	if !strings.Contains(cli, "  Actual inline-size(512) < requested inline-size(900)\n") || !strings.Contains(cli, " Max inline data : 512[B]\n") {
		t.Errorf("-I 900 on a QP of 512 inline bytes:\n%s", cli)
	}
}
