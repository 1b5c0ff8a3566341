package pingpong

import (
	"fmt"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// A responder of Options.AnySizeAndCount (rdmactl serve's) answers an rc
// client whose -s and -n it does not know, as the tools' exchange carries
// neither: each message is answered with a send of its length, and the
// client's silence after an answer ends the session, as the client exits
// right after its last answer arrives.

// MaxAnswerSize is the largest message such a responder answers. Its
// receives share one buffer of this size, as the tool's share one of -s
// bytes, so that a session's registered memory stays bounded.
const MaxAnswerSize = 1 << 20

// The client's silence that ends its session is many times the slowest
// round trip seen, so that no pause between two of its messages ends it,
// and at least the floor, which covers what a few round trips do not
// show: a client descheduled for a while, an RC retransmission.
const (
	silenceFloor = 2 * time.Second
	silencePaces = 20
)

// answered is what a responder has answered so far.
type answered struct {
	messages int
	largest  int // bytes
	lastSize int
	lastAt   time.Time
	// slowest is the longest time from one message to the next: a
	// round trip of the client's.
	slowest time.Duration
}

// received counts a message of size bytes that arrived at now.
func (a *answered) received(size int, now time.Time) {
	if a.messages > 0 {
		a.slowest = max(a.slowest, now.Sub(a.lastAt))
	}
	a.messages++
	a.largest = max(a.largest, size)
	a.lastSize, a.lastAt = size, now
}

// silence is how long the client may say nothing before its session
// ends; never beyond bound (negative: none).
func (a *answered) silence(bound time.Duration) time.Duration {
	d := max(silenceFloor, silencePaces*a.slowest)
	if bound >= 0 {
		d = min(d, bound)
	}
	return d
}

// ended is how a session that the client's silence of d ended went: done
// once it sent something and every answer was acknowledged.
func (a *answered) ended(sends int, d time.Duration) error {
	switch {
	case a.messages == 0:
		return cli.Failf("the client connected its QP but sent nothing for %v", d)
	case sends < a.messages:
		return cli.Failf("the answer to message %d of %d bytes was not acknowledged within %v", a.messages, a.lastSize, d)
	}
	return nil
}

// didNotFit says whether a receive failed as one the message did not
// fit does: a local length error by the spec; rxe says a local QP
// operation error when the copy overruns the receive, and a remote
// invalid request when its length check does. The receives are well
// formed and the client sends nothing but sends, so nothing else fails
// them.
func didNotFit(s rdma.WCStatus) bool {
	return s == rdma.WCLocLenErr || s == rdma.WCLocQPOpErr || s == rdma.WCRemInvReqErr
}

// tooLarge is the failure of a receive that the message did not fit.
func tooLarge(s rdma.WCStatus) error {
	return cli.WithHint(
		cli.Failf("a message larger than %d bytes (1 MiB), the most this responder answers, arrived (its receive failed: %s)", MaxAnswerSize, s),
		fmt.Sprintf("run the client with -s %d or less", MaxAnswerSize))
}
