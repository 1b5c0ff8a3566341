package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
)

// PerfOptions is what `rdmactl perf` runs with.
type PerfOptions struct {
	perf.Options
}

func newCmdPerf(f *cli.Factory, runF func(*PerfOptions) error) *cobra.Command {
	vals := perf.NewFlagValues()
	opts := &PerfOptions{}
	cmd := &cobra.Command{
		Use:   "perf TEST [SERVER]",
		Short: "Bandwidth and latency tests that speak perftest's protocol (ib_write_bw, ib_send_lat, …)",
		Long: `Run one of perftest's everyday tests: ` + strings.Join(perf.TestNames(), ", ") + `
(ib_write_bw without the "ib_"). Without SERVER this side waits for a client on
the TCP port (18515, as perftest); with SERVER it connects. Either side may be
the real perftest: the out-of-band exchange is the one perftest 6.06 speaks,
and the result tables are printed as perftest prints them.

Flags keep perftest's spellings, meanings and refusals (exit 1, with
perftest's line); a unique prefix of a long flag works, as with perftest.
What the device cannot do fails as perftest fails on it; what rdmactl does not
do (dual port or on-demand paging on devices that have them, encryption) is
refused in one line.
-x auto picks the RoCE v2 GID of the address the TCP connection uses.
Latency tests sleep on a completion channel between messages by default
(fair to small VMs, as perftest -e), and so do send_bw and -b runs on one
CPU (all but a timed run's sender, which seldom waits), where spinning
takes the CPU from the peer and the kernel's RDMA work; a one-way write,
read or atomic stream, whose peer is passive, spins there; --busy-poll
spins as perftest does.
--json prints every number plus the CPU time per iteration. --plot FILE.svg
draws the result: bandwidth and message rate per size, or the latency
samples' histogram with t_min, t_typical, t_avg and the 99th percentile.`,
		Example: `  rdmactl perf write_bw -d rxe0 -x 1                 # server
  rdmactl perf write_bw -d rxe0 -x 1 10.9.0.1        # client
  rdmactl perf send_lat -d rxe0 -x auto --busy-poll 10.9.0.1
  rdmactl perf write_bw -d rxe0 -x 1 -a --plot write_bw.svg 10.9.0.1
  ib_write_bw -d rxe0 -x 1 &  rdmactl perf write_bw -d rxe0 -x 1 127.0.0.1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if vals.Version {
				return nil
			}
			if len(args) < 1 || len(args) > 2 {
				return cli.Usagef("perf takes TEST and an optional SERVER, got %q (TEST is one of %s)", args, strings.Join(perf.TestNames(), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if vals.Version { // perftest prints it and exits 1
				fmt.Fprintf(f.IO.Out, "Version: %s\n", perf.Version)
				return cli.SilentExit(cli.ExitFailed)
			}
			t, err := perf.ParseTest(args[0])
			if err != nil {
				return cli.Usagef("%v", err)
			}
			o, err := vals.Resolve(t, cmd.Flags().Changed)
			var usage *perf.UsageError
			if errors.As(err, &usage) {
				return cli.Usagef("%v", err)
			}
			if errors.As(err, new(*perf.Refusal)) {
				return refusalExit(f.IO.ErrOut, err)
			}
			if err != nil {
				return cli.Failf("%v", err)
			}
			opts.Options = o
			opts.IO = f.IO
			if f.RDMA != nil {
				opts.Verbs = f.RDMA()
			}
			if len(args) == 2 {
				opts.Server = args[1]
			}
			if err := parsePerfGID(vals.GID, &opts.Options); err != nil {
				return err
			}
			opts.JSON = f.JSON
			opts.Counters = counterSource(f)
			if runF != nil {
				return runF(opts)
			}
			return runPerf(opts)
		},
	}
	addPerfFlags(cmd, vals)
	cmd.SetHelpFunc(helpWithBareSwitches)
	return cmd
}

// addPerfFlags registers perf.Flags, the one table of perf's options:
// cobra's help, the man page and completion read them from here, and
// long options are matched by unique prefix as perftest's getopt_long
// does. A flag error exits 1, as perftest's parser does.
func addPerfFlags(cmd *cobra.Command, vals *perf.FlagValues) {
	fl := cmd.Flags()
	for _, pf := range perf.Flags {
		usage := pf.Usage
		switch p := pf.ValueIn(vals).(type) {
		case *bool:
			fl.VarPF(perfSwitch{p}, pf.Long, pf.Short, usage).NoOptDefVal = bareSwitch
		case *int:
			fl.IntVarP(p, pf.Long, pf.Short, *p, usage)
		case *int64:
			fl.Int64VarP(p, pf.Long, pf.Short, *p, usage)
		case *float64:
			fl.Float64VarP(p, pf.Long, pf.Short, *p, usage)
		case *string:
			fl.StringVarP(p, pf.Long, pf.Short, *p, usage)
		case *time.Duration:
			fl.DurationVarP(p, pf.Long, pf.Short, *p, usage)
		default:
			panic(fmt.Sprintf("perf flag --%s sets a %T", pf.Long, p))
		}
	}
	fl.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if full, err := perf.LongOption(name, perfInheritedFlags); err == nil {
			return pflag.NormalizedName(full)
		}
		return pflag.NormalizedName(name)
	})
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		msg := err.Error()
		if strings.Contains(msg, errNoArgument.Error()) {
			if _, long, ok := strings.Cut(msg, "--"); ok {
				msg = fmt.Sprintf("option '--%s' %s", long[:strings.IndexByte(long, '"')], errNoArgument)
			}
		}
		if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			if _, lerr := perf.LongOption(name, perfInheritedFlags); lerr != nil {
				msg = lerr.Error()
			}
		}
		return cli.Failf("%s (see '%s --help')", msg, c.CommandPath())
	})
}

// perfSwitch is a perf option without an argument, as getopt_long takes
// one: "--name" sets it (pflag hands Set the NoOptDefVal, bareSwitch),
// and "--name=VALUE" is refused as perftest refuses it, "--name=true"
// too.
type perfSwitch struct{ p *bool }

// bareSwitch is what pflag hands a perfSwitch given without "=": a NUL,
// which no command-line argument can hold.
const bareSwitch = "\x00"

var errNoArgument = errors.New("doesn't allow an argument")

func (s perfSwitch) String() string { return strconv.FormatBool(s.p != nil && *s.p) }
func (s perfSwitch) Type() string   { return "bool" }

func (s perfSwitch) Set(v string) error {
	if v != bareSwitch {
		return errNoArgument
	}
	*s.p = true
	return nil
}

// helpWithBareSwitches prints perf's help as its parent would, with the
// switches shown as the flag library shows a plain bool (no "[=...]"
// after it): their NoOptDefVal is bareSwitch only while parsing.
func helpWithBareSwitches(c *cobra.Command, args []string) {
	help := (&cobra.Command{}).HelpFunc()
	if c.HasParent() {
		help = c.Parent().HelpFunc()
	}
	var switches []*pflag.Flag
	c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		if fl.NoOptDefVal == bareSwitch {
			switches = append(switches, fl)
			fl.NoOptDefVal = "true"
		}
	})
	defer func() {
		for _, fl := range switches {
			fl.NoOptDefVal = bareSwitch
		}
	}()
	help(c, args)
}

// perfInheritedFlags are the root's flags perf's prefix matching knows
// beside its own (a test checks them against the root's).
var perfInheritedFlags = []string{"config", "json", "pretty", "no-color", "help"}

// refusalExit gives perftest's refusals its exit code, 1, after the
// notice perftest's parser writes to stderr before one.
func refusalExit(errOut io.Writer, err error) error {
	var refused *perf.Refusal
	if errors.As(err, &refused) {
		io.WriteString(errOut, refused.Notice)
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
	err := refusalExit(opts.IO.ErrOut, perf.Run(context.Background(), &opts.Options))
	var usage *perf.UsageError
	if errors.As(err, &usage) {
		return cli.Usagef("%v", usage.Err)
	}
	if hint := cli.HintOf(err); hint != "" {
		// main prints it ("rdmactl: …" and "hint: …") and, with --json,
		// puts both in the error document.
		return cli.WithHint(cli.Failf("%v", err), hint)
	}
	return err
}
