package perf

import (
	"strings"
	"testing"
	"time"
)

// TestRecvPostList: --recv_post_list N has send_bw's server post -r
// rounded down to whole lists first, then re-post in whole lists, never
// more than the messages to come; both headers name it, as perftest's.
// perftest's refusals: latency tests, and -n not a multiple of N.
func TestRecvPostList(t *testing.T) {
	for _, c := range []struct {
		list, rx, iters, duration int
		first                     int
	}{
		{4, 10, 40, 0, 8},
		{1, 10, 40, 0, 10},
		{3, 16, 0, 1, 15},
	} {
		v := newFabric()
		o := Options{Test: SendBW, GIDIndex: 1, IBPort: 1, Iters: c.iters, RxDepth: c.rx, RecvPostList: c.list, Duration: time.Duration(c.duration) * time.Second}
		srv, cli, serr, cerr := runPair(t, v, o)
		if serr != nil || cerr != nil {
			t.Fatalf("--recv_post_list %d -r %d: server %v, client %v", c.list, c.rx, serr, cerr)
		}
		batches := v.RecvBatches()
		total := 0
		for i, n := range batches {
			total += n
			if i > 0 && n%c.list != 0 {
				t.Errorf("--recv_post_list %d: a batch of %d receives (all: %v)", c.list, n, batches)
			}
		}
		if len(batches) == 0 || batches[0] != c.first || c.duration == 0 && total != c.iters {
			t.Errorf("--recv_post_list %d -r %d -n %d: receives posted %v, want %d first and %d in all", c.list, c.rx, c.iters, batches, c.first, c.iters)
		}
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if has := strings.Contains(out, " Recv Post List  : "); has != (c.list > 1) {
				t.Errorf("--recv_post_list %d, the %s's header:\n%s", c.list, side, out)
			}
		}
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: SendLat, RecvPostList: 2}, "Receive post list is supported in BW tests only"},
		{Options{Test: SendBW, Iters: 1001, RecvPostList: 2}, "Number of iterations must be a multiple of receive post list size"},
	} {
		if _, err := c.o.Resolve(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
