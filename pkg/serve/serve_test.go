package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/perf"
)

func TestLogLines(t *testing.T) {
	at := time.Date(2026, 11, 24, 7, 40, 1, 123e6, time.UTC)
	var text, js bytes.Buffer
	ok := Entry{Time: at, Peer: "10.9.0.2", Test: TestPing, OK: true, Seconds: 0.0521}
	bad := Entry{Time: at, Peer: "10.9.0.3", Test: TestDemo, Seconds: 2.0034, Error: "failed to exchange connection data between sides", Hint: "is it an RC demo?"}
	tl, jl := NewLog(&text, false), NewLog(&js, true)
	for _, e := range []Entry{ok, bad} {
		tl.Write(e)
		jl.Write(e)
	}
	want := "2026-11-24T07:40:01.123Z ping 10.9.0.2 ok 0.052s\n" +
		"2026-11-24T07:40:01.123Z demo 10.9.0.3 FAILED 2.003s: failed to exchange connection data between sides (hint: is it an RC demo?)\n"
	if text.String() != want {
		t.Errorf("text log:\n%s\nwant:\n%s", text.String(), want)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("JSON log has %d lines:\n%s", len(lines), js.String())
	}
	for _, l := range lines {
		if err := schema.Validate("serve-line", []byte(l)); err != nil {
			t.Errorf("against its schema: %v", err)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema_version"] != 2.0 || doc["ok"] != false || doc["duration_seconds"] != 2.0034 || doc["test"] != "demo" || doc["error"].(map[string]any)["hint"] == nil {
		t.Errorf("JSON line = %s", lines[1])
	}
	var stopped bytes.Buffer
	tl.Stopped(&stopped, 90*time.Second)
	if stopped.String() != "rdmactl serve: stopped after 1m30s: 2 clients, 1 failed\n" {
		t.Errorf("stopped line = %q", stopped.String())
	}
}

func TestStartHint(t *testing.T) {
	wrapped := fmt.Errorf("rping listener: %w", syscall.EADDRINUSE)
	if h := StartHint(wrapped); !strings.Contains(h, "--port") {
		t.Errorf("EADDRINUSE hint = %q", h)
	}
	if h := StartHint(fmt.Errorf("x: %w", syscall.ENODEV)); !strings.Contains(h, "rxe add") {
		t.Errorf("ENODEV hint = %q", h)
	}
	if h := StartHint(fmt.Errorf("other")); h != "" {
		t.Errorf("hint for an unknown error = %q (must not guess)", h)
	}
}

func TestLogWriteBW(t *testing.T) {
	at := time.Date(2026, 11, 24, 7, 40, 5, 789e6, time.UTC)
	e := Entry{Time: at, Peer: "10.9.0.2", Test: TestWriteBW, OK: true, Seconds: 1.2041, BW: &BW{Bytes: 65536, Iterations: 1000, AvgMBps: 171.324}}
	var text, js bytes.Buffer
	NewLog(&text, false).Write(e)
	NewLog(&js, true).Write(e)
	if want := "2026-11-24T07:40:05.789Z write_bw 10.9.0.2 ok 1.204s 65536 bytes x 1000: 171.32 MB/sec\n"; text.String() != want {
		t.Errorf("text log %q, want %q", text.String(), want)
	}
	if err := schema.Validate("serve-line", js.Bytes()); err != nil {
		t.Errorf("%s: against its schema: %v", js.String(), err)
	}
	if !strings.Contains(js.String(), `"bandwidth":{"bytes":65536,"iterations":1000,"bw_average_mb_per_sec":171.324}`) {
		t.Errorf("JSON line = %s", js.String())
	}
}

// A write_bw client that arrives while another session holds the slot for
// the whole step timeout is dropped with a busy line, not left hanging,
// and told why in place of the server's version.
func TestPerfSessionBusy(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	told := make(chan error, 1)
	go func() { told <- perf.NewOOB(b, true, false, 5*time.Second).Versions() }()
	slot := make(chan struct{}, 1)
	slot <- struct{}{} // another session runs
	begin := time.Now()
	e := Config{Timeout: 50 * time.Millisecond, FirstByte: time.Second}.perfSession(context.Background(), a, nil, slot)
	if e.OK || !strings.HasPrefix(e.Error, "busy: ") || !strings.Contains(e.Hint, "one write_bw session at a time") {
		t.Errorf("entry %+v", e)
	}
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("took %v", took)
	}
	if err := <-told; err == nil || !strings.Contains(err.Error(), "the server is busy") || cli.HintOf(err) == "" {
		t.Errorf("the client learnt %v", err)
	}
}

