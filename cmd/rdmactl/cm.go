package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cm"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func newCmdCM(f *cli.Factory, runF func(*cm.Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cm TOOL [flags]",
		Short: "The rdma_cm test tools: udaddy, ucmatose, rdma_server, rdma_client, mckey, cmtime",
		Long: `rdma-core's rdmacm-utils as subcommands: the same flags, the same lines on
stdout, the same exit codes, and the C tool may be the peer in either role.
Beyond them: --timeout ends a run whose peer or multicast never shows up,
a hint line on stderr names the likely cause of a failure, --json prints one
document per run (cmtime's table as numbers, with connections per second and
connect-time percentiles).`,
	}
	for _, tool := range cm.Tools {
		cmd.AddCommand(newCmdCMTool(f, tool, runF))
	}
	return cmd
}

var cmToolShort = map[string]string{
	"udaddy":      "udaddy: UD datagrams over rdma_cm (UDP port space), wire- and output-compatible with rdma-core's udaddy",
	"ucmatose":    "ucmatose: RC connections and sends over rdma_cm, compatible with rdma-core's ucmatose (prints \"cmatose:\")",
	"rdma_server": "rdma_server: the rdma_create_ep server (port 7471), compatible with rdma-core's rdma_server",
	"rdma_client": "rdma_client: the rdma_create_ep client (port 7471), compatible with rdma-core's rdma_client",
	"mckey":       "mckey: multicast join, send and receive over rdma_cm, compatible with rdma-core's mckey",
	"cmtime":      "cmtime: time rdma_cm connection setup step by step, compatible with rdma-core's cmtime",
}

