package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/serve"
)

// ServeOptions is what `rdmactl serve` runs with.
type ServeOptions struct {
	IO          *cli.IOStreams
	JSON        bool
	Interrupted func() (context.Context, context.CancelFunc)
	serve.Config
}

func newCmdServe(f *cli.Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve [-a ADDR]",
		Short: "Answer rping, RC demo, ib_write_bw, ibv_rc_pingpong, rdma_cm tool and `rdmactl smoke` clients until stopped",
		Long: `Run one long-lived responder: rping's server side on the rdma_cm port (7174,
many clients in a row and at once, as 'rping -s -P'), the RC demo's server side
on the TCP port (19875; RDMA_RC_example and 'rdmactl demo' clients) and
perftest's write_bw server side on perftest's TCP port (18515; 'ib_write_bw HOST'
and 'rdmactl smoke --bw' clients) and, on the same port, ibv_rc_pingpong's
server side ('ibv_rc_pingpong -g N HOST', 'rdmactl pingpong rc -g auto HOST',
'rdmactl smoke --pingpong'), which is everything 'rdmactl smoke' checks
against. The RC demo, write_bw and pingpong sides open the RDMA device that
carries the address the client reached and pick its GID as -g auto.

Both perftest and ibv_rc_pingpong clients send first: a pingpong address
record opens with four hex digits and ':', a perftest version with a digit and
never has a ':', so the first five bytes tell them apart. The pingpong exchange
carries no size or count, so serve answers each message with one of its size,
any -n and any -s up to 1 MiB (RC, -m 1024 as the tool's default), and ends a
session once its client has been silent for 2s, or 20 of its slowest round
trips if longer; the log line gives the round trips answered and their size.
The client's run and that silence must fit in --timeout. Pingpong sessions run
at once (each sleeps on completion events); the test is logged as
pingpong_rc.

It also answers the rdmacm-utils clients: udaddy on the rdma_cm UDP port space
port --ud-port (7174; rping's 7174 is in the TCP port space, so both listen),
ucmatose and rdma_client on the TCP port space port --tools-port (7471), where
the connect request tells them apart: rdma_client connects with librdmacm's
default retry and RNR retry counts (7 and 7), ucmatose with 5 and 0.
rdma_client swaps one 16-byte message. udaddy and ucmatose clients do not say
their -C or -S: serve answers udaddy's messages each with one of its size, up
to -C 1024 (-S is bounded by the MTU), and sends ucmatose one 1-byte message
at a time until its replies begin (its QP retries RNR NAKs without end, where
the client asks for none), any -C and -S up to 65536. A session ends once its
client has been silent for 2s, or 20 of its slowest gaps if longer, within
--timeout; the log line gives the messages each way and the client's size.
'rdmactl smoke --cm' checks these ports.

perftest's exchange does not name the test, so the perftest port answers
write_bw only. It runs one session at a time: a second client waits up to
--timeout, then is told the server is busy. A write_bw client's whole run,
exchange included, must fit in --timeout (its TCP connection is silent while
it writes): raise it for long -D or -a runs. An RC demo session must fit in
--timeout too.

Work per client is bounded: each port runs at most --max-sessions sessions at
once (default 64) and at most --max-per-peer (default 16) from one address; a
client beyond them is turned away with a "busy" log line. A TCP client must
send its first byte within --first-byte-timeout (default 5s), and the RC demo,
perftest and pingpong clients get no QP or buffer before their opening record
checks.

One line per client on stdout: time, test, peer, verdict, duration, and on
failure the error and a hint; with --json one JSON document per line. SIGTERM
or SIGINT stop it: listeners close, open sessions end, every QP and cm_id is
destroyed before it exits 0. packaging/rdmactl-serve.service runs it under
systemd.`,
		Example: `  rdmactl serve -a 10.9.0.1
  rdmactl serve --json >>/var/log/rdmactl-serve.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("serve takes no arguments, got %q (the address goes in -a)", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO, opts.JSON = f.IO, f.JSON
			if err := validPort("--port", opts.CMPort); err != nil {
				return err
			}
			if err := validPort("--tcp-port", opts.TCPPort); err != nil {
				return err
			}
			if err := validPort("--perf-port", opts.PerfPort); err != nil {
				return err
			}
			for _, p := range []struct {
				flag string
				port int
			}{{"--tools-port", opts.ToolsPort}, {"--ud-port", opts.UDPort}} {
				if p.port != 0 {
					if err := validPort(p.flag, p.port); err != nil {
						return cli.Usagef("%v, or 0 to answer none there", err)
					}
				}
			}
			if opts.Timeout <= 0 {
				return cli.Usagef("invalid --timeout %v: must be positive, e.g. 30s", opts.Timeout)
			}
			if opts.FirstByte <= 0 {
				return cli.Usagef("invalid --first-byte-timeout %v: must be positive, e.g. 5s", opts.FirstByte)
			}
			if opts.MaxSessions < 1 {
				return cli.Usagef("invalid --max-sessions %d: must be 1 or more", opts.MaxSessions)
			}
			if opts.MaxPerPeer < 1 {
				return cli.Usagef("invalid --max-per-peer %d: must be 1 or more", opts.MaxPerPeer)
			}
			opts.RDMA = f.RDMA()
			opts.Interrupted = f.Interrupted
			opts.Devices = serve.SysfsDevices
			if runF != nil {
				return runF(opts)
			}
			return serveRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Addr, "addr", "a", "", "address to answer on (default: every address)")
	fl.IntVar(&opts.CMPort, "port", serve.DefaultCMPort, "rdma_cm port for rping clients")
	fl.IntVar(&opts.TCPPort, "tcp-port", serve.DefaultTCPPort, "TCP port for RC demo clients")
	fl.IntVar(&opts.PerfPort, "perf-port", serve.DefaultPerfPort, "TCP port for perftest write_bw and ibv_rc_pingpong clients (ib_write_bw, smoke --bw and --pingpong)")
	fl.IntVar(&opts.ToolsPort, "tools-port", serve.DefaultToolsPort, "rdma_cm port for ucmatose and rdma_client clients (0: none)")
	fl.IntVar(&opts.UDPort, "ud-port", serve.DefaultUDPort, "rdma_cm UDP port space port for udaddy clients (0: none)")
	fl.DurationVar(&opts.Timeout, "timeout", serve.DefaultTimeout, "drop a client that stays silent this long at any step (and a write_bw, pingpong or demo session that runs longer)")
	fl.DurationVar(&opts.FirstByte, "first-byte-timeout", serve.DefaultFirstByte, "drop a TCP client whose first byte takes longer")
	fl.IntVar(&opts.MaxSessions, "max-sessions", serve.DefaultMaxSessions, "sessions each port runs at once; more are turned away as busy")
	fl.IntVar(&opts.MaxPerPeer, "max-per-peer", serve.DefaultMaxPerPeer, "sessions each port runs at once for one peer address")
	return cmd
}

func validPort(flag string, p int) error {
	if p < 1 || p > 65535 {
		return cli.Usagef("invalid %s %d: want a port, 1 to 65535", flag, p)
	}
	return nil
}

func serveRun(opts *ServeOptions) error {
	ctx, stop := opts.Interrupted()
	defer stop()
	log := serve.NewLog(opts.IO.Out, opts.JSON)
	opts.Log = log.Write
	start := time.Now()
	err := serve.Run(ctx, opts.Config, func(b serve.Bound) {
		log.Started(opts.IO.ErrOut, b)
	})
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: cli.WithHint(err, serve.StartHint(err))}
	}
	log.Stopped(opts.IO.ErrOut, time.Since(start))
	return nil
}
