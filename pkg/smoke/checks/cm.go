package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
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

// cmDocument is the part of pkg/cm's --json document the check reads.
type cmDocument struct {
	OK       bool `json:"ok"`
	Messages int  `json:"messages"`
	Error    *struct {
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
}

// cmTool runs tool's client against the peer and reads its JSON document.
func (cfg Config) cmTool(ctx context.Context, r Route, tool string) smoke.Result {
	var out, errOut bytes.Buffer
	o := &cm.Options{Tool: tool, Server: r.Peer.String(), Connections: 1, Count: cm.DefaultCount, Size: cm.DefaultSize,
		Port: strconv.Itoa(cfg.ToolsPort), UDPort: strconv.Itoa(cfg.UDPort), PortSpace: rdma.PortSpaceTCP,
		Timeout: remainingOr(ctx, 10*time.Second), JSON: true, IO: cli.Test(nil, &out, &errOut), CM: cfg.RDMA}
	port, space := cfg.ToolsPort, "rdma_cm port"
	if tool == "udaddy" {
		o.PortSpace, port, space = rdma.PortSpaceUDP, cfg.UDPort, "rdma_cm UDP port"
	}
	// The exchange ends by its own --timeout, not by ctx: an interrupted
	// or overdue check is smoke's to report (smoke.Run).
	_ = cm.Run(context.WithoutCancel(ctx), o)
	var doc cmDocument
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		return smoke.Result{Message: fmt.Sprintf("%s gave no report: %v (%s)", tool, err, firstLine(errOut.String()))}
	}
	if doc.OK {
		return smoke.Result{OK: true, Message: fmt.Sprintf("%s: %d messages of %d bytes with %s %s %d",
			tool, doc.Messages, cm.DefaultSize, r.Peer, space, port)}
	}
	res := smoke.Result{Message: tool + " failed"}
	if doc.Error != nil {
		res.Message, res.Hint = tool+": "+doc.Error.Message, doc.Error.Hint
	}
	// REJECTED with status 8 on RC, UNREACHABLE on UD: nothing listens.
	if strings.Contains(res.Message, "RDMA_CM_EVENT_REJECTED, error: 8") || strings.Contains(res.Message, "RDMA_CM_EVENT_UNREACHABLE") {
		res.Hint = fmt.Sprintf("nothing answered %s on %s %d of %s: is `rdmactl serve` running there (systemctl status rdmactl-serve), a version that answers the rdma_cm tools (--tools-port, --ud-port)?",
			tool, space, port, r.Peer)
	}
	return res
}
