package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
)

// perfBufSize is perftest's largest message (-s 8388608, the last size of
// -a): the session's buffer takes any client's messages, whatever its -s.
const perfBufSize = 1 << 23

// perfSession answers one perftest write_bw client on c. perftest's
// exchange does not say which test the client runs, so this port answers
// write_bw only. The client opens with its version, which is read (first
// byte within the first-byte timeout) before anything else, so a silent
// or garbage connection never takes the slot. One session runs at a time
// (they would share the link and skew each other's numbers): a client
// that arrives during one waits for it, at most the step timeout, and is
// then told the server is busy. The client's data moves over RDMA, with
// the TCP connection silent: its whole run, exchange included, must fit
// in the step timeout.
func (cfg Config) perfSession(ctx context.Context, c net.Conn, slot chan struct{}) Entry {
	opening, err := readOpening(c, cfg.FirstByte, cfg.Timeout)
	if err != nil {
		return Entry{Error: "no perftest client: " + err.Error(),
			Hint: "this port answers perftest's write_bw clients (ib_write_bw HOST, rdmactl smoke --bw)"}
	}
	wait := time.NewTimer(cfg.Timeout)
	defer wait.Stop()
	select {
	case slot <- struct{}{}:
		defer func() { <-slot }()
	case <-wait.C:
		_ = perf.AnswerBusy(c, cfg.FirstByte)
		return Entry{Error: fmt.Sprintf("busy: another write_bw session ran for all of %v", cfg.Timeout),
			Hint: "serve runs one write_bw session at a time: retry when the other client is done"}
	case <-ctx.Done():
		return Entry{Error: "waited for another write_bw session"}
	}
	o := perf.Options{Test: perf.WriteBW, GIDAuto: true, Size: perfBufSize, Timeout: cfg.Timeout}
	o.Device, o.IBPort = cfg.deviceFor(c)
	res, err := perf.ServeConn(o, cfg.RDMA, replayConn{bound(c, cfg.Timeout), io.MultiReader(bytes.NewReader(opening), c)})
	if err != nil {
		e := Entry{Error: err.Error(), Hint: cli.HintOf(err)}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			e.Hint = fmt.Sprintf("a write_bw client's whole run must fit in serve's --timeout (%v): raise it for long -D or -a runs", cfg.Timeout)
		}
		return e
	}
	e := Entry{OK: true}
	if n := len(res.Bandwidth); n > 0 {
		row := res.Bandwidth[n-1]
		e.BW = &BW{Bytes: row.Bytes, Iterations: row.Iters, AvgMBps: row.BWAvg}
	}
	return e
}

// readOpening reads a perftest client's version field: its first byte
// within firstByte, all of it within timeout. A version starts with a
// digit; anything else is not perftest.
func readOpening(c net.Conn, firstByte, timeout time.Duration) ([]byte, error) {
	begin := time.Now()
	b := make([]byte, perf.VersionSize)
	_ = c.SetReadDeadline(begin.Add(min(firstByte, timeout)))
	n, err := c.Read(b)
	if err == nil && n > 0 && (b[0] < '0' || b[0] > '9') {
		return nil, fmt.Errorf("its first bytes %q are no perftest version", b[:n])
	}
	if err == nil && n < len(b) {
		_ = c.SetReadDeadline(begin.Add(timeout))
		var m int
		m, err = io.ReadFull(c, b[n:])
		n += m
	}
	_ = c.SetReadDeadline(time.Time{})
	switch {
	case n == 0 && errors.Is(err, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("nothing arrived within %v", min(firstByte, timeout))
	case err != nil:
		return nil, fmt.Errorf("%d of its %d-byte version arrived: %w", n, len(b), err)
	}
	return b, nil
}

// replayConn reads what was already read from the connection first.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
