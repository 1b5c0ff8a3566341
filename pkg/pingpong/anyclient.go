package pingpong

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/latency"
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

// answer is the responder's loop: the tools' loop on the server's side,
// answering each message with one of its size until the client falls
// silent.
func (r *run) answer(ctx context.Context) error {
	o := r.o
	a := newAnswered()
	r.answered = a
	cpu0 := latency.ProcessCPU()
	start := time.Now()
	routs, pending := o.RxDepth, recvWRID
	wcs := make([]rdma.WC, 2)
	rcnt, scnt := 0, 0
	for {
		if ctx.Err() != nil {
			r.stopped = &progress{receives: rcnt, elapsed: time.Since(start)}
			return fmt.Errorf("%w after %d receives and %d sends", ctx.Err(), rcnt, scnt)
		}
		ne, err := r.wait(ctx, wcs, a.quiet.Limit(o.wait()))
		if err != nil {
			if ctx.Err() != nil {
				continue // said at the loop's top
			}
			var te *cli.TimeoutError
			if !errors.As(err, &te) {
				return err
			}
			if err := a.ended(scnt, te.After); err != nil {
				return err
			}
			break
		}
		for _, wc := range wcs[:ne] {
			parse := fmt.Sprintf("parse WC failed %d", ne)
			if wc.WRID == recvWRID && wc.Status.DidNotFit() {
				return tooLarge(wc.Status)
			}
			if wc.Status != rdma.WCSuccess {
				return toolErr(fmt.Sprintf("Failed status %s (%d) for wr_id %d", wc.Status, uint32(wc.Status), int32(wc.WRID)), parse)
			}
			switch wc.WRID {
			case sendWRID:
				scnt++
			case recvWRID:
				if routs--; routs <= 1 {
					n, _ := r.postSomeRecvs(o.RxDepth - routs)
					if routs += n; routs < o.RxDepth {
						return toolErr(fmt.Sprintf("Couldn't post receive (%d)", routs), parse)
					}
				}
				rcnt++
				a.received(int(wc.ByteLen), time.Now())
			default:
				return toolErr(fmt.Sprintf("Completion for unknown wr_id %d", int32(wc.WRID)), parse)
			}
			if pending &^= int(wc.WRID); pending == 0 {
				if err := r.postSend(a.lastSize); err != nil {
					return toolErr("Couldn't post send", parse)
				}
				pending = recvWRID | sendWRID
			}
		}
	}
	// Not the silence that ended it.
	res := &result{elapsed: a.quiet.Last().Sub(start), cpu: latency.ProcessCPU().Sub(cpu0)}
	res.usec = float32(res.elapsed.Microseconds())
	r.res = res
	r.report()
	return nil
}
