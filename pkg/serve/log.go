package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Log writes one line per client session: for people
//
//	2026-11-24T07:40:01.123Z ping 10.9.0.2 ok 0.052s
//	2026-11-24T07:40:03.456Z demo 10.9.0.2 FAILED 2.003s: <error> (hint: <hint>)
//	2026-11-24T07:40:05.789Z write_bw 10.9.0.2 ok 1.204s 65536 bytes x 1000: 171.32 MB/sec
//	2026-11-24T07:40:07.012Z pingpong_rc 10.9.0.2 ok 2.310s 1000 round trips of 4096 bytes
//	2026-11-24T07:40:09.345Z udaddy 10.9.0.2 ok 2.031s 25 messages each way, the client's of 1000 bytes
//
// or, for scripts, one JSON document per line.
type Log struct {
	mu      sync.Mutex
	w       io.Writer
	json    bool
	clients int
	failed  int
}

// NewLog logs to w.
func NewLog(w io.Writer, asJSON bool) *Log { return &Log{w: w, json: asJSON} }

// jsonEntry is one JSON line: an Entry with the contract's error member
// (cli.EncodeDocument puts schema_version first).
type jsonEntry struct {
	Time    time.Time      `json:"time"`
	Peer    string         `json:"peer"`
	Test    string         `json:"test"`
	OK      bool           `json:"ok"`
	Seconds float64        `json:"duration_seconds"`
	BW      *BW            `json:"bandwidth,omitempty"`
	Trips   *RoundTrips    `json:"round_trips,omitempty"`
	Msgs    *Messages      `json:"messages,omitempty"`
	Error   *cli.ErrorBody `json:"error,omitempty"`
}

func jsonEntryOf(e Entry) jsonEntry {
	j := jsonEntry{Time: e.Time, Peer: e.Peer, Test: e.Test, OK: e.OK, Seconds: e.Seconds, BW: e.BW, Trips: e.RoundTrips, Msgs: e.Messages}
	if e.Error != "" || e.Hint != "" {
		j.Error = &cli.ErrorBody{Message: e.Error, Hint: e.Hint}
	}
	return j
}

// Write logs e; sessions call it concurrently.
func (l *Log) Write(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var line bytes.Buffer
	if l.json {
		if err := cli.EncodeDocument(&line, jsonEntryOf(e), false); err != nil {
			// Never lose a session's line: without what would not
			// encode, saying so.
			e.OK, e.BW, e.RoundTrips, e.Messages = false, nil, nil, nil
			e.Error = strings.TrimPrefix(e.Error+"; ", "; ") + "its log entry did not encode: " + err.Error()
			line.Reset()
			_ = cli.EncodeDocument(&line, jsonEntryOf(e), false)
		}
	} else {
		line.WriteString(FormatEntry(e) + "\n")
	}
	l.clients++
	if !e.OK {
		l.failed++
	}
	_, _ = l.w.Write(line.Bytes())
}

// FormatEntry is the text form of e, without the newline.
func FormatEntry(e Entry) string {
	verdict := "ok"
	if !e.OK {
		verdict = "FAILED"
	}
	s := fmt.Sprintf("%s %s %s %s %ss", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.Test, e.Peer, verdict,
		strconv.FormatFloat(e.Seconds, 'f', 3, 64))
	if e.BW != nil {
		s += fmt.Sprintf(" %d bytes x %d: %.2f MB/sec", e.BW.Bytes, e.BW.Iterations, e.BW.AvgMBps)
	}
	if e.RoundTrips != nil {
		s += fmt.Sprintf(" %d round trips of %d bytes", e.RoundTrips.Count, e.RoundTrips.Bytes)
	}
	if e.Messages != nil {
		s += fmt.Sprintf(" %d messages each way, the client's of %d bytes", e.Messages.Count, e.Messages.Bytes)
	}
	if e.Error != "" {
		s += ": " + e.Error
	}
	if e.Hint != "" {
		s += " (hint: " + e.Hint + ")"
	}
	return s
}

// Started says, on w (stderr), where the responder answers.
func (l *Log) Started(w io.Writer, b Bound) {
	tools := ""
	if b.ToolsPort != 0 {
		tools += fmt.Sprintf(", ucmatose and rdma_client on rdma_cm port %d", b.ToolsPort)
	}
	if b.UDPort != 0 {
		tools += fmt.Sprintf(", udaddy on rdma_cm UDP port %d", b.UDPort)
	}
	fmt.Fprintf(w, "rdmactl serve: answering rping on %s port %d, the RC demo on TCP port %d and perftest write_bw and ibv_rc_pingpong on TCP port %d%s\n",
		b.Addr, b.CMPort, b.TCPPort, b.PerfPort, tools)
}

// Stopped says, on w, that the responder stopped cleanly and how it went.
func (l *Log) Stopped(w io.Writer, up time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(w, "rdmactl serve: stopped after %s: %d clients, %d failed\n", up.Round(time.Second), l.clients, l.failed)
}

// StartHint names the fix for a listener that could not start.
func StartHint(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "another responder (rdmactl serve, rping -s, a demo server, ib_write_bw, ucmatose/udaddy/rdma_server) already listens there: stop it, or pick other ports with --port/--tcp-port/--perf-port/--tools-port/--ud-port (0 turns the last two off)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "-a must be an address of this host (see `ip -br addr`)"
	case errors.Is(err, syscall.ENODEV):
		return "no RDMA device carries that address: `rdmactl rxe add NETDEV` on its netdev, then check `rdmactl gids`"
	}
	return ""
}
