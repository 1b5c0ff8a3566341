package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pingpong"
)

// PingpongOptions is what `rdmactl pingpong` runs with.
type PingpongOptions struct {
	pingpong.Options
}

func newCmdPingpong(f *cli.Factory, runF func(*PingpongOptions) error) *cobra.Command {
	opts := &PingpongOptions{}
	o := &opts.Options
	var gid string
	cmd := &cobra.Command{
		Use:   "pingpong rc|uc|ud|srq [SERVER]",
		Short: "ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong: send/receive ping-pong over one QP type",
		Long: `Run the libibverbs example tests as one command, the QP type as its first
argument: rc (ibv_rc_pingpong), uc (ibv_uc_pingpong), ud (ibv_ud_pingpong) or
srq (ibv_srq_pingpong, RC QPs sharing one receive queue). Without SERVER this
side waits for a client on the TCP port; with SERVER it connects. Either side
may be the real tool: the TCP exchange is theirs, and so are the flags (with
their spellings and defaults), the output lines and the exit codes.

What the tools lack:
  -g auto     the RoCE v2 GID of the address the TCP connection uses.
  no -g on a RoCE port: the tools exchange a zero GID and then fail to move
              the QP to RTR (the client's "client read/write" failure);
              rdmactl stops before the exchange with one error line and a
              hint: line naming the GID index to give (exit 1).
  --timeout   bound every wait (accept, connect, exchange, each completion);
              the tools wait forever.
  --stats     after the tools' lines: latency percentiles (time between
              successive receives) and CPU time per iteration; the client
              validates the received buffers as -c does and says so.
  --json      one document instead of the lines (docs/json.md).
Everything else is the tool's behaviour byte for byte.`,
		Example: `  rdmactl pingpong rc -d rxe0 -g 1                 # server
  rdmactl pingpong rc -d rxe0 -g 1 10.9.0.1        # client
  rdmactl pingpong ud -d rxe0 -g auto --stats 10.9.0.1
  ibv_srq_pingpong -d rxe0 -g 1 &  rdmactl pingpong srq -d rxe0 -g 1 127.0.0.1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return cli.Usagef("pingpong takes the QP type (rc, uc, ud or srq) and an optional SERVER, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := pingpong.ParseKind(args[0])
			if err != nil {
				return cli.Usagef("%v", err)
			}
			o.Kind = k
			if len(args) == 2 {
				o.Server = args[1]
			}
			// A flag the emulated tool has not is its getopt's refusal.
			var foreign string
			cmd.Flags().Visit(func(fl *pflag.Flag) {
				short := fl.Shorthand
				if fl.Name == "dm" {
					short = "j"
				}
				if short != "" && short != "j" && !strings.Contains(k.Flags(), short) && foreign == "" {
					foreign = short
				}
				if fl.Name == "dm" && k != pingpong.RC && foreign == "" {
					foreign = "j"
				}
			})
			if foreign != "" {
				return pingpongUsage(f, k, fmt.Sprintf("%s: invalid option -- '%s'", k.Tool(), foreign))
			}
			if !cmd.Flags().Changed("size") {
				o.Size = k.DefaultSize()
			}
			if err := parsePingpongGID(gid, o); err != nil {
				return err
			}
			switch {
			case o.Port < 0 || o.Port > 65535, o.IBPort < 1:
				return pingpongUsage(f, k, "")
			case k != pingpong.UD && pingpongMTUInvalid(o.MTU):
				return pingpongUsage(f, k, "")
			case o.Timeout < 0:
				return cli.Usagef("invalid --timeout %v: must not be negative (0 waits forever, as the tools)", o.Timeout)
			}
			if o.ImplicitODP {
				o.ODP = true
			}
			o.JSON = f.JSON
			o.IO = f.IO
			if o.JSON || o.Stats {
				o.Counters = counterSource(f)
			}
			if f.RDMA != nil {
				stack := f.RDMA()
				o.Verbs, o.Lookup = stack, stack.LookupHost
			}
			if runF != nil {
				return runF(opts)
			}
			return pingpong.Run(context.Background(), o)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		k := pingpong.RC
		if args := c.Flags().Args(); len(args) > 0 {
			if kk, perr := pingpong.ParseKind(args[0]); perr == nil {
				k = kk
			}
		}
		return pingpongUsage(f, k, "rdmactl pingpong: "+err.Error())
	})
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.VarP(cint{&o.Port}, "port", "p", "listen on/connect to port <port>")
	fl.StringVarP(&o.Device, "ib-dev", "d", "", "use IB device <dev> (default first device found)")
	fl.VarP(cint{&o.IBPort}, "ib-port", "i", "use port <port> of IB device")
	fl.VarP(cint{&o.Size}, "size", "s", "size of message to exchange (default 4096; ud: 1024, at most the port's MTU)")
	fl.VarP(cint{&o.MTU}, "mtu", "m", "path MTU: 256, 512, 1024, 2048 or 4096 (rc, uc, srq)")
	fl.VarP(cint{&o.NumQP}, "num-qp", "q", "number of QPs to use (srq)")
	fl.VarP(cint{&o.RxDepth}, "rx-depth", "r", "number of receives to post at a time")
	fl.VarP(cint{&o.Iters}, "iters", "n", "number of exchanges")
	fl.VarP(cint{&o.SL}, "sl", "l", "service level value")
	fl.BoolVarP(&o.Events, "events", "e", false, "sleep on CQ events (default poll)")
	fl.StringVarP(&gid, "gid-idx", "g", "", `local port gid index, or "auto": the RoCE v2 GID of the TCP connection's address`)
	fl.BoolVarP(&o.ODP, "odp", "o", false, "use on demand paging (rc, srq)")
	fl.BoolVarP(&o.ImplicitODP, "iodp", "O", false, "use implicit on demand paging (rc)")
	fl.BoolVarP(&o.Prefetch, "prefetch", "P", false, "prefetch an ODP MR (rc)")
	fl.BoolVarP(&o.Timestamps, "ts", "t", false, "get CQE with timestamp (rc)")
	fl.BoolVarP(&o.Check, "chk", "c", false, "validate received buffer")
	// -j is rdmactl's --json everywhere: device memory is --dm only.
	fl.BoolVar(&o.DeviceMemory, "dm", false, "use device memory (rc; the tool's -j)")
	fl.BoolVarP(&o.NewSend, "new_send", "N", false, "use new post send WR API (rc; rdmactl posts the same work requests either way)")
	fl.DurationVar(&o.Timeout, "timeout", 0, "give up when one wait (accept, connect, exchange, a completion) takes longer (0: never, as the tools)")
	fl.BoolVar(&o.Stats, "stats", false, "print latency percentiles and CPU time per iteration; validate received buffers")
	o.Port, o.IBPort, o.MTU, o.NumQP = pingpong.DefaultPort, 1, pingpong.DefaultMTU, pingpong.DefaultNumQP
	o.RxDepth, o.Iters = pingpong.DefaultRxDepth, pingpong.DefaultIters
	return cmd
}

// pingpongUsage is the tool's refusal: its usage on stdout, exit 1.
func pingpongUsage(f *cli.Factory, k pingpong.Kind, line string) error {
	if line != "" {
		fmt.Fprintln(f.IO.ErrOut, line)
	}
	fmt.Fprint(f.IO.Out, k.Usage("rdmactl pingpong "+k.String()))
	return cli.SilentExit(cli.ExitFailed)
}

func pingpongMTUInvalid(mtu int) bool {
	switch mtu {
	case 256, 512, 1024, 2048, 4096:
		return false
	}
	return true
}

// parsePingpongGID reads -g: empty for none, "auto", or a number as the
// tools' strtol reads it (a negative one is none).
func parsePingpongGID(s string, o *pingpong.Options) error {
	o.GIDIndex = -1
	switch {
	case s == "":
	case strings.EqualFold(strings.TrimSpace(s), "auto"):
		o.GIDAuto = true
	default:
		o.GIDIndex = int(strtol(s))
	}
	return nil
}

// cint is an int flag read as the C tools' strtol(optarg, NULL, 0) reads
// it: an optional sign, a 0x or 0 prefix for hex or octal, digits up to
// the first that is not one, 0 when there are none.
type cint struct{ p *int }

func (c cint) String() string {
	if c.p == nil {
		return "0"
	}
	return strconv.Itoa(*c.p)
}
func (c cint) Set(s string) error { *c.p = int(strtol(s)); return nil }
func (cint) Type() string         { return "int" }

func strtol(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := int64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isDigit(s[2], 16):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
	}
	var v int64
	for i := 0; i < len(s) && isDigit(s[i], base); i++ {
		d, _ := strconv.ParseInt(s[i:i+1], 16, 64)
		if v > (1<<62)/base {
			v = 1<<63 - 1
			break
		}
		v = v*base + d
	}
	if neg {
		return -v
	}
	return v
}

func isDigit(c byte, base int64) bool {
	d, err := strconv.ParseInt(string(c), 16, 64)
	return err == nil && d < base
}
