package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rxe"
)

func newCmdRxeApply(f *cli.Factory, runF func(*rxe.ApplyOptions) error) *cobra.Command {
	opts := &rxe.ApplyOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Create every Soft-RoCE link recorded with --persist that is missing",
		Long: "Create every Soft-RoCE link recorded in " + rxe.ConfPath + " (by rxe add --persist)\n" +
			"that does not exist, waiting up to --wait for its netdev to appear. Links already\n" +
			"there are left alone, so running it again changes nothing. rdmactl-rxe.service\n" +
			"runs it at boot, after network-online.target.",
		Args: wantArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.JSON
			opts.Host = f.Host()
			if runF != nil {
				return runF(opts)
			}
			return rxe.Apply(opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Wait, "wait", rxe.DefaultApplyWait, "how long to wait for a recorded netdev to appear (0: look once)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", rxe.DefaultTimeout, "how long to wait for each new port to become ACTIVE")
	return cmd
}
