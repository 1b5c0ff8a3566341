// Command rdmactl brings up and checks RDMA: rping, ibv_devinfo,
// ibv_devices, show_gids, Soft-RoCE setup and the RC verbs demo in one tool.
package main

import (
	"fmt"
	"os"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func main() {
	ios := cli.System()
	f := &cli.Factory{IO: ios, Version: buildVersion(),
		RDMA: func() rdma.Stack { return cgoverbs.Stack{} },
		Host: host.System,
	}
	root := newCmdRoot(f)
	err := root.Execute()
	if err != nil && !cli.IsSilent(err) {
		fmt.Fprintf(ios.ErrOut, "rdmactl: %v\n", err)
	}
	os.Exit(cli.ExitCode(err))
}
