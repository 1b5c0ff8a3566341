package ping

import (
	"context"
	"io"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Outcome is how a client run ended, for a caller that checks a peer
// (smoke) rather than prints: the report --json would carry, and the CM
// event that ended a failed run with its status (0 when none did).
type Outcome struct {
	Report Report
	Event  rdma.CMEventType
	Status int
}

// Probe runs rping's client with rdmactl's verdict (every ping done, each
// echo validated) and returns its outcome. rping's own lines and the hint
// go to o.IO.ErrOut (o.IO nil: nowhere); nothing is printed on o.IO.Out.
// The end of ctx stops the pings, as an interrupt stops a --stats client.
func Probe(ctx context.Context, o Options) Outcome {
	var out Outcome
	o.Mode, o.JSON, o.Stats, o.Validate = ModeClient, false, false, true
	errOut := io.Discard
	if o.IO != nil {
		errOut = o.IO.ErrOut
	}
	o.IO = cli.Test(nil, io.Discard, errOut)
	o.probe = &out
	_ = Run(ctx, &o)
	return out
}
