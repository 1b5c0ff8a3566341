package cm

import (
	"errors"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// errStopped ends a wait whose run's context ended.
var errStopped = errors.New("server shutting down")

// stopPoll is how often a wait looks at the run's context; responderPollGap
// is the pause between a responder's empty CQ polls, so that a silent
// client does not hold a core.
const (
	stopPoll         = 100 * time.Millisecond
	responderPollGap = 250 * time.Microsecond
)

func (o *Options) stopped() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// wait calls once(d) until it returns something other than
// rdma.ErrTimeout or timeout (negative: none) passed; when the run's
// context can end it waits in slices of stopPoll and gives errStopped once
// it has.
func (o *Options) wait(timeout time.Duration, once func(time.Duration) error) error {
	if o.done == nil {
		return once(timeout)
	}
	var deadline time.Time
	if timeout >= 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		if o.stopped() {
			return errStopped
		}
		d := stopPoll
		if !deadline.IsZero() {
			d = min(d, time.Until(deadline))
			if d <= 0 {
				return rdma.ErrTimeout
			}
		}
		if err := once(d); err != rdma.ErrTimeout {
			return err
		}
	}
}
