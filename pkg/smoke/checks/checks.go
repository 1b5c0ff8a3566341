package checks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/demo"
	"github.com/rdmactl/rdmactl/pkg/doctor"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/smoke"
)

// Names of the per-peer checks, in the order they run.
const (
	CheckRoute = "route"
	CheckPing  = "ping"
	CheckDemo  = "demo"
	// CheckWriteBW runs only with --bw: it moves data.
	CheckWriteBW = "write_bw"
)

// Config is what the per-peer checks need to reach the peers' responders.
type Config struct {
	CMPort  int // rdma_cm port of the peers' `rdmactl serve` (rping's 7174)
	TCPPort int // TCP port of their RC demo side (19875)
	// PerfPort is perftest's TCP port on the peers (18515), where serve
	// answers write_bw; BW adds the write_bw check.
	PerfPort int
	BW       bool
	// Pingpong adds the pingpong check (ibv_rc_pingpong on PerfPort).
	Pingpong bool
	Count    int // pings per peer
	System   System
	RDMA     rdma.Stack

	// CM adds the ucmatose (RC) and udaddy (UD) checks against the
	// peers' ToolsPort and UDPort.
	CM                bool
	ToolsPort, UDPort int
}

// localChecks are the doctor checks that hold for every route: the
// per-address ones (roce-gids, addr-device) are the route check's job,
// for the peers' routes only, so an unrelated netdev without RDMA does
// not fail the run.
var localChecks = []string{
	doctor.CheckModules, doctor.CheckUverbs, doctor.CheckRdmaCM, doctor.CheckProvider,
	doctor.CheckPorts, doctor.CheckFirewall, doctor.CheckMemlock,
}

// Local returns the doctor's checks as smoke checks, gathering the facts
// once for all of them. A doctor warning passes with its detail.
func Local(gather func() *doctor.Facts) []smoke.Check {
	results := sync.OnceValue(func() []doctor.Result { return doctor.RunChecks(gather(), netip.Addr{}) })
	out := make([]smoke.Check, 0, len(localChecks))
	for _, name := range localChecks {
		out = append(out, smoke.Check{Name: name, Run: func(ctx context.Context, _ string) smoke.Result {
			for _, r := range results() {
				if r.Name == name {
					return smoke.Result{OK: r.Status != doctor.Fail, Message: r.Detail, Hint: r.Fix}
				}
			}
			return smoke.Result{Message: "the doctor has no check " + name}
		}})
	}
	return out
}

// PerPeer returns the route, ping and demo checks, with cfg.BW the
// write_bw check and with cfg.Pingpong the pingpong check. The route check gates
// the others: without a RoCE port toward the peer they cannot run. Ping
// and demo run both even when one fails: they use different transports
// (rdma_cm, TCP) and so tell different stories.
func PerPeer(cfg Config) []smoke.Check {
	var mu sync.Mutex
	routes := map[string]Route{}
	routeOf := func(peer string) Route {
		mu.Lock()
		defer mu.Unlock()
		return routes[peer]
	}
	checks := []smoke.Check{
		{Name: CheckRoute, Gate: true, Run: func(ctx context.Context, peer string) smoke.Result {
			r, err := cfg.System.ResolveRoute(ctx, peer)
			if err != nil {
				re, _ := err.(*RouteError)
				res := smoke.Result{Message: err.Error()}
				if re != nil {
					res.Hint = re.Hint
				}
				return res
			}
			mu.Lock()
			routes[peer] = r
			mu.Unlock()
			return smoke.Result{OK: true, Message: r.String()}
		}},
		{Name: CheckPing, Run: func(ctx context.Context, peer string) smoke.Result {
			return cfg.ping(ctx, routeOf(peer))
		}},
		{Name: CheckDemo, Run: func(ctx context.Context, peer string) smoke.Result {
			return cfg.demo(ctx, routeOf(peer))
		}},
	}
	if cfg.BW {
		checks = append(checks, smoke.Check{Name: CheckWriteBW, Run: func(ctx context.Context, peer string) smoke.Result {
			return cfg.writeBW(ctx, routeOf(peer))
		}})
	}
	if cfg.Pingpong {
		checks = append(checks, smoke.Check{Name: CheckPingpong, Run: func(ctx context.Context, peer string) smoke.Result {
			return cfg.pingpong(ctx, routeOf(peer))
		}})
	}
	if cfg.CM {
		checks = append(checks, cfg.cmChecks(routeOf)...)
	}
	return checks
}

