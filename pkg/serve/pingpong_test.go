package serve

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/pingpong"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

func pingpongClient(f *rdmatest.Fabric, port, iters int) *pingpong.Options {
	return &pingpong.Options{
		Verbs: f, Kind: pingpong.RC, Server: "127.0.0.1", Port: port, IBPort: 1, Size: pingpong.RC.DefaultSize(),
		MTU: pingpong.DefaultMTU, RxDepth: pingpong.DefaultRxDepth, Iters: iters, GIDIndex: -1, GIDAuto: true,
		Check: true, Timeout: 10 * time.Second,
	}
}

// The perftest port answers a pingpong rc client with the tool's
// defaults, logged as its test.
func TestServeAnswersPingpong(t *testing.T) {
	f := loopbackFabric()
	b, log, stop := startServe(t, f, func(c *Config) { c.Timeout = 10 * time.Second })

	doc := pingpong.Probe(context.Background(), pingpongClient(f, b.PerfPort, pingpong.DefaultIters))
	if !doc.OK || doc.UsecPerIter == nil || !doc.Validated || len(doc.InvalidPages) != 0 {
		t.Fatalf("pingpong client: %+v (error %+v)", doc, doc.Error)
	}
	if doc.GIDIndex == nil || *doc.GIDIndex != 3 || len(doc.Remote) != 1 || doc.Remote[0].GID != "::ffff:127.0.0.1" {
		t.Errorf("the server's record: %+v, GID index %v", doc.Remote, doc.GIDIndex)
	}
	got := waitLogged(t, log, "", 1)
	if err := stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
	if e := got[0]; e.Test != TestPingpongRC || !e.OK || e.Peer != "127.0.0.1" || e.Error != "" {
		t.Errorf("pingpong's log entry %+v", e)
	}
	if line := FormatEntry(got[0]); !strings.Contains(line, " pingpong_rc 127.0.0.1 ok ") {
		t.Errorf("log line %q", line)
	}
}

// A perftest client on the same port still reaches the write_bw side
// (its version exchange, answered busy, shows where it went).
func TestPerfPortSessionTakesPerftestToWriteBW(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	told := make(chan error, 1)
	go func() { told <- perf.NewOOB(b, true, false, 5*time.Second).Versions() }()
	slot := make(chan struct{}, 1)
	slot <- struct{}{} // another write_bw session runs
	e := Config{Timeout: 50 * time.Millisecond, FirstByte: time.Second}.perfPortSession(context.Background(), a, slot)
	if e.OK || e.Test != "" || !strings.HasPrefix(e.Error, "busy: another write_bw session") {
		t.Errorf("entry %+v", e)
	}
	if err := <-told; err == nil || !strings.Contains(err.Error(), "the server is busy") {
		t.Errorf("the client learnt %v", err)
	}
}

// Clients of other sizes and counts than the tool's defaults pass, and
// serve logs each session as ok with what it answered once the client
// falls silent.
func TestServePingpongAnySizeAndCount(t *testing.T) {
	f := loopbackFabric()
	b, log, stop := startServe(t, f, func(c *Config) { c.Timeout = 10 * time.Second })
	for _, c := range []struct{ size, iters int }{{1024, 7}, {65536, 3}} {
		o := pingpongClient(f, b.PerfPort, c.iters)
		o.Size = c.size
		if doc := pingpong.Probe(context.Background(), o); !doc.OK || !doc.Validated {
			t.Fatalf("client -s %d -n %d: %+v", c.size, c.iters, doc.Error)
		}
	}
	got := waitLogged(t, log, "", 2)
	if err := stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
	// Each session is logged when its own silence ends, so the two
	// entries may come in either order.
	bySize := map[int]Entry{}
	for _, e := range got {
		if e.RoundTrips == nil {
			t.Fatalf("entry %+v has no round trips", e)
		}
		bySize[e.RoundTrips.Bytes] = e
	}
	for _, want := range []RoundTrips{{7, 1024}, {3, 65536}} {
		e := bySize[want.Bytes]
		if !e.OK || e.RoundTrips == nil || *e.RoundTrips != want {
			t.Errorf("entry %+v, want %+v", e, want)
		}
		if line := FormatEntry(e); !strings.Contains(line, " pingpong_rc 127.0.0.1 ok 2.") {
			t.Errorf("log line %q, want pingpong_rc ok after about 2s", line)
		}
	}
	if line := FormatEntry(bySize[1024]); !strings.HasSuffix(line, "s 7 round trips of 1024 bytes") {
		t.Errorf("log line %q", line)
	}
}