// A client that stalls in its version is dropped at the step timeout and
// never waits for, or takes, the slot.
func TestPerfSessionNeedsAWholeVersionFirst(t *testing.T) {
	for _, tc := range []struct {
		name, opening, send, want string
	}{
		{"opening then silent", "6.06", "", "4 of the 16 bytes of its version arrived"},
		{"part then silent", "6.0", "6\x00\x00", "6 of the 16 bytes of its version arrived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			if tc.send != "" {
				go b.Write([]byte(tc.send))
			}
			slot := make(chan struct{}, 1)
			begin := time.Now()
			e := Config{Timeout: 100 * time.Millisecond, FirstByte: 10 * time.Second}.perfSession(context.Background(), a, []byte(tc.opening), slot)
			if e.OK || !strings.Contains(e.Error, tc.want) || e.Hint != perfPortHint || len(slot) != 0 {
				t.Errorf("entry %+v, slot taken %v", e, len(slot) != 0)
			}
			if took := time.Since(begin); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// A session's steps each set their own deadline; a bounded connection ends
// the whole of it at its bound however the steps are spaced: a client that
// sends each step of perftest's exchange just inside the step timeout does
// not hold the session longer.
func TestBoundedConnEndsTheWholeExchange(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		client := perf.NewOOB(b, true, false, 10*time.Second)
		if client.Versions() != nil {
			return
		}
		for {
			time.Sleep(150 * time.Millisecond) // each step inside the server's 1 s
			if _, _, err := client.SysData(4096, 64); err != nil {
				return
			}
		}
	}()
	server := perf.NewOOB(bound(a, 500*time.Millisecond), false, false, time.Second)
	begin := time.Now()
	err := server.Versions()
	for err == nil {
		_, _, err = server.SysData(4096, 64)
	}
	if took := time.Since(begin); took > 800*time.Millisecond {
		t.Errorf("the exchange ran %v past a 500ms bound (%v)", took, err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("ended by %v, want a timeout", err)
	}
}

// The gate admits up to its bounds, per port and per peer, and frees a
// place when a session leaves.
func TestGateBounds(t *testing.T) {
	g := newGate(3, 2)
	for _, p := range []string{"10.9.0.2", "10.9.0.2"} {
		if err := g.enter(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.enter("10.9.0.2"); err == nil || !strings.Contains(err.Error(), "--max-per-peer") {
		t.Errorf("third session of one peer: %v", err)
	}
	if err := g.enter("10.9.0.3"); err != nil {
		t.Fatal(err)
	}
	if err := g.enter("10.9.0.4"); err == nil || !strings.Contains(err.Error(), "--max-sessions") {
		t.Errorf("fourth session on the port: %v", err)
	}
	g.leave("10.9.0.2")
	if err := g.enter("10.9.0.4"); err != nil {
		t.Errorf("after one left: %v", err)
	}
	if d := newGate(0, 0); d.max != DefaultMaxSessions || d.perPeer != DefaultMaxPerPeer {
		t.Errorf("defaults %d, %d", d.max, d.perPeer)
	}
}

// The accept loop runs at most MaxPerPeer sessions of one peer; the next
// connection is closed at once with a busy line, and none is left when it
// stops.
func TestAcceptTurnsAwayBeyondBounds(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logged := make(chan Entry, 16)
	cfg := Config{MaxSessions: 10, MaxPerPeer: 2, Log: func(e Entry) { logged <- e }}
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		cfg.accept(ctx, ln, TestDemo, func(c net.Conn) Entry { <-release; return Entry{} })
		close(done)
	}()
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	select {
	case e := <-logged:
		if e.OK || !strings.HasPrefix(e.Error, "busy: 2 sessions of 127.0.0.1") || e.Test != TestDemo || e.Peer != "127.0.0.1" {
			t.Errorf("busy entry %+v", e)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no busy line for the third connection")
	}
	_ = conns[2].SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := conns[2].Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the third connection was not closed: %v", err)
	}
	close(release)
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("accept did not return after its context ended")
	}
}

// A client's numbers are input: counts beyond 2^53 are strings in the JSON
// line, and a line whose numbers cannot be encoded is still written, as a
// failure that says so.
func TestLogKeepsEveryLine(t *testing.T) {
	at := time.Date(2026, 11, 24, 7, 40, 5, 0, time.UTC)
	var js bytes.Buffer
	l := NewLog(&js, true)
	l.Write(Entry{Time: at, Peer: "10.9.0.2", Test: TestWriteBW, OK: true, BW: &BW{Bytes: 65536, Iterations: math.MaxUint64, AvgMBps: 1}})
	l.Write(Entry{Time: at, Peer: "10.9.0.3", Test: TestWriteBW, OK: true, BW: &BW{Bytes: 65536, Iterations: 1000, AvgMBps: math.NaN()}})
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), js.String())
	}
	if !strings.Contains(lines[0], `"iterations":"18446744073709551615"`) || !strings.HasPrefix(lines[0], `{"schema_version":2,`) {
		t.Errorf("big count: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"ok":false`) || !strings.Contains(lines[1], "did not encode") || strings.Contains(lines[1], "bandwidth") {
		t.Errorf("NaN line: %s", lines[1])
	}
	for _, line := range lines {
		if err := schema.Validate("serve-line", []byte(line)); err != nil {
			t.Errorf("%s: against its schema: %v", line, err)
		}
	}
	var stopped bytes.Buffer
	l.Stopped(&stopped, time.Second)
	if !strings.Contains(stopped.String(), "2 clients, 1 failed") {
		t.Errorf("stopped line %q", stopped.String())
	}
}

// A flood of turned-away clients makes one busy line a second per peer,
// each counting the clients since the last.
func TestBusyLogIsRateLimited(t *testing.T) {
	var lines []Entry
	b := newBusyLog(TestDemo, func(e Entry) { lines = append(lines, e) })
	why := errors.New("busy: 16 sessions of 10.9.0.2 already run on this port (--max-per-peer)")
	for i := 0; i < 100; i++ {
		b.note("10.9.0.2", why)
	}
	b.note("10.9.0.3", why)
	if len(lines) != 2 || lines[0].Error != why.Error() || lines[0].Peer != "10.9.0.2" || lines[1].Peer != "10.9.0.3" {
		t.Fatalf("lines %+v", lines)
	}
	b.flush()
	if len(lines) != 3 || !strings.Contains(lines[2].Error, "(99 clients of 10.9.0.2 turned away since the last line)") || lines[2].Hint == "" {
		t.Fatalf("after flush: %+v", lines)
	}
}
