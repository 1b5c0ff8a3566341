package checks

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cm"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/smoke"
)

// The --cm checks: ucmatose's RC exchange and udaddy's UD one, in-process,
// against the peer's `rdmactl serve` (or the C tools' servers), with the
// tools' default messages, which is what serve answers.
const (
	CheckCMRC = "cm_rc"
	CheckCMUD = "cm_ud"
)

// cmChecks are the --cm checks.
func (cfg Config) cmChecks(routeOf func(string) Route) []smoke.Check {
	return []smoke.Check{
		{Name: CheckCMRC, Run: func(ctx context.Context, peer string) smoke.Result {
			return cfg.cmTool(ctx, routeOf(peer), "ucmatose")
		}},
		{Name: CheckCMUD, Run: func(ctx context.Context, peer string) smoke.Result {
			return cfg.cmTool(ctx, routeOf(peer), "udaddy")
		}},
	}
}

// cmTool runs tool's client against the peer in-process.
func (cfg Config) cmTool(ctx context.Context, r Route, tool string) smoke.Result {
	o := &cm.Options{Tool: tool, Server: r.Peer.String(), Connections: 1, Count: cm.DefaultCount, Size: cm.DefaultSize,
		Port: strconv.Itoa(cfg.ToolsPort), UDPort: strconv.Itoa(cfg.UDPort), PortSpace: rdma.PortSpaceTCP,
		Timeout: remainingOr(ctx, 10*time.Second), CM: cfg.RDMA}
	port, space := cfg.ToolsPort, "rdma_cm port"
	if tool == "udaddy" {
		o.PortSpace, port, space = rdma.PortSpaceUDP, cfg.UDPort, "rdma_cm UDP port"
	}
	// The exchange ends by its own --timeout, not by ctx: an interrupted
	// or overdue check is smoke's to report (smoke.Run).
	got := cm.Probe(context.WithoutCancel(ctx), o)
	if got.OK {
		return smoke.Result{OK: true, Message: fmt.Sprintf("%s: %d messages of %d bytes with %s %s %d",
			tool, got.Messages, cm.DefaultSize, r.Peer, space, port)}
	}
	res := smoke.Result{Message: tool + ": " + got.Error, Hint: got.Hint}
	// REJECTED with status 8 on RC, UNREACHABLE on UD: nothing listens.
	if got.Event == rdma.CMEventRejected && got.Status == 8 || got.Event == rdma.CMEventUnreachable {
		res.Hint = fmt.Sprintf("nothing answered %s on %s %d of %s: is `rdmactl serve` running there (systemctl status rdmactl-serve), a version that answers the rdma_cm tools (--tools-port, --ud-port)?",
			tool, space, port, r.Peer)
	}
	return res
}
