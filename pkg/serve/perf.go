package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
)

// perfBufSize is perftest's largest message (-s 8388608, the last size of
// -a): the session's buffer takes any client's messages, whatever its -s.
const perfBufSize = 1 << 23

// perfSession answers one perftest write_bw client on c, whose version
// field opening starts (perfPortSession read those bytes, within the
// first-byte timeout, to tell its test). perftest's exchange does not say
// which test the client runs, so this port answers write_bw only. The
// rest of the version is read before anything else, so a client that
// stalls never takes the slot. One session runs at a time (they would
// share the link and skew each other's numbers): a client that arrives
// during one waits for it, at most the step timeout, and is then told the
// server is busy. The client's data moves over RDMA, with the TCP
// connection silent: its whole run, exchange included, must fit in the
// step timeout.
func (cfg Config) perfSession(ctx context.Context, c net.Conn, opening []byte, slot chan struct{}) Entry {
	version, err := readRest(c, opening, perf.VersionSize, "version", cfg.Timeout)
	if err != nil {
		return Entry{Error: "no perftest client: " + err.Error(), Hint: perfPortHint}
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
	res, err := perf.ServeConn(o, cfg.RDMA, replayConn{bound(c, cfg.Timeout), io.MultiReader(bytes.NewReader(version), c)})
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

// readRest reads the rest of a client's size-byte field (what it is),
// which opening starts, within timeout: the tools write their fields
// whole at once.
func readRest(c net.Conn, opening []byte, size int, what string, timeout time.Duration) ([]byte, error) {
	b := make([]byte, size)
	n := copy(b, opening)
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	if m, err := io.ReadFull(c, b[n:]); err != nil {
		return nil, fmt.Errorf("%d of the %d bytes of its %s arrived: %w", n+m, size, what, err)
	}
	return b, nil
}

// replayConn reads what was already read from the connection first.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