// A session whose client's run and the silence after it do not fit in
// serve's --timeout is logged as failed, with its count and the fix; the
// client passes.
func TestServePingpongLongerThanTheTimeout(t *testing.T) {
	f := loopbackFabric()
	b, log, _ := startServe(t, f, func(c *Config) { c.Timeout = time.Second })
	if doc := pingpong.Probe(context.Background(), pingpongClient(f, b.PerfPort, 10)); !doc.OK {
		t.Fatalf("client: %+v", doc.Error)
	}
	e := waitLogged(t, log, "", 1)[0]
	if e.OK || e.Test != TestPingpongRC || e.Error != "the session ran for all of serve's --timeout (1s): context deadline exceeded after 10 receives and 10 sends" ||
		!strings.Contains(e.Hint, "must fit in serve's --timeout") || e.RoundTrips != nil {
		t.Errorf("entry %+v", e)
	}
}

// Stopping serve ends a pingpong session that waits for its client's
// next message at once, not when the client's silence ends it.
func TestServeStopEndsAPingpongSession(t *testing.T) {
	f := loopbackFabric()
	b, log, stop := startServe(t, f, func(c *Config) { c.Timeout = time.Minute })
	if doc := pingpong.Probe(context.Background(), pingpongClient(f, b.PerfPort, 10)); !doc.OK {
		t.Fatalf("client: %+v", doc.Error)
	}
	begin := time.Now()
	if err := stop(); err != nil {
		t.Errorf("serve: %v", err)
	}
	if took := time.Since(begin); took > 20*time.Second {
		t.Errorf("serve took %v to stop", took)
	}
	e := waitLogged(t, log, "", 1)[0]
	if e.OK || !strings.HasPrefix(e.Error, "server shutting down: ") || !strings.Contains(e.Error, "after 10 receives and 10 sends") {
		t.Errorf("entry %+v", e)
	}
}

func TestClientKind(t *testing.T) {
	record := string(pingpong.Dest{QPN: 0x11, PSN: 0xabc}.MarshalRecord())
	for _, tc := range []struct {
		opening, test string
		decided       bool
	}{
		{"6.06\x00", TestWriteBW, true},
		{"6.", TestWriteBW, true},
		{"24.10", TestWriteBW, true},
		{record[:5], TestPingpongRC, true},
		{"00ff:", TestPingpongRC, true},
		{"ABCD:", TestPingpongRC, true},
		{"1234.", TestWriteBW, true},
		{"abcd.", "", true},
		{"GET /", "", true},
		{"\x16\x03\x01", "", true},
		{"\x00", "", true},
		{"0", "", false},
		{"0000", "", false},
		{"abc", "", false},
	} {
		test, decided := clientKind([]byte(tc.opening))
		if test != tc.test || decided != tc.decided {
			t.Errorf("clientKind(%q) = %q, %v; want %q, %v", tc.opening, test, decided, tc.test, tc.decided)
		}
	}
}

