package main

import (
	"context"
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/doctor"
)

func newCmdDoctor(f *cli.Factory, runF func(*doctor.Options) error) *cobra.Command {
	opts := &doctor.Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this host's RDMA set-up and say how to fix what is wrong",
		Long: "Check kernel modules, device nodes, userspace providers, port states, RoCE GIDs,\n" +
			"addresses without an RDMA device, firewall rules on UDP 4791 and the locked-memory\n" +
			"limit. Each check prints ok, warn or fail with the fix; the exit status is 1 when\n" +
			"any check fails.",
		Example: "  rdmactl doctor\n  rdmactl doctor --ip 192.168.1.5   # why does rping -a 192.168.1.5 fail?",
		Args:    wantArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.JSON
			opts.Host = f.Host()
			opts.Verbs = f.RDMA()
			if runF != nil {
				return runF(opts)
			}
			return doctor.Run(context.Background(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.IP, "ip", "", "check only this address (local, or a peer reached through the routing table)")
	cmd.Flags().BoolVar(&opts.DumpFacts, "facts", false, "print the facts the checks read, as JSON (for a bug report)")
	return cmd
}
