package main

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/stat"
)

func newCmdStat(f *cli.Factory, runF func(*stat.Options) error) *cobra.Command {
	opts := &stat.Options{}
	cmd := &cobra.Command{
		Use:   "stat [-d DEV] [-i PORT] [--watch [INTERVAL [COUNT]]]",
		Short: "Show the ports' counters (rdma statistic show), or watch them live",
		Long: `Show every RDMA port's hw counters exactly as 'rdma statistic show' does
('rdma statistic show link DEV/PORT' with -d and -i), read over RDMA netlink.

--watch samples every INTERVAL (default 1s; a number is seconds) and shows
the counters that moved since start, with their rate over the last interval
and their change since start: a table redrawn in place on a terminal, one
line per interval otherwise; retry counters are yellow and error counters
red (on a terminal, unless NO_COLOR or --no-color). It stops after COUNT
samples (or --count), or at Ctrl-C, and exits 0. With --json it prints one
JSON document per interval (JSON lines, docs/json.md).

--prom FILE writes the counters in the node_exporter textfile format (each
interval with --watch; once, with nothing on stdout, without it), named as
node_exporter's infiniband collector names them. --plot FILE.svg (with
--watch) draws the rates over time, traffic in one panel and retries and
errors in another, rewritten at each interval.`,
		Example: `  rdmactl stat
  rdmactl stat -d rxe0 -i 1
  rdmactl stat --watch                    # live, every second, until Ctrl-C
  rdmactl stat --watch 2 10 --json        # 10 JSON lines, 2 s apart
  rdmactl stat --watch 5 --prom /var/lib/node_exporter/textfile/rdma.prom
  rdmactl stat --watch 1 60 --plot rates.svg`,
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := f.BindFlags(cmd.Flags(), map[string]string{cli.KeyDevice: "ib-dev"})
			if err != nil {
				return err
			}
			opts.Device = v.GetString(cli.KeyDevice)
			if err := statWatchArgs(opts, args); err != nil {
				return err
			}
			if opts.PlotFile != "" && !opts.Watch {
				return cli.Usagef("--plot draws rates over time: it needs --watch (e.g. stat --watch 1 60 --plot %s)", opts.PlotFile)
			}
			opts.IO, opts.JSON = f.IO, f.JSON
			opts.Redraw = f.IO.OutIsTerminal() && !f.JSON
			opts.Source = counterSource(f)
			if runF != nil {
				return runF(opts)
			}
			ctx, stop := f.Interrupted()
			defer stop()
			return stat.Run(ctx, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Device, "ib-dev", "d", "", "show only device `DEV` (default: every device)")
	fl.StringVarP(&opts.Port, "ib-port", "i", "", "show only port `PORT` (default: every port)")
	fl.BoolVarP(&opts.Watch, "watch", "w", false, "sample every INTERVAL (an operand, default 1s) and show what moved")
	fl.IntVarP(&opts.Count, "count", "c", 0, "with --watch, stop after `N` samples (default: at Ctrl-C)")
	fl.StringVar(&opts.PromFile, "prom", "", "write the node_exporter textfile format to `FILE`")
	fl.StringVar(&opts.PlotFile, "plot", "", "with --watch, draw the rates over time to `FILE.svg`")
	return cmd
}

// counterSource is the host's port counters, for stat and for the runs
// that report which error counters rose; nil without a host.
func counterSource(f *cli.Factory) counters.Source {
	if f.Host == nil {
		return nil
	}
	return counters.FromHost(f.Host())
}

// statWatchArgs reads --watch's operands, INTERVAL and COUNT, as vmstat
// takes them; without --watch there are none.
func statWatchArgs(opts *stat.Options, args []string) error {
	opts.Interval = time.Second
	if !opts.Watch {
		if len(args) > 0 {
			return cli.Usagef("unexpected %q: stat takes an INTERVAL only with --watch (e.g. stat --watch %s)", args[0], args[0])
		}
		if opts.Count != 0 {
			return cli.Usagef("--count counts --watch's samples: add --watch")
		}
		return nil
	}
	if len(args) > 2 {
		return cli.Usagef("stat --watch takes at most INTERVAL and COUNT, got %d operands", len(args))
	}
	if opts.Count < 0 {
		return cli.Usagef("invalid --count %d: give a number of samples from 1, or none to run until Ctrl-C", opts.Count)
	}
	if len(args) >= 1 {
		d, err := parseInterval(args[0])
		if err != nil {
			return cli.Usagef("invalid INTERVAL %q: give seconds (1, 0.5) or a duration (500ms)", args[0])
		}
		opts.Interval = d
	}
	if len(args) == 2 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return cli.Usagef("invalid COUNT %q: give a number of samples from 1", args[1])
		}
		opts.Count = n
	}
	return nil
}

func parseInterval(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return 0, err
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 10*time.Millisecond {
		return 0, strconv.ErrRange
	}
	return d, nil
}
