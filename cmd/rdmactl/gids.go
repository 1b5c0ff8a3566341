package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/gids"
)

func newCmdGids(f *cli.Factory, runF func(*gids.Options) error) *cobra.Command {
	opts := &gids.Options{}
	cmd := &cobra.Command{
		Use:   "gids [-d DEV] [-p PORT] [--ip ADDR]",
		Short: "List GIDs with their IP, RoCE version and netdev (show_gids)",
		Long: `List the populated GIDs of RDMA devices in the layout of show_gids (DEV PORT
INDEX GID IPv4 VER DEV), then name the GIDs to use: RoCE v2 with an IPv4
address. With --ip, print only the index of the GID that carries ADDR: the
GID index (-g) to use on the host that has that address.`,
		Example: `  rdmactl gids
  rdmactl gids -d rxe0 --ip 10.9.0.1`,
		Args: wantArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := f.BindFlags(cmd.Flags(), map[string]string{cli.KeyDevice: "ib-dev", cli.KeyIBPort: "ib-port"})
			if err != nil {
				return err
			}
			opts.Device = v.GetString(cli.KeyDevice)
			opts.Port = v.GetString(cli.KeyIBPort)
			opts.JSON = f.JSON
			opts.Source, opts.IO = f.RDMA(), f.IO
			if runF != nil {
				return runF(opts)
			}
			return gids.Run(*opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Device, "ib-dev", "d", "", "list only device `DEV` (default: every device)")
	fl.StringVarP(&opts.Port, "ib-port", "p", "", "list only port `PORT` (default: every port)")
	fl.StringVar(&opts.IP, "ip", "", "print only the index of the GID that carries `ADDR`")
	return cmd
}
