package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/devinfo"
)

// devinfoUsageExit is ibv_devinfo's exit status for a bad option.
const devinfoUsageExit = 255

func newCmdDevinfo(f *cli.Factory, runF func(*devinfo.Options) error) *cobra.Command {
	opts := &devinfo.Options{}
	cmd := &cobra.Command{
		Use:   "devinfo [-d DEV] [-i PORT] [-l] [-v]",
		Short: "Show RDMA device and port attributes (ibv_devinfo)",
		Long: `Show the attributes of RDMA devices and their ports, exactly as ibv_devinfo
prints them (same output, messages and exit codes), or as JSON with --json.`,
		Example: `  rdmactl devinfo -d rxe0 -v
  rdmactl devinfo -l
  rdmactl devinfo --json -d rxe0`,
		Args: wantArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			// ibv_devinfo reads no environment or config: neither does
			// its emulation (RDMACTL_DEVICE must not hide devices).
			opts.JSON = f.JSON
			opts.Named = cmd.Flags().Changed("ib-dev")
			opts.Source, opts.IO = f.RDMA(), f.IO
			if runF != nil {
				return runF(opts)
			}
			return devinfo.Run(context.Background(), opts)
		},
	}
	// ibv_devinfo exits 255 on an option it does not know (getopt, then
	// usage, then return -1); scripts may test for it.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if f.JSON {
			return cli.Usagef("%v (see '%s --help')", err, c.CommandPath())
		}
		fmt.Fprintf(f.IO.ErrOut, "rdmactl devinfo: %v\n", err)
		fmt.Fprint(f.IO.Out, c.UsageString())
		return cli.SilentExit(devinfoUsageExit)
	})
	fl := cmd.Flags()
	fl.StringVarP(&opts.Device, "ib-dev", "d", "", "show only device `DEV` (default: every device)")
	fl.StringVarP(&opts.Port, "ib-port", "i", "", "show only port `PORT` of the device (default: every port)")
	fl.BoolVarP(&opts.List, "list", "l", false, "print only the device names")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "print all attributes, GIDs included")
	return cmd
}
