package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rdmactl/rdmactl/pkg/perf"
)

// perfBufSize is perftest's largest message (-s 8388608, the last size of
// -a): the session's buffer takes any client's messages, whatever its -s.
const perfBufSize = 1 << 23

// perfSession answers one perftest write_bw client on c. perftest's
// exchange does not say which test the client runs, so this port answers
// write_bw only. One session runs at a time (they would share the link and
// skew each other's numbers): a client that arrives during one waits for
// it, at most the step timeout, and is then dropped with a log line. The
// client's data moves over RDMA, with the TCP connection silent: its whole
// run must fit in the step timeout too.
func (cfg Config) perfSession(ctx context.Context, c net.Conn, slot chan struct{}) Entry {
	wait := time.NewTimer(cfg.Timeout)
	defer wait.Stop()
	select {
	case slot <- struct{}{}:
		defer func() { <-slot }()
	case <-wait.C:
		return Entry{Error: fmt.Sprintf("busy: another write_bw session ran for all of %v", cfg.Timeout),
			Hint: "serve runs one write_bw session at a time: retry when the other client is done"}
	case <-ctx.Done():
		return Entry{Error: "waited for another write_bw session"}
	}
	o := perf.Options{Test: perf.WriteBW, GIDAuto: true, Size: perfBufSize, Timeout: cfg.Timeout}
	o.Device, o.IBPort = cfg.deviceFor(c)
	res, err := perf.ServeConn(o, cfg.RDMA, c)
	if err != nil {
		e := Entry{Error: err.Error()}
		var he *perf.HintedError
		if errors.As(err, &he) {
			e.Hint = he.Hint
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
