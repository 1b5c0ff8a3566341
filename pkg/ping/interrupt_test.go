package ping

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// interruptAfter is a context cancelled after d, as SIGINT would cancel
// rdmactl's.
func interruptAfter(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(d, cancel)
	t.Cleanup(func() { timer.Stop(); cancel() })
	return ctx
}

// An endless --stats client ends cleanly on an interrupt and prints its
// statistics, as ping(8) does on Ctrl-C.
func TestInterruptedStatsClientPrintsItsSummary(t *testing.T) {
	f, _ := newFabric()
	cl := opts("-a", "10.9.0.1", "--stats", true)
	_, c := pairIn(t, f, interruptAfter(t, 100*time.Millisecond), opts("-a", "10.9.0.1"), cl)
	if c.code != 0 || !strings.Contains(c.out, "--- 10.9.0.1 ping statistics ---") {
		t.Fatalf("client %+v", c)
	}
}

// A persistent --json server ends on an interrupt with its document.
func TestInterruptedPersistentJSONServerWritesItsDocument(t *testing.T) {
	f, _ := newFabric()
	srv := opts("-a", "10.9.0.1", "--json", true)
	srv.Persistent = true
	nextTestPort++
	srv.Mode, srv.Port, srv.CM = ModeServer, nextTestPort, f
	ctx := interruptAfter(t, 300*time.Millisecond)
	done := make(chan outcome, 1)
	go func() { done <- runIn(ctx, srv) }()
	select {
	case s := <-done:
		var rep ServerReport
		if err := json.Unmarshal([]byte(s.out), &rep); err != nil || s.code != 0 || !rep.OK {
			t.Fatalf("server %+v (%v)", s, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted server still runs")
	}
}

// The runs that end cleanly on an interrupt are those that have
// something to print at the end; the others leave SIGINT its default
// effect, as rping does.
func TestEndsOnInterruptOnlyWithSomethingToPrint(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want bool
	}{
		{Options{Mode: ModeClient}, false},
		{Options{Mode: ModeClient, Stats: true}, true},
		{Options{Mode: ModeClient, JSON: true}, true},
		{Options{Mode: ModeServer, Stats: true}, false},
		{Options{Mode: ModeServer, JSON: true}, false},
		{Options{Mode: ModeServer, Persistent: true}, false},
		{Options{Mode: ModeServer, Persistent: true, JSON: true}, true},
	} {
		if got := c.o.EndsOnInterrupt(); got != c.want {
			t.Errorf("%+v: EndsOnInterrupt %v, want %v", c.o, got, c.want)
		}
	}
}
