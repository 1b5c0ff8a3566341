package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/devinfo"
)

func newCmdDevices(f *cli.Factory, runF func(*devinfo.DevicesOptions) error) *cobra.Command {
	opts := &devinfo.DevicesOptions{}
	return &cobra.Command{
		Use:   "devices",
		Short: "List RDMA devices and their node GUIDs (ibv_devices)",
		Long:  "List RDMA devices and their node GUIDs exactly as ibv_devices does, or as JSON with --json.",
		Args:  wantArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.JSON
			opts.Source, opts.IO = f.RDMA(), f.IO
			if runF != nil {
				return runF(opts)
			}
			return devinfo.RunDevices(opts)
		},
	}
}
