package main

import (
	"context"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/doctor"
	"github.com/rdmactl/rdmactl/pkg/serve"
	"github.com/rdmactl/rdmactl/pkg/smoke"
	"github.com/rdmactl/rdmactl/pkg/smoke/checks"
)

// SmokeOptions is what `rdmactl smoke` runs with.
type SmokeOptions struct {
	IO          *cli.IOStreams
	Interrupted func() (context.Context, context.CancelFunc)
	checks.Options
}

func newCmdSmoke(f *cli.Factory, runF func(*SmokeOptions) error) *cobra.Command {
	opts := &SmokeOptions{}
	cmd := &cobra.Command{
		Use:   "smoke [PEER...] [--peers FILE]",
		Short: "Check RDMA to every peer in one command: route and GID, rping, the RC demo",
		Long: `Check this host and its RDMA peers in one run. Locally: the doctor's checks
that hold for every route (modules, uverbs, rdma_cm, provider, an ACTIVE port,
the firewall, memlock). Per peer, in parallel: the route and RoCE v2 GID toward
it (as -g auto picks), an rping-protocol ping with round-trip times, and the RC
demo's SEND, RDMA read and RDMA write, both against 'rdmactl serve' on the peer.
With --bw also a short perftest write_bw (64 KiB RDMA writes for 1 s) against
serve's perftest port (18515; ib_write_bw's server answers too); it is off by
default because it moves data. With --pingpong also ibv_rc_pingpong's client
with its defaults (1000 round trips of 4096 bytes, GID as -g auto, data
validated) against the same port (an ibv_rc_pingpong server answers too).
With --cm also ucmatose's RC exchange (10 messages of 100 bytes each way) and
udaddy's UD one against serve's --tools-port (7471) and --ud-port (7174, the
UDP port space).

Without PEER it runs a loopback: a temporary responder on the first RoCE
address of this host, checked as a peer.

Output: a table (peer, checks, RTT p50/p99, with --bw the bandwidth, verdict,
then each failure with its hint); --json one document; --junit FILE JUnit XML, one testcase per peer and
check; --prom FILE the node_exporter textfile format. --timeout bounds each
check. Exit status: 0 when every check passed, 1 when one failed, 2 for
usage errors.`,
		Example: `  rdmactl smoke                                   # loopback on this host
  rdmactl smoke 10.9.0.2 10.9.0.3 --timeout 5s
  rdmactl smoke 10.9.0.2 --bw --json                # adds write_bw MB/s
  rdmactl smoke 10.9.0.2 --pingpong                 # adds an ibv_rc_pingpong run
  rdmactl smoke 10.9.0.2 --cm                       # adds the cm_rc and cm_ud checks
  rdmactl smoke --peers /etc/rdmactl/peers --json --junit smoke.xml
  rdmactl smoke --peers hosts --prom /var/lib/node_exporter/textfile/rdmactl.prom`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO, opts.JSON, opts.Stream = f.IO, f.JSON, f.IO.OutIsTerminal()
			opts.Peers = args
			for _, p := range args {
				if !smoke.ValidPeer(p) {
					return cli.Usagef("invalid PEER %q: give an IP address or host name", p)
				}
			}
			switch {
			case opts.Timeout <= 0:
				return cli.Usagef("invalid --timeout %v: must be positive, e.g. 10s", opts.Timeout)
			case opts.Count < 1:
				return cli.Usagef("invalid --count %d: ping at least once, e.g. -C 10", opts.Count)
			case opts.Concurrency < 1:
				return cli.Usagef("invalid --concurrency %d: check at least one peer at a time", opts.Concurrency)
			}
			if err := validPort("--port", opts.CMPort); err != nil {
				return err
			}
			if err := validPort("--tcp-port", opts.TCPPort); err != nil {
				return err
			}
			if err := validPort("--perf-port", opts.PerfPort); err != nil {
				return err
			}
			if err := validCMPorts(opts.ToolsPort, opts.UDPort); err != nil {
				return err
			}
			opts.System = checks.HostSystem()
			opts.RDMA = f.RDMA()
			opts.Interrupted = f.Interrupted
			opts.Counters = counterSource(f)
			h, verbs := f.Host(), f.RDMA()
			opts.Gather = func() *doctor.Facts { return doctor.Gather(h, verbs, netip.Addr{}) }
			if runF != nil {
				return runF(opts)
			}
			return smokeRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.PeersFile, "peers", "", "file of peers, one address or host name a line ('#' comments)")
	fl.IntVarP(&opts.Count, "count", "C", 10, "pings per peer")
	fl.DurationVar(&opts.Timeout, "timeout", 10*time.Second, "bound on each check")
	fl.IntVar(&opts.Concurrency, "concurrency", 8, "peers checked at once")
	fl.StringVar(&opts.JUnitFile, "junit", "", "also write JUnit XML to FILE")
	fl.StringVar(&opts.PromFile, "prom", "", "also write the node_exporter textfile format to FILE")
	fl.IntVar(&opts.CMPort, "port", serve.DefaultCMPort, "rdma_cm port of the peers' rdmactl serve")
	fl.IntVar(&opts.TCPPort, "tcp-port", serve.DefaultTCPPort, "TCP port of the peers' rdmactl serve")
	fl.BoolVar(&opts.BW, "bw", false, "also run a short write_bw (64 KiB RDMA writes for 1 s) to each peer")
	fl.BoolVar(&opts.Pingpong, "pingpong", false, "also run ibv_rc_pingpong's client (1000 round trips of 4096 bytes) to each peer")
	fl.IntVar(&opts.PerfPort, "perf-port", serve.DefaultPerfPort, "perftest TCP port of the peers' rdmactl serve (for --bw and --pingpong)")
	fl.BoolVar(&opts.CM, "cm", false, "also run ucmatose (RC) and udaddy (UD) exchanges with each peer's serve")
	fl.IntVar(&opts.ToolsPort, "tools-port", serve.DefaultToolsPort, "rdma_cm port of the peers' serve for ucmatose (for --cm)")
	fl.IntVar(&opts.UDPort, "ud-port", serve.DefaultUDPort, "rdma_cm UDP port space port of the peers' serve for udaddy (for --cm)")
	return cmd
}

func smokeRun(opts *SmokeOptions) error {
	ctx, stop := opts.Interrupted()
	defer stop()
	return checks.Run(ctx, opts.Options, opts.IO.Out)
}

func validCMPorts(tools, ud int) error {
	if err := validPort("--tools-port", tools); err != nil {
		return err
	}
	return validPort("--ud-port", ud)
}