// What a client sends first on the perftest port: whole records in one
// read however they arrive, hostile or short openings refused in time.
func TestReadClientKind(t *testing.T) {
	record := pingpong.Dest{QPN: 0x11, PSN: 0xabc}.MarshalRecord()
	for _, tc := range []struct {
		name   string
		writes []string
		close  bool
		test   string
		err    string
	}{
		{"pingpong", []string{string(record)}, false, TestPingpongRC, ""},
		{"pingpong in pieces", []string{"00", "00:000011", string(record[11:])}, false, TestPingpongRC, ""},
		{"perftest", []string{"6.06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"}, false, TestWriteBW, ""},
		{"silent", nil, false, "", "nothing arrived within 100ms"},
		{"short then closed", []string{"00"}, true, "", `2 bytes arrived, too few to tell its test ("00"): EOF`},
		{"short then silent", []string{"0000"}, false, "", "4 bytes arrived, too few to tell its test"},
		{"garbage", []string{"GET / HTTP/1.0\r\n\r\n"}, false, "", `its first bytes "GET /" are neither a perftest version nor a pingpong address record`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			go func() {
				defer func() {
					if tc.close {
						b.Close()
					}
				}()
				for _, w := range tc.writes {
					if _, err := b.Write([]byte(w)); err != nil {
						return
					}
				}
			}()
			defer b.Close()
			begin := time.Now()
			test, opening, err := readClientKind(a, 100*time.Millisecond, 300*time.Millisecond)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if took := time.Since(begin); took > 5*time.Second {
					t.Errorf("took %v", took)
				}
				return
			}
			if err != nil || test != tc.test {
				t.Fatalf("test %q, error %v", test, err)
			}
			if test != TestPingpongRC {
				return
			}
			got, err := readRecord(a, opening, time.Second)
			if err != nil || string(got) != string(record) {
				t.Errorf("record %q, error %v; want %q", got, err, record)
			}
		})
	}
}

// A connection that opens as pingpong and then sends no valid record, or
// not all of one, is refused before the session opens a device.
func TestPerfPortSessionBadRecord(t *testing.T) {
	for _, tc := range []struct{ name, send, want string }{
		{"not hex", "0000:zz" + strings.Repeat(" ", pingpong.RecordSize-7), "no pingpong address record: "},
		{"short GID", string(pingpong.Dest{}.MarshalRecord()[:40]) + strings.Repeat("\x00", pingpong.RecordSize-40), "the GID has 21 hex digits"},
		{"part then silent", "0000:000011", "11 of the 52 bytes of its pingpong address record arrived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := loopbackFabric()
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			go func() {
				b.Write([]byte(tc.send))
				io.Copy(io.Discard, b)
			}()
			e := Config{RDMA: f, Timeout: 200 * time.Millisecond, FirstByte: time.Second}.perfPortSession(context.Background(), a, make(chan struct{}, 1))
			if e.OK || e.Test != TestPingpongRC || !strings.Contains(e.Error, tc.want) || e.Hint != pingpongHint {
				t.Errorf("entry %+v", e)
			}
			if n := f.Opens(); n != 0 {
				t.Errorf("the device was opened %d times", n)
			}
		})
	}
}

// A pingpong session's JSON line is a serve-line document.
func TestLogPingpongLineSchema(t *testing.T) {
	var js bytes.Buffer
	log := NewLog(&js, true)
	log.Write(Entry{Time: time.Date(2026, 11, 24, 7, 40, 7, 12e6, time.UTC), Peer: "10.9.0.2", Test: TestPingpongRC, Seconds: 0.31, Error: "x", Hint: pingpongHint})
	log.Write(Entry{Time: time.Date(2026, 11, 24, 7, 40, 9, 12e6, time.UTC), Peer: "10.9.0.2", Test: TestPingpongRC, OK: true, Seconds: 2.31,
		RoundTrips: &RoundTrips{Count: 7, Bytes: 1024}})
	for _, line := range strings.SplitAfter(strings.TrimSpace(js.String()), "\n") {
		if err := schema.Validate("serve-line", []byte(line)); err != nil {
			t.Errorf("%s: against its schema: %v", line, err)
		}
	}
	if !strings.Contains(js.String(), `"test":"pingpong_rc"`) || !strings.Contains(js.String(), `"round_trips":{"count":7,"bytes":1024}`) {
		t.Errorf("JSON lines %s", js.String())
	}
}
