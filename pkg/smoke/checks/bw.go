package checks

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/smoke"
)

// The write_bw check's load: perftest's default message size for a fixed
// time (-D), so that the check takes as long on a slow link (the
// two-host lab moves 4-7 MB/s) as on a fast one. Under the lab's TCG the
// data path notices the end late: the check takes 2-3 s there.
const (
	bwSize     = 65536
	bwDuration = time.Second
)

// writeBW runs perftest's write_bw client in-process against the peer's
// `rdmactl serve` (or ib_write_bw server) on the perftest port, over the
// device and port the route check found.
func (cfg Config) writeBW(ctx context.Context, r Route) smoke.Result {
	o := perf.Options{
		Test: perf.WriteBW, Server: r.Peer.String(), Device: r.Device, IBPort: r.Port, GIDAuto: true,
		Size: bwSize, Duration: bwDuration, TCPPort: cfg.PerfPort, Timeout: remainingOr(ctx, 2*time.Minute),
	}
	res, err := perf.Measure(o, cfg.RDMA)
	if err != nil {
		out := smoke.Result{Message: err.Error(), Hint: cli.HintOf(err)}
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, perf.ErrPeerClosed) || errors.Is(err, syscall.ECONNRESET) {
			out.Hint = fmt.Sprintf("nothing answered perftest's TCP port %d on %s: is `rdmactl serve` running there (systemctl status rdmactl-serve), a version that answers write_bw, and is the port open?", cfg.PerfPort, r.Peer)
		}
		return out
	}
	if len(res.Bandwidth) == 0 {
		return smoke.Result{Message: "write_bw measured nothing"}
	}
	row := res.Bandwidth[len(res.Bandwidth)-1]
	return smoke.Result{
		OK:      true,
		Message: fmt.Sprintf("%d RDMA writes of %d bytes (-D %v) to %s TCP port %d: %.2f MB/sec", row.Iters, row.Bytes, bwDuration.Seconds(), r.Peer, cfg.PerfPort, row.BWAvg),
		BW:      &smoke.BW{Bytes: row.Bytes, Iterations: row.Iters, AvgMBps: row.BWAvg, BytesPerSecond: row.BWAvg * (1 << 20)},
	}
}

// remainingOr is remaining(ctx), or d without a deadline.
func remainingOr(ctx context.Context, d time.Duration) time.Duration {
	if t := remaining(ctx); t > 0 {
		return t
	}
	return d
}
