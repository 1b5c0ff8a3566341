package pingpong

import (
	"fmt"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
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

// answered is what a responder has answered so far.
type answered struct {
	messages int
	largest  int // bytes
	lastSize int
	// quiet times the gaps between the client's messages: its round
	// trips.
	quiet *pollwait.Silence
}

func newAnswered() *answered { return &answered{quiet: pollwait.NewSilence(time.Now())} }

// received counts a message of size bytes that arrived at now.
func (a *answered) received(size int, now time.Time) {
	a.quiet.Mark(now)
	a.messages++
	a.largest = max(a.largest, size)
	a.lastSize = size
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

// tooLarge is the failure of a receive that the message did not fit.
func tooLarge(s rdma.WCStatus) error {
	return cli.WithHint(
		cli.Failf("a message larger than %d bytes (1 MiB), the most this responder answers, arrived (its receive failed: %s)", MaxAnswerSize, s),
		fmt.Sprintf("run the client with -s %d or less", MaxAnswerSize))
}
