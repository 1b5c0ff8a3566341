package ping

import (
	"io"

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
// go to o.ErrOut (nil: nowhere); nothing is printed on o.Out.
func Probe(o Options) Outcome {
	var out Outcome
	o.Mode, o.JSON, o.Stats, o.Validate = ModeClient, false, false, true
	o.Out = io.Discard
	if o.ErrOut == nil {
		o.ErrOut = io.Discard
	}
	o.probe = &out
	_ = Run(&o)
	return out
}
