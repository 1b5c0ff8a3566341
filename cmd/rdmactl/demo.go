package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/demo"
)

// DemoOptions is what `rdmactl demo` runs with.
type DemoOptions struct {
	demo.Options
}

func newCmdDemo(f *cli.Factory, runF func(*DemoOptions) error) *cobra.Command {
	var timeout time.Duration
	var advertiseRKey int64
	cmd := &cobra.Command{
		Use:   "demo [SERVER]",
		Short: "Run the RC verbs demo (RDMA_RC_example / ibv_demo): SEND, RDMA read and write over one QP",
		Long: `Run the RC verbs example of NVIDIA's RDMA programming manual (RDMA_RC_example.c,
often built as ibv_demo), printing what it prints and speaking its TCP exchange,
so either side may be the C program.

Without SERVER it waits for one client on the TCP port; with SERVER it connects.
The peers swap buffer address, rkey, QP number, LID and GID over TCP, connect an
RC QP, the server SENDs a message, the client RDMA-reads the server's buffer and
RDMA-writes into it.

On RoCE (link layer Ethernet) the QPs address each other by GID: give -g N, or
-g auto to take the RoCE v2 GID of the address the TCP connection uses.`,
		Example: `  rdmactl demo -d rxe0 -g 1              # server
  rdmactl demo 10.9.0.1 -d rxe0 -g 1     # client
  rdmactl demo 10.9.0.1 -d rxe0 -g auto`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return cli.Usagef("demo takes at most one SERVER, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := f.Config()
			if err != nil {
				return err
			}
			opts := &DemoOptions{Options: demo.Options{
				IO:           f.IO,
				RDMA:         f.RDMA(),
				Device:       v.GetString(cli.KeyDevice),
				DeviceSource: f.ValueSource(cmd, cli.KeyDevice),
				IBPort:       v.GetInt(cli.KeyIBPort),
				TCPPort:      v.GetInt(cli.KeyTCPPort),
				Timeout:      timeout,
				JSON:         f.JSON,
			}}
			opts.Counters = counterSource(f)
			if len(args) == 1 {
				opts.Server = args[0]
			}
			if err := parseGIDIndex(v.GetString(cli.KeyGIDIndex), &opts.Options); err != nil {
				return err
			}
			if opts.IBPort < 1 || opts.IBPort > 255 {
				return cli.Usagef("invalid --ib-port %d: ports are numbered 1 to 255", opts.IBPort)
			}
			if opts.TCPPort < 1 || opts.TCPPort > 65535 {
				return cli.Usagef("invalid --port %d: want a TCP port, 1 to 65535", opts.TCPPort)
			}
			if timeout <= 0 {
				return cli.Usagef("invalid --timeout %v: must be positive", timeout)
			}
			opts.Message, _ = cmd.Flags().GetString("send-message")
			if cmd.Flags().Changed("advertise-rkey") {
				rkey := uint32(advertiseRKey)
				opts.AdvertiseRKey = &rkey
			}
			if runF != nil {
				return runF(opts)
			}
			return runDemo(opts)
		},
	}
	cli.ReadsConfig(cmd, map[string]string{
		cli.KeyDevice:   "ib-dev",
		cli.KeyIBPort:   "ib-port",
		cli.KeyGIDIndex: "gid-idx",
		cli.KeyTCPPort:  "port",
	})
	fl := cmd.Flags()
	fl.StringP("ib-dev", "d", "", "RDMA device (default: the first one found)")
	fl.IntP("ib-port", "i", 1, "port of the RDMA device")
	fl.StringP("gid-idx", "g", "", `GID index for the GRH, or "auto" (default: none, no GRH)`)
	fl.IntP("port", "p", 19875, "TCP port to listen on or connect to")
	fl.DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the peer: for the client to connect, and at each exchange")
	// Test-only: let the lab's e2e tests make rdmactl stand in for peers
	// that behave otherwise (NVIDIA's 18-byte "SEDN operation",
	// a peer that sends a wrong rkey).
	fl.String("send-message", "", "test only: the message to SEND (and its size for every transfer)")
	fl.Int64Var(&advertiseRKey, "advertise-rkey", 0, "test only: send this rkey to the peer instead of the MR's")
	_ = fl.MarkHidden("send-message")
	_ = fl.MarkHidden("advertise-rkey")
	return cmd
}

// parseGIDIndex reads -g into the demo's options.
func parseGIDIndex(s string, o *demo.Options) error {
	index, auto, set, err := parseGIDFlag("--gid-idx", s)
	o.GIDAuto = auto
	if set {
		o.GRH, o.GIDIndex = true, index
	}
	return err
}

func runDemo(opts *DemoOptions) error {
	return demo.Run(context.Background(), &opts.Options)
}
