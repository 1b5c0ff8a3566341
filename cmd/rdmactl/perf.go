package main

import (
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// PerfOptions is what `rdmactl perf` runs with.
type PerfOptions struct {
	IO   *cli.IOStreams
	RDMA func() rdma.Stack
	perf.Options
}

func newCmdPerf(f *cli.Factory, runF func(*PerfOptions) error) *cobra.Command {
	var (
		gid      string
		mtu      int
		duration int64
		cpuFreq  bool
	)
	opts := &PerfOptions{IO: f.IO, RDMA: f.RDMA}
	cmd := &cobra.Command{
		Use:   "perf TEST [SERVER]",
		Short: "Bandwidth and latency tests that speak perftest's protocol (ib_write_bw, ib_send_lat, …)",
		Long: `Run one of perftest's everyday tests: ` + strings.Join(perf.TestNames(), ", ") + `
(ib_write_bw without the "ib_"). Without SERVER this side waits for a client on
the TCP port (18515, as perftest); with SERVER it connects. Either side may be
the real perftest: the out-of-band exchange is the one perftest 6.06 speaks,
and the result tables are printed as perftest prints them.

Flags keep perftest's spellings and meanings. -x auto picks the RoCE v2 GID
of the address the TCP connection uses. Latency tests sleep on a completion
channel between messages by default (fair to small VMs); --busy-poll spins
as perftest does. --json prints every number plus the CPU time per iteration.`,
		Example: `  rdmactl perf write_bw -d rxe0 -x 1                 # server
  rdmactl perf write_bw -d rxe0 -x 1 10.9.0.1        # client
  rdmactl perf send_lat -d rxe0 -x auto --busy-poll 10.9.0.1
  ib_write_bw -d rxe0 -x 1 &  rdmactl perf write_bw -d rxe0 -x 1 127.0.0.1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return cli.Usagef("perf takes TEST and an optional SERVER, got %q (TEST is one of %s)", args, strings.Join(perf.TestNames(), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := perf.ParseTest(args[0])
			if err != nil {
				return cli.Usagef("%v", err)
			}
			opts.Test = t
			if len(args) == 2 {
				opts.Server = args[1]
			}
			if err := parsePerfGID(gid, &opts.Options); err != nil {
				return err
			}
			opts.MTU = mtu
			opts.JSON = f.JSON
			for flag, v := range map[string]int{"size": opts.Size, "iters": opts.Iters, "tx-depth": opts.TxDepth, "qp": opts.QPs, "rx-depth": opts.RxDepth} {
				if v == 0 && cmd.Flags().Changed(flag) {
					return cli.Failf("%v", perf.RefuseGivenZero("-"+cmd.Flags().Lookup(flag).Shorthand))
				}
			}
			if cmd.Flags().Changed("duration") {
				if opts.Duration, err = perf.DurationOf(duration); err != nil {
					return cli.Failf("%v", err)
				}
			}
			if opts.IBPort < 1 {
				return cli.Failf("-i %d: IB Port can't be less than 1", opts.IBPort)
			}
			if opts.IBPort > 255 {
				return cli.Usagef("invalid -i %d: ports are numbered 1 to 255", opts.IBPort)
			}
			if opts.TCPPort < 1 || opts.TCPPort > 65535 {
				return cli.Usagef("invalid -p %d: want a TCP port, 1 to 65535", opts.TCPPort)
			}
			if opts.Timeout <= 0 {
				return cli.Usagef("invalid --timeout %v: must be positive", opts.Timeout)
			}
			if runF != nil {
				return runF(opts)
			}
			return runPerf(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Device, "ib-dev", "d", "", "RDMA device (default: the first one found)")
	fl.IntVarP(&opts.IBPort, "ib-port", "i", 1, "port of the RDMA device")
	fl.StringVarP(&gid, "gid-index", "x", "", `GID index, or "auto" (default: none on InfiniBand; on Ethernet perftest's choice)`)
	fl.IntVarP(&opts.Size, "size", "s", 0, "message size in bytes (default 65536 for BW tests, 2 for latency)")
	fl.BoolVarP(&opts.All, "all", "a", false, "run all message sizes from 2 to 2^23")
	fl.IntVarP(&opts.Iters, "iters", "n", 0, "iterations (default 5000 for write_bw, 1000 otherwise)")
	fl.Int64VarP(&duration, "duration", "D", 0, "run for this many seconds instead of -n iterations")
	fl.IntVarP(&opts.TCPPort, "port", "p", perf.DefaultTCPPort, "TCP port of the out-of-band exchange")
	fl.IntVarP(&opts.QPs, "qp", "q", 1, "number of QPs (bandwidth tests: 1 to 16)")
	fl.IntVarP(&opts.TxDepth, "tx-depth", "t", 0, "send queue depth (default 128 for BW tests, 1 for latency)")
	fl.IntVarP(&opts.RxDepth, "rx-depth", "r", 0, "receive queue depth of the send tests, 1 to 16384 (default 512)")
	fl.IntVarP(&mtu, "mtu", "m", 0, "path MTU in bytes: 256 … 4096 (default: the port's active MTU)")
	fl.BoolVarP(&cpuFreq, "CPU-freq", "F", false, "accepted for perftest compatibility (rdmactl times with the monotonic clock)")
	fl.BoolVar(&opts.Gbits, "report_gbits", false, "report bandwidth in Gb/sec instead of MB/sec")
	fl.BoolVarP(&opts.RDMACM, "rdma_cm", "R", false, "exchange and connect the QPs over rdma_cm, as perftest -R (the client gives the server's IPv4 address)")
	fl.BoolVar(&opts.BusyPoll, "busy-poll", false, "latency tests spin on the completion queue, as perftest does")
	fl.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "how long to wait for the peer at each step")
	return cmd
}

// refusalExit gives perftest's refusals its exit code, 1.
func refusalExit(err error) error {
	var refused *perf.Refusal
	if errors.As(err, &refused) {
		return cli.Failf("%v", err)
	}
	return err
}

// parsePerfGID reads -x: empty for perftest's default (no GID), "auto",
// or an index.
func parsePerfGID(s string, o *perf.Options) error {
	index, auto, set, err := parseGIDFlag("-x", s)
	o.GIDIndex, o.GIDAuto = -1, auto
	if set {
		o.GIDIndex = index
	}
	return err
}

func runPerf(opts *PerfOptions) error {
	err := refusalExit(perf.Run(opts.Options, opts.RDMA(), opts.IO.Out, opts.IO.ErrOut))
	var usage *perf.UsageError
	if errors.As(err, &usage) {
		return cli.Usagef("%v", usage.Err)
	}
	var h *perf.HintedError
	if errors.As(err, &h) {
		// main prints it ("rdmactl: …" and "hint: …") and, with --json,
		// puts both in the error document.
		return cli.WithHint(cli.Failf("%v", err), h.Hint)
	}
	return err
}