func newCmdCMTool(f *cli.Factory, tool string, runF func(*cm.Options) error) *cobra.Command {
	o := &cm.Options{Tool: tool, Connections: 1, Count: 10, Size: 100, Port: "7471", PortSpace: rdma.PortSpaceTCP,
		Retries: 2, TimeoutMs: 2000}
	var tos, ack, ps, psName string
	cmd := &cobra.Command{
		Use:   tool + " [flags]",
		Short: cmToolShort[tool],
		Long: cmToolShort[tool] + `.

Without -s the tool is the server side, with -s ADDRESS the client (mckey:
-s makes the sender). Output lines and exit codes are the C tool's; --timeout,
the hint line and --json are rdmactl's.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if fl.Changed("tos") {
				o.SetTOS, o.TOS = true, uint8(cm.Strtol(tos))
			}
			if fl.Changed("ack-timeout") {
				o.SetAck, o.AckTimeout = true, uint8(cm.Strtol(ack))
			}
			switch {
			case tool == "udaddy" || tool == "mckey":
				o.PortSpace = rdma.PortSpaceUDP
				if fl.Changed("port-space") {
					o.PortSpace = rdma.PortSpace(int32(cm.Strtol(ps)))
				}
			}
			if fl.Changed("port-space-name") {
				o.PortSpace = portSpaceNamed(f, tool, psName, o.PortSpace)
			}
			if fl.Changed("unmapped") {
				o.Unmapped = true
			}
			if o.Timeout < 0 {
				return cli.Usagef("invalid --timeout %v: must not be negative", o.Timeout)
			}
			o.JSON = f.JSON
			o.IO = f.IO
			if f.RDMA != nil {
				o.CM = f.RDMA()
			}
			if runF != nil {
				return runF(o)
			}
			// The C tools keep SIGINT's default effect: a context no
			// signal cancels.
			return cm.Run(context.Background(), o)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintf(f.IO.ErrOut, "rdmactl cm %s: %v\n", tool, err)
		fmt.Fprint(f.IO.Out, cm.Usage(tool))
		return cli.SilentExit(1)
	})
	fl := cmd.Flags()
	fl.SortFlags = false
	atoi := func(p *int, name, short, usage string) { fl.VarP(atoiFlag{p}, name, short, usage) }
	str := func(p *string, name, short, def, usage string) { fl.StringVarP(p, name, short, def, usage) }
	switch tool {
	case "udaddy", "ucmatose":
		str(&o.Server, "server", "s", "", "server address to connect to (without: be the server)")
		str(&o.Bind, "bind", "b", "", "local address to bind")
		fl.StringP("address-format", "f", "", "address format: name, ip, ipv6 or gid (names and IP addresses are both taken)")
		atoi(&o.Connections, "connections", "c", "connections")
		atoi(&o.Count, "count", "C", "messages per connection")
		atoi(&o.Size, "size", "S", "message size")
		str(&tos, "tos", "t", "", "type of service")
		if tool == "udaddy" {
			str(&psName, "port-space-name", "P", "", "port space: udp or ipoib")
			str(&ps, "port-space", "p", "0x111", "port space number: 0x111 for UDP (default), 0x2 for IPOIB")
		} else {
			str(&psName, "port-space-name", "P", "", "port space: tcp or ib")
			str(&o.Port, "port", "p", "7471", "port number")
			fl.BoolVarP(&o.Migrate, "migrate", "m", false, "migrate the ids to a new event channel before disconnecting")
			str(&ack, "ack-timeout", "a", "", "local ACK timeout exponent")
		}
	case "rdma_server", "rdma_client":
		def := "0.0.0.0"
		if tool == "rdma_client" {
			def = "127.0.0.1"
		}
		str(&o.Server, "server", "s", def, "server address")
		str(&o.Port, "port", "p", "7471", "port number")
	case "mckey":
		str(&o.Group, "mcast", "m", "", "multicast address to join")
		fl.StringP("unmapped", "M", "", "unmapped multicast address (replaces -m, requires -b)")
		fl.BoolVarP(&o.Sender, "sender", "s", false, "send to the group (without: receive)")
		str(&o.Bind, "bind", "b", "", "local address to bind")
		atoi(&o.Connections, "connections", "c", "connections")
		atoi(&o.Count, "count", "C", "messages")
		atoi(&o.Size, "size", "S", "message size")
		str(&ps, "port-space", "p", "0x111", "port space: 0x111 for UDP (default), 0x2 for IPOIB")
		fl.BoolVarP(&o.SendOnly, "send-only", "o", false, "join as a send-only full member")
		fl.BoolVarP(&o.NoLoopback, "no-loopback", "l", false, "join without multicast loopback")
	case "cmtime":
		o.Connections = 100
		str(&o.Server, "server", "s", "", "server address to connect to (without: be the server)")
		str(&o.Bind, "bind", "b", "", "local address to bind")
		atoi(&o.Connections, "connections", "c", "connections (default 100)")
		str(&o.Port, "port", "p", "7471", "port number")
		atoi(&o.Retries, "retries", "r", "address and route resolution retries (default 2)")
		atoi(&o.TimeoutMs, "timeout-ms", "t", "resolution timeout in ms (default 2000)")
	}
	fl.DurationVar(&o.Timeout, "timeout", 0, "give up when the peer, an event or data does not come within this (0: never)")
	if tool == "mckey" {
		cmd.PreRun = func(cmd *cobra.Command, args []string) {
			if m := cmd.Flags().Lookup("unmapped"); m.Changed {
				o.Group = m.Value.String()
			}
		}
	}
	return cmd
}

// portSpaceNamed reads -P as the C tools do: a prefix match, and a warning
// (the default kept) for anything else.
func portSpaceNamed(f *cli.Factory, tool, name string, def rdma.PortSpace) rdma.PortSpace {
	lower := strings.ToLower(name)
	switch {
	case tool == "udaddy" && strings.HasPrefix(lower, "ipoib"):
		return rdma.PortSpaceIPoIB
	case tool == "udaddy" && strings.HasPrefix(lower, "udp"):
		return def
	case tool == "ucmatose" && strings.HasPrefix(lower, "ib"):
		return rdma.PortSpaceIB
	case tool == "ucmatose" && strings.HasPrefix(lower, "tcp"):
		return def
	}
	fmt.Fprintf(f.IO.ErrOut, "Warning: unknown port space format\n")
	return def
}
