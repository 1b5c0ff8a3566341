package checks

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/doctor"
	"github.com/rdmactl/rdmactl/pkg/serve"
	"github.com/rdmactl/rdmactl/pkg/smoke"
)

// Options is a whole `rdmactl smoke` run.
type Options struct {
	Config
	Peers       []string
	PeersFile   string
	JUnitFile   string
	PromFile    string
	Timeout     time.Duration // per check
	Concurrency int
	JSON        bool
	// Stream prints the table's rows as the peers finish (stdout is a
	// terminal); otherwise the table comes whole, in the peers' order.
	Stream bool
	// Gather reads the doctor's facts (doctor.Gather on a real host).
	Gather func() *doctor.Facts
	// Counters are this host's port counters, read around the checks to
	// say which error counters rose; nil reads none.
	Counters counters.Source
}

// Run checks the peers (or, with none, a loopback against a temporary
// responder) and writes the reports. Its error carries the exit code: a
// silent 1 when a check failed (the report says which), 2 for usage.
func Run(ctx context.Context, o Options, stdout io.Writer) error {
	peers, err := o.peers()
	if err != nil {
		return err
	}
	// The facts are gathered before the checks and outside their bound:
	// the firewall tools alone may take seconds (doctor bounds them), and
	// that is no verdict on any check. Gathering overlaps the loopback
	// responder's start.
	facts := make(chan *doctor.Facts, 1)
	go func() { facts <- o.Gather() }()
	if len(peers) == 0 {
		stop, ip, err := o.loopback(ctx)
		if err != nil {
			return err
		}
		defer stop()
		peers = []string{ip.String()}
	}
	gathered := <-facts
	watch := counters.Begin(o.Counters)
	plan := smoke.Plan{
		Local:       Local(func() *doctor.Facts { return gathered }),
		PerPeer:     PerPeer(o.Config),
		Peers:       peers,
		Timeout:     o.Timeout,
		Concurrency: o.Concurrency,
	}
	var stream *smoke.TableStream
	if o.Stream && !o.JSON {
		names := make([]string, len(plan.PerPeer))
		for i, c := range plan.PerPeer {
			names[i] = c.Name
		}
		stream = smoke.NewTableStream(stdout, peers, names, o.BW)
		plan.OnLocal, plan.OnPeer = stream.Local, stream.Peer
	}
	rep := smoke.Run(ctx, plan)
	rose := watch.End()
	if o.JUnitFile != "" {
		if err := cli.WriteFileAtomic(o.JUnitFile, 0o666, func(w io.Writer) error { return smoke.WriteJUnit(w, rep) }); err != nil {
			return cli.Failf("--junit: %v", err)
		}
	}
	if o.PromFile != "" {
		if err := cli.WriteFileAtomic(o.PromFile, 0o666, func(w io.Writer) error { return smoke.WritePrometheus(w, rep) }); err != nil {
			return cli.Failf("--prom: %v", err)
		}
	}
	switch {
	case o.JSON:
		err = cli.WriteJSON(stdout, struct {
			smoke.Report
			PortCounters *counters.Summary `json:"port_counters,omitempty"`
		}{rep, counters.Summarize(rose)})
	case stream != nil:
		err = stream.Finish(rep)
	default:
		err = smoke.WriteTable(stdout, rep)
	}
	if err == nil && !o.JSON {
		if l := counters.Line(rose, rep.OK); l != "" {
			_, err = fmt.Fprintf(stdout, "(local): port counters: %s\n", l)
		}
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		return cli.SilentExit(cli.ExitFailed)
	}
	return nil
}

// peers are the PEER arguments then the --peers file's, each once
// (smoke.UniquePeers).
func (o Options) peers() ([]string, error) {
	peers := slices.Clone(o.Peers)
	if o.PeersFile != "" {
		f, err := os.Open(o.PeersFile)
		if err != nil {
			return nil, cli.Usagef("--peers: %v", err)
		}
		defer f.Close()
		more, err := smoke.ReadPeers(f, o.PeersFile)
		if err != nil {
			return nil, cli.Usagef("--peers: %v", err)
		}
		if len(more) == 0 {
			return nil, cli.Usagef("--peers: %s lists no peer (one address or host name a line)", o.PeersFile)
		}
		peers = append(peers, more...)
	}
	return smoke.UniquePeers(peers), nil
}

// loopback starts a temporary responder on the first RoCE address, on
// free ports, and points the checks at it.
func (o *Options) loopback(ctx context.Context) (stop func(), ip netip.Addr, err error) {
	ip, ok := o.System.FirstRoCEAddr()
	if !ok {
		return nil, ip, cli.Failf("no PEER given and no ACTIVE RDMA port has a RoCE v2 GID for an IPv4 address to run a loopback on (hint: rdmactl rxe add NETDEV, then rdmactl doctor)")
	}
	sctx, cancel := context.WithCancel(ctx)
	bound := make(chan serve.Bound, 1)
	done := make(chan error, 1)
	cfg := serve.Config{Addr: ip.String(), Timeout: o.Timeout, RDMA: o.RDMA, Devices: serve.SysfsDevices}
	if o.CM {
		// rdma_cm ports: no free one to pick, the checks' own.
		cfg.ToolsPort, cfg.UDPort = o.ToolsPort, o.UDPort
	}
	go func() {
		done <- serve.Run(sctx, cfg, func(b serve.Bound) { bound <- b })
	}()
	select {
	case b := <-bound:
		o.CMPort, o.TCPPort, o.PerfPort = b.CMPort, b.TCPPort, b.PerfPort
	case err := <-done:
		cancel()
		return nil, ip, cli.Failf("loopback responder on %s: %v", ip, err)
	}
	return func() { cancel(); <-done }, ip, nil
}
