package cm

import (
	"context"
	"fmt"
)

// Tools are the emulated C tools, in the order `rdmactl cm` lists them.
var Tools = []string{"udaddy", "ucmatose", "rdma_server", "rdma_client", "mckey", "cmtime"}

// Run runs o.Tool. Its exit status is the C tool's (cli.ExitError). When
// ctx ends, the run's waits end as a failure ("server shutting down");
// rdmactl's commands give a context that never ends, so that SIGINT keeps
// its default effect, as in the C tools.
func Run(ctx context.Context, o *Options) error {
	run := *o
	run.done = ctx.Done()
	o = &run
	switch o.Tool {
	case "udaddy", "ucmatose":
		return newToolTest(o).run()
	case "rdma_server":
		return runRDMAServer(o)
	case "rdma_client":
		return runRDMAClient(o)
	case "mckey":
		return runMckey(o)
	case "cmtime":
		return runCmtime(o)
	}
	return fmt.Errorf("unknown rdma_cm tool %q", o.Tool)
}
