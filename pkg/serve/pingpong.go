package serve

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pingpong"
)

// pingpongHint is what serve's pingpong side supports.
var pingpongHint = fmt.Sprintf("serve answers ibv_rc_pingpong clients of any -n and of -s up to %d (1 MiB), RC, with -m %d (the tool's default): run the client with -g of its RoCE v2 GID", pingpong.MaxAnswerSize, pingpong.DefaultMTU)

// pingpongSession answers one ibv_rc_pingpong client on c as the tool's
// server, on the device that carries the address the client reached, its
// GID chosen as -g auto. The tool's exchange carries no -s or -n: each
// message is answered with one of its size until the client falls
// silent. It sleeps on completion events (a responder must not spin a CPU
// per client) and, like the other sessions, ends within the step timeout
// as a whole.
func (cfg Config) pingpongSession(ctx context.Context, c net.Conn) Entry {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	o := &pingpong.Options{
		Verbs: cfg.RDMA, Kind: pingpong.RC, MTU: pingpong.DefaultMTU, RxDepth: pingpong.DefaultRxDepth,
		GIDIndex: -1, GIDAuto: true, Events: true, AnySizeAndCount: true, Timeout: cfg.Timeout,
	}
	o.Device, o.IBPort = cfg.deviceFor(c)
	doc := pingpong.Answer(ctx, o, sessionConn{bound(c, cfg.Timeout)})
	e := Entry{Test: TestPingpongRC, OK: doc.OK}
	if doc.OK {
		e.RoundTrips = &RoundTrips{Count: doc.Iters, Bytes: doc.Size}
		return e
	}
	e.Error, e.Hint = "failed", pingpongHint
	if doc.Error != nil {
		e.Error = doc.Error.Message
		if doc.Error.Hint != "" {
			e.Hint = doc.Error.Hint
		}
	}
	if ctx.Err() == context.DeadlineExceeded {
		e.Error = fmt.Sprintf("the session ran for all of serve's --timeout (%v): %s", cfg.Timeout, e.Error)
		e.Hint = "the client's whole run, and the silence after it by which serve knows it ended (2s or more), must fit in serve's --timeout: raise it for longer runs"
	}
	return e
}

// readRecord reads the rest of a pingpong client's address record, which
// opening starts, within timeout, and checks it: the tool's client writes
// it whole at once.
func readRecord(c net.Conn, opening []byte, timeout time.Duration) ([]byte, error) {
	b, err := readRest(c, opening, pingpong.RecordSize, "pingpong address record", timeout)
	if err != nil {
		return nil, err
	}
	if _, err := pingpong.ParseRecord(b); err != nil {
		return nil, fmt.Errorf("no pingpong address record: %w", err)
	}
	return b, nil
}
