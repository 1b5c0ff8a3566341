package cm

import (
	"bytes"
	"context"
	"io"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Probe runs the client side of udaddy or ucmatose (o.Tool) against
// o.Server, printing nothing, and says how it went (rdmactl smoke's --cm
// checks): Result's Event and Status are the rdma_cm event that failed
// it, when one did. When ctx ends, the run's waits end as a failure.
func Probe(ctx context.Context, o *Options) Result {
	var errOut bytes.Buffer
	run := *o
	run.IO, run.JSON, run.done = cli.Test(nil, io.Discard, &errOut), false, ctx.Done()
	t := newToolTest(&run)
	if err := t.run(); err == nil {
		return Result{OK: true, Messages: t.messages}
	}
	return failed(t.fail, t.fail.hint(o.Tool, o.Server), &errOut, o.Tool+" failed")
}
