package perf

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// TestCPUWindow: the share is user time over user and idle time between
// the window's two samples (system time counts in neither, as in
// perftest); a window never sampled reports 0.
func TestCPUWindow(t *testing.T) {
	var mu sync.Mutex
	stats := [][2]int64{{1000, 5000}, {1300, 5900}} // user +300, idle +900
	read := func() (int64, int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		s := stats[0]
		stats = stats[1:]
		return s[0], s[1], true
	}
	w := newCPUWindow(read)
	w.open(40*time.Millisecond, 10*time.Millisecond)
	time.Sleep(80 * time.Millisecond)
	if got := w.percent(); got != 25 {
		t.Errorf("%v%%, want 25 (300 of 1200)", got)
	}
	if got := newCPUWindow(read).percent(); got != 0 {
		t.Errorf("an unsampled window: %v%%", got)
	}
}

// TestCPUUtilColumn: with -D, --cpu_util adds perftest's column to the
// head and to each row; without -D perftest's warning, and no column.
func TestCPUUtilColumn(t *testing.T) {
	srv, cli, serr, cerr := runPair(t, newFabric(), Options{Test: SendBW, GIDIndex: 1, IBPort: 1, Duration: time.Second, CPUUtil: true})
	if serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v", serr, cerr)
	}
	head := " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]    CPU_Util[%]\n"
	row := regexp.MustCompile(`(?m)^ 65536      [1-9]\d* .*\t    \d+\.\d\d\n`)
	for side, out := range map[string]string{"server": srv, "client": cli} {
		if !strings.Contains(out, head) || !row.MatchString(out) {
			t.Errorf("%s with -D --cpu_util:\n%s", side, out)
		}
	}
	srv, cli, serr, cerr = runPair(t, newFabric(), Options{Test: WriteLat, GIDIndex: 1, IBPort: 1, Iters: 50, CPUUtil: true})
	if serr != nil || cerr != nil {
		t.Fatalf("without -D: server %v, client %v", serr, cerr)
	}
	for side, out := range map[string]string{"server": srv, "client": cli} {
		if !strings.HasPrefix(out, resultLine) || strings.Contains(out, "CPU_Util") {
			t.Errorf("%s with --cpu_util, no -D:\n%s", side, out)
		}
	}

	// --output prints no row, but the document still has the share.
	for _, o := range []Options{
		{Test: SendLat, Duration: time.Second},
		{Test: SendLat, Duration: time.Second, Output: "latency"},
		{Test: SendBW, Duration: time.Second, Output: "bandwidth"},
	} {
		o.GIDIndex, o.IBPort, o.CPUUtil, o.JSON = 1, 1, true, true
		_, doc := runBoth(t, o)
		if !regexp.MustCompile(`"host_user_percent":\d`).MatchString(doc) {
			t.Errorf("%v -D --cpu_util --json --output=%q lacks cpu.host_user_percent:\n%s", o.Test, o.Output, doc)
		}
		if err := schema.Validate("perf", []byte(doc)); err != nil {
			t.Errorf("against its schema: %v", err)
		}
	}
}
