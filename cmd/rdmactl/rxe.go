package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rxe"
)

func newCmdRxe(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rxe",
		Short: "Add, remove and list Soft-RoCE (rdma_rxe) devices",
		Long: "Soft-RoCE turns any Ethernet netdev into an RDMA device. These commands replace\n" +
			"rxe_cfg and `rdma link add NAME type rxe netdev NETDEV`.",
	}
	cmd.AddCommand(
		newCmdRxeAdd(f, nil),
		newCmdRxeRemove(f, nil),
		newCmdRxeStatus(f, nil),
		newCmdRxeApply(f, nil),
	)
	return cmd
}

func newCmdRxeAdd(f *cli.Factory, runF func(*rxe.AddOptions) error) *cobra.Command {
	opts := &rxe.AddOptions{IO: f.IO}
	var persist bool
	cmd := &cobra.Command{
		Use:   "add NETDEV",
		Short: "Create a Soft-RoCE device on NETDEV (loads rdma_rxe when needed)",
		Long: "Create a Soft-RoCE device on NETDEV, named rxe_NETDEV unless --name is given,\n" +
			"wait until its port is ACTIVE and print its GIDs and the GID index to use.\n" +
			"An rxe device already on NETDEV is reported and left as it is.",
		Example: "  rdmactl rxe add eth0\n  rdmactl rxe add eth0 --name rxe0",
		Args:    wantArgs(1, "NETDEV"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Netdev = args[0]
			opts.JSON = f.JSON
			opts.Host = f.Host()
			if runF != nil {
				return runF(opts)
			}
			if persist {
				return rxe.AddPersistent(opts, "")
			}
			return rxe.Add(opts)
		},
	}
	cmd.Flags().BoolVar(&persist, "persist", false, "also record the link in "+rxe.ConfPath+" so that 'rdmactl rxe apply' re-creates it at boot")
	cmd.Flags().StringVar(&opts.Name, "name", "", "name of the new RDMA device (default rxe_NETDEV)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", rxe.DefaultTimeout, "how long to wait for the port to become ACTIVE")
	return cmd
}

func newCmdRxeRemove(f *cli.Factory, runF func(*rxe.RemoveOptions) error) *cobra.Command {
	opts := &rxe.RemoveOptions{IO: f.IO}
	var persist bool
	cmd := &cobra.Command{
		Use:     "remove NAME|NETDEV",
		Aliases: []string{"rm", "delete"},
		Short:   "Delete a Soft-RoCE device, by its name or its netdev's",
		Args:    wantArgs(1, "NAME|NETDEV"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			opts.JSON = f.JSON
			opts.Host = f.Host()
			if runF != nil {
				return runF(opts)
			}
			if persist {
				return rxe.RemovePersistent(opts, "")
			}
			return rxe.Remove(opts)
		},
	}
	cmd.Flags().BoolVar(&persist, "persist", false, "also drop the link from "+rxe.ConfPath)
	return cmd
}

func newCmdRxeStatus(f *cli.Factory, runF func(*rxe.StatusOptions) error) *cobra.Command {
	opts := &rxe.StatusOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "status",
		Short: "List netdevs with their Soft-RoCE devices, link state and MTUs",
		Args:  wantArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.JSON
			opts.Host = f.Host()
			if runF != nil {
				return runF(opts)
			}
			return rxe.Status(opts)
		},
	}
}
