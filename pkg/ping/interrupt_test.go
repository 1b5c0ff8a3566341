package ping

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// interruptAfter is an Options.Interrupted whose context is cancelled
// after d, as SIGINT would cancel it.
func interruptAfter(d time.Duration) func() (context.Context, context.CancelFunc) {
	return func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		t := time.AfterFunc(d, cancel)
		return ctx, func() { t.Stop(); cancel() }
	}
}

// An endless --stats client ends cleanly on an interrupt and prints its
// statistics, as ping(8) does on Ctrl-C.
func TestInterruptedStatsClientPrintsItsSummary(t *testing.T) {
	f, _ := newFabric()
	cl := opts("-a", "10.9.0.1", "--stats", true)
	cl.Interrupted = interruptAfter(100 * time.Millisecond)
	_, c := pair(t, f, opts("-a", "10.9.0.1"), cl)
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
	srv.Interrupted = interruptAfter(300 * time.Millisecond)
	done := make(chan outcome, 1)
	go func() { done <- runOne(srv) }()
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
