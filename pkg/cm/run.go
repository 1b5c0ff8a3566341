package cm

import "fmt"

// Tools are the emulated C tools, in the order `rdmactl cm` lists them.
var Tools = []string{"udaddy", "ucmatose", "rdma_server", "rdma_client", "mckey", "cmtime"}

// Run runs o.Tool. Its exit status is the C tool's (cli.ExitError).
func Run(o *Options) error {
	switch o.Tool {
	case "udaddy":
		return newNodeTest(o, "udaddy", true).run()
	case "ucmatose":
		return newNodeTest(o, "cmatose", false).run()
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