// remaining is what is left of ctx's deadline, for the step bounds of
// ping and demo (at least a second, so that they try at all).
func remaining(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(time.Until(d), time.Second)
}

// interruptOnly is ctx without its deadline: the run's interrupt ends a
// check's pings cleanly, as SIGINT ends a --stats client, while an overrun
// of the check's bound is smoke's to report (smoke.Run), ping's steps
// being bounded by its own --timeout.
func interruptOnly(ctx context.Context) (context.Context, context.CancelFunc) {
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	return run, func() { stop(); cancel() }
}

// ping runs rping's client in-process against the peer's responder.
func (cfg Config) ping(ctx context.Context, r Route) smoke.Result {
	var errOut bytes.Buffer
	pctx, stop := interruptOnly(ctx)
	defer stop()
	outcome := ping.Probe(pctx, ping.Options{
		CM: cfg.RDMA, Addr: r.Peer.String(), Port: cfg.CMPort,
		Count: cfg.Count, Size: ping.DefaultSize, Timeout: remaining(ctx), IO: cli.Test(nil, io.Discard, &errOut),
	})
	rep := outcome.Report
	res := smoke.Result{OK: rep.OK && rep.Completed == cfg.Count}
	if len(rep.RTTMs) > 0 {
		res.RTT = rttOf(rep.RTTMs)
	}
	failure := rep.Error
	if failure == nil {
		failure = &cli.ErrorBody{Message: "ping failed"}
	}
	switch {
	case !rep.OK && outcome.Event == rdma.CMEventRejected:
		res.Message = failure.Message
		res.Hint = fmt.Sprintf("nothing listens on %s port %d: is `rdmactl serve` running there (systemctl status rdmactl-serve)?", r.Peer, cfg.CMPort)
	case !rep.OK:
		res.Message, res.Hint = failure.Message, failure.Hint
		if line := firstLine(errOut.String()); line != "" && !strings.Contains(res.Message, line) {
			res.Message += " (" + line + ")"
		}
	case rep.Completed != cfg.Count:
		res.Message = fmt.Sprintf("%d of %d pings completed (interrupted)", rep.Completed, cfg.Count)
	default:
		res.Message = fmt.Sprintf("%d pings to %s port %d, data validated", rep.Completed, r.Peer, cfg.CMPort)
	}
	return res
}

// rttOf summarises round-trip times given in milliseconds.
func rttOf(ms []float64) *smoke.RTT {
	s := slices.Clone(ms)
	slices.Sort(s)
	rank := func(q float64) float64 { // nearest rank, as ping's p99
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return seconds(s[min(max(i, 0), len(s)-1)])
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	return &smoke.RTT{Count: len(s), P50: rank(0.5), P99: rank(0.99), Max: seconds(s[len(s)-1]), Sum: seconds(sum)}
}

// seconds converts milliseconds, to the microsecond ping measures in.
func seconds(ms float64) float64 { return math.Round(ms*1e3) / 1e6 }

// demo runs the RC example's client in-process against the responder,
// on the device and port the route check found, the GID chosen as -g auto.
func (cfg Config) demo(ctx context.Context, r Route) smoke.Result {
	o := demo.Options{
		RDMA: cfg.RDMA, Server: r.Peer.String(), Device: r.Device, IBPort: r.Port, GIDAuto: true,
		TCPPort: cfg.TCPPort, Timeout: remaining(ctx),
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute // demo's own default
	}
	sum, dialErr := demo.Probe(o)
	if !sum.OK {
		failure := sum.Error
		if failure == nil {
			failure = &cli.ErrorBody{Message: "demo failed"}
		}
		hint := failure.Hint
		if dialErr != nil || hint == "" && sum.Remote == nil {
			// A peer's responder is serve: demo's own hint for a port
			// nobody answers would send the user to start `rdmactl demo`.
			hint = fmt.Sprintf("nothing answered on TCP port %d of %s: is `rdmactl serve` running there (systemctl status rdmactl-serve), and is the port open?", cfg.TCPPort, r.Peer)
		}
		return smoke.Result{Message: failure.Message, Hint: hint}
	}
	return smoke.Result{OK: true, Message: fmt.Sprintf("SEND, RDMA read and RDMA write with %s TCP port %d over %s GID index %d",
		r.Peer, cfg.TCPPort, r.Device, gidIndex(sum))}
}

func gidIndex(s demo.Summary) int {
	if s.GIDIndex == nil {
		return -1
	}
	return *s.GIDIndex
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
