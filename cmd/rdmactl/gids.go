package main

import (
	"context"
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/gids"
)

func newCmdGids(f *cli.Factory, runF func(*gids.Options) error) *cobra.Command {
	opts := &gids.Options{}
	cmd := &cobra.Command{
		Use:   "gids [DEV] [-d DEV] [-p PORT] [--ip ADDR]",
		Short: "List GIDs with their IP, RoCE version and netdev (show_gids)",
		Long: `List the populated GIDs of RDMA devices (of DEV only, given as show_gids takes
it or with -d) in the layout of show_gids (DEV PORT INDEX GID IPv4 VER DEV,
then n_gids_found=N), then name the GIDs to use, RoCE v2 with an IPv4
address, on standard error, so that standard output stays show_gids'.
With --ip, print only the index of the GID that carries ADDR: the GID index
(-g) to use on the host that has that address.`,
		Example: `  rdmactl gids
  rdmactl gids rxe0
  rdmactl gids -d rxe0 --ip 10.9.0.1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return cli.Usagef("gids takes at most one DEV, got %q (see '%s --help')", args, cmd.CommandPath())
			}
			if len(args) == 1 && cmd.Flags().Changed("ib-dev") && opts.Device != args[0] {
				return cli.Usagef("gids got two devices, %s and -d %s: give one", args[0], opts.Device)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := f.Config()
			if err != nil {
				return err
			}
			opts.Device = v.GetString(cli.KeyDevice)
			opts.DeviceSource = f.ValueSource(cmd, cli.KeyDevice)
			if len(args) == 1 {
				opts.Device, opts.DeviceSource = args[0], "the DEV operand"
			}
			opts.Port = v.GetString(cli.KeyIBPort)
			opts.JSON = f.JSON
			opts.Source, opts.IO = f.RDMA(), f.IO
			if runF != nil {
				return runF(opts)
			}
			return gids.Run(context.Background(), opts)
		},
	}
	cli.ReadsConfig(cmd, map[string]string{cli.KeyDevice: "ib-dev", cli.KeyIBPort: "ib-port"})
	fl := cmd.Flags()
	fl.StringVarP(&opts.Device, "ib-dev", "d", "", "list only device `DEV` (default: every device)")
	fl.StringVarP(&opts.Port, "ib-port", "p", "", "list only port `PORT` (default: every port)")
	fl.StringVar(&opts.IP, "ip", "", "print only the index of the GID that carries `ADDR`")
	return cmd
}
