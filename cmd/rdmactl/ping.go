package main

import (
	"context"
	"fmt"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
)

// rpingUsageExit is rping's exit code for bad options (EINVAL).
const rpingUsageExit = int(syscall.EINVAL)

func newCmdPing(f *cli.Factory, runF func(*ping.Options) error) *cobra.Command {
	opts := &ping.Options{Size: ping.DefaultSize}
	var busyPoll, noSpin bool
	cmd := &cobra.Command{
		Use:   "ping -s|-c [-vVdPq] [-S size] [-C count] [-a addr] [-I addr] [-p port]",
		Short: "rping: RDMA ping-pong over rdma_cm, wire- and output-compatible with rdma-core's rping",
		Long: `Ping over an RDMA connection as rdma-core's rping does, so that either side may
be the real rping: the client advertises a buffer, the server RDMA-reads it and
RDMA-writes it back, COUNT times. Output and exit codes are rping's.

Beyond rping: --stats prints each round-trip time and a summary (min, avg,
max, mdev, p50/p90/p99/p99.9 from a fixed-size histogram, so -C 0 runs in
constant memory, and the CPU time per iteration, user + sys from getrusage),
--json prints the same as one JSON document (client), and --timeout bounds address
resolution, connecting and each ping, so that an absent peer is an error
rather than a hang. On failure a one-line hint names the likely cause.`,
		Example: `  rdmactl ping -s -a 10.9.0.1 -v -C 3      # server
  rdmactl ping -c -a 10.9.0.1 -v -C 3      # client
  rdmactl ping -c -a 10.9.0.1 -C 1000 --stats --timeout 5s`,
		// rping's getopt leaves operands alone and rping never reads
		// them: `rping -s 10.9.0.1` listens on every address. So do we.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Mode == ping.ModeUnset {
				return pingUsage(cmd, f, "give -s (server) or -c (client)")
			}
			// rping's surface takes its flags only: no RDMACTL_* variable
			// or config key changes what an rping command line does.
			opts.Port = ping.Atoi(cmd.Flags().Lookup("port").Value.String())
			opts.AddrGiven = cmd.Flags().Changed("addr")
			if opts.Timeout < 0 {
				return cli.Usagef("invalid --timeout %v: must not be negative", opts.Timeout)
			}
			switch {
			case busyPoll && noSpin:
				return pingUsage(cmd, f, "give one of --busy-poll and --no-spin, not both")
			case busyPoll:
				opts.Wait = pollwait.BusyPoll
			case noSpin:
				opts.Wait = pollwait.NoSpin
			}
			opts.JSON = f.JSON
			opts.IO = f.IO
			if f.RDMA != nil {
				opts.CM = f.RDMA()
			}
			opts.Counters = counterSource(f)
			if runF != nil {
				return runF(opts)
			}
			// Only the runs that end cleanly on SIGINT/SIGTERM catch
			// them; the others keep their default effect, as in rping.
			ctx := context.Background()
			if opts.EndsOnInterrupt() {
				var stop context.CancelFunc
				ctx, stop = f.Interrupted()
				defer stop()
			}
			return ping.Run(ctx, opts)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return pingUsage(c, f, err.Error())
	})

	fl := cmd.Flags()
	fl.SortFlags = false
	// As in rping's getopt loop, the last of -s and -c given wins.
	fl.VarPF(modeFlag{&opts.Mode, ping.ModeServer}, "server", "s", "server side (to listen on any IPv6 address use -a ::0)").NoOptDefVal = "true"
	fl.VarPF(modeFlag{&opts.Mode, ping.ModeClient}, "client", "c", "client side").NoOptDefVal = "true"
	fl.StringVarP(&opts.Addr, "addr", "a", "", "address: to listen on (server) or to connect to (client)")
	fl.StringVarP(&opts.Source, "source", "I", "", "source address to bind to (client)")
	fl.StringP("port", "p", strconv.Itoa(ping.DefaultPort), "rdma_cm port")
	fl.VarP(atoiFlag{&opts.Count}, "count", "C", "ping count times (0 or absent: until interrupted)")
	fl.VarP(atoiFlag{&opts.Size}, "size", "S", fmt.Sprintf("ping data size, %d to %d", ping.MinSize, ping.MaxSize))
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "display ping data to stdout")
	fl.BoolVarP(&opts.Validate, "validate", "V", false, "validate ping data")
	fl.BoolVarP(&opts.Debug, "debug", "d", false, "debug printfs")
	fl.BoolVarP(&opts.Persistent, "persistent", "P", false, "persistent server mode allowing multiple connections")
	fl.BoolVarP(&opts.SelfQP, "self-qp", "q", false, "use a self-created, self-modified QP")
	fl.BoolVar(&opts.Stats, "stats", false, "print each round-trip time and a summary (client)")
	fl.DurationVar(&opts.Timeout, "timeout", 0, "give up when resolution, connecting or one ping takes longer (0: never)")
	fl.BoolVar(&busyPoll, "busy-poll", false, "always poll for completions: lowest latency, one CPU kept busy")
	fl.BoolVar(&noSpin, "no-spin", false, "never poll for completions, always sleep until one arrives (as rping)")
	return cmd
}

// pingUsage reports bad options as rping does: usage on stdout, exit
// status EINVAL; rdmactl adds the reason on stderr. With --json the
// reason goes into the error document instead, with rping's code.
func pingUsage(cmd *cobra.Command, f *cli.Factory, reason string) error {
	if f.JSON {
		return &cli.ExitError{Code: rpingUsageExit, Err: fmt.Errorf("%s (see '%s --help')", reason, cmd.CommandPath())}
	}
	fmt.Fprintf(f.IO.ErrOut, "rdmactl ping: %s\n", reason)
	fmt.Fprint(f.IO.Out, cmd.UsageString())
	return cli.SilentExit(rpingUsageExit)
}

// modeFlag is -s or -c: a bool flag that, set, makes its mode the run's.
type modeFlag struct {
	mode *ping.Mode
	is   ping.Mode
}

func (m modeFlag) String() string { return strconv.FormatBool(m.mode != nil && *m.mode == m.is) }
func (m modeFlag) Type() string   { return "bool" }

func (m modeFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	switch {
	case on:
		*m.mode = m.is
	case *m.mode == m.is:
		*m.mode = ping.ModeUnset
	}
	return nil
}

// atoiFlag parses an integer option the way rping's atoi does: it never
// fails, and text that is not a number counts as 0.
type atoiFlag struct{ p *int }

func (a atoiFlag) String() string {
	if a.p == nil {
		return "0"
	}
	return strconv.Itoa(*a.p)
}

func (a atoiFlag) Set(s string) error {
	*a.p = ping.Atoi(s)
	return nil
}

func (atoiFlag) Type() string { return "int" }
