package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
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
// the whole step timeout is dropped with a busy line, not left hanging.
func TestPerfSessionBusy(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	slot := make(chan struct{}, 1)
	slot <- struct{}{} // another session runs
	begin := time.Now()
	e := Config{Timeout: 50 * time.Millisecond}.perfSession(context.Background(), a, slot)
	if e.OK || !strings.HasPrefix(e.Error, "busy: ") || !strings.Contains(e.Hint, "one write_bw session at a time") {
		t.Errorf("entry %+v", e)
	}
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}
