package cm

import (
	"fmt"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// A responder (rdmactl serve) answers udaddy and ucmatose clients whose
// -C and -S it does not know, as neither tool's exchange carries them.
//
// udaddy's client sends its -C messages first, then waits for as many
// replies: each message is answered at once with one of its size, on
// receives posted before the client connected.
//
// ucmatose's server sends first, -C messages that the client's -C
// receives take, and the client then sends its -C replies and waits for
// the disconnect. The responder sends one message at a time, of the one
// byte any -S takes (the client does not look at them), until the
// client's first reply shows that it had all it wanted. Its send after
// the client's last receive finds none and waits for one: the
// responder's QP retries RNR NAKs without end, where the client asks for
// no retry, which would fail that send and the QP with it before the
// replies arrive.
//
// UD has no disconnect and ucmatose's client waits for the server's, so
// for both the client's silence after its last message ends the session.

const (
	// MaxUDMessages is the most messages an udaddy client may send: the
	// receives posted before it connects, all on one buffer of the
	// port's MTU, so that a session's memory stays bounded.
	MaxUDMessages = 1024
	// MaxRCMessageSize is the largest reply a ucmatose client may send:
	// its receives share one buffer of this size, registered for the
	// whole session.
	MaxRCMessageSize = 64 << 10

	// rcRecvWindow is the receives kept posted for a ucmatose client's
	// replies; each is posted again once a reply took it.
	rcRecvWindow = 64
	// rcMessageSize is the size of the responder's messages to a
	// ucmatose client: the least any -S of 1 or more takes.
	rcMessageSize = 1
	// retryRNRWithoutEnd is the RNR retry count that never gives up.
	retryRNRWithoutEnd = 7
)

// Answered is what a responder answered: the client's messages, as many
// as went back, and the largest's size.
type Answered struct {
	Messages int
	Bytes    int
}

// exchanged counts an any-count session's messages as they complete.
type exchanged struct {
	received int // the client's messages
	largest  int // bytes
	sent     int // the responder's messages the client took
	// quiet times the gaps between the session's completions
	quiet *pollwait.Silence
}

func newExchanged() *exchanged { return &exchanged{quiet: pollwait.NewSilence(time.Now())} }

// ended is how a session that the client's silence of d ended went: done
// once each of the client's messages had its counterpart.
func (x *exchanged) ended(tool string, d time.Duration) error {
	switch {
	case x.received == 0 && x.sent == 0:
		return cli.WithHint(cli.Failf("the client connected but exchanged no message in %v", d),
			fmt.Sprintf("serve answers %s clients of -C 1 or more and -S 1 or more; one of -C 0 or -S 0 exchanges nothing, which serve cannot tell from a client that stopped", tool))
	case x.received != x.sent:
		return cli.Failf("the client sent %d messages and took %d of serve's, then fell silent for %v", x.received, x.sent, d)
	}
	return nil
}

func (x *exchanged) answered() *Answered {
	return &Answered{Messages: x.received, Bytes: x.largest}
}

// errTooLarge fails a ucmatose session whose client's reply was larger
// than the receives.
func errTooLarge(s rdma.WCStatus) error {
	return cli.WithHint(
		cli.Failf("a reply larger than %d bytes (64 KiB), the most serve takes from a ucmatose client, arrived (its receive failed: %s)", MaxRCMessageSize, s),
		fmt.Sprintf("run ucmatose with -S %d or less", MaxRCMessageSize))
}

// errTooMany fails an udaddy session whose client sent more messages than
// the receives posted for it.
func errTooMany() error {
	return cli.WithHint(
		cli.Failf("more than %d messages arrived, the most serve takes from an udaddy client: the client waits for replies to the rest, which were dropped", MaxUDMessages),
		fmt.Sprintf("run udaddy with -C %d or less", MaxUDMessages))
}

// initAnswering makes what node n of an any-count responder needs, posts
// its receives and accepts the client. ucmatose's QP is the program's
// own, so that its sends retry RNR NAKs without end.
func (t *nodeTest) initAnswering(n *node) int {
	ctx := n.id.Context()
	if ctx == nil {
		return -int(syscall.ENODEV)
	}
	var err error
	if n.pd, err = ctx.AllocPD(); err != nil {
		t.fail.noteCall(err)
		return -1
	}
	if t.ud {
		err = t.initUDAnswering(n, ctx)
	} else {
		err = t.initRCAnswering(n, ctx)
	}
	if err != nil {
		t.fail.noteCall(err)
		return -1
	}
	return 0
}

func (t *nodeTest) initUDAnswering(n *node, ctx rdma.Context) error {
	dg, ok := n.id.(rdma.DatagramID)
	if !ok {
		return &rdma.Error{Op: "rdma_create_qp", Errno: syscall.ENOSYS}
	}
	mtu, err := dg.ActiveMTU()
	if err != nil {
		return err
	}
	// A receive for each message and the one after the bound, which
	// tells a client beyond it; a send for each reply.
	if n.sendCQ, err = ctx.CreateCQ(2*MaxUDMessages+1, nil); err != nil {
		return err
	}
	n.recvCQ = n.sendCQ
	c := rdma.QPCap{MaxSendWR: MaxUDMessages, MaxRecvWR: MaxUDMessages + 1, MaxSendSGE: 1, MaxRecvSGE: 1}
	if n.qp, err = dg.CreateTypedQP(n.pd, n.sendCQ, n.recvCQ, c, rdma.QPTypeUD, false); err != nil {
		return err
	}
	if n.mr, err = n.pd.RegMR(mtu+rdma.GRHSize, rdma.AccessLocalWrite); err != nil {
		return err
	}
	for range MaxUDMessages + 1 {
		if err := n.qp.PostRecv(0, rdma.SGEOf(n.mr, uint32(mtu+rdma.GRHSize))); err != nil {
			return err
		}
	}
	return n.id.Accept(&rdma.ConnParam{QPNum: n.qp.Num()})
}

func (t *nodeTest) initRCAnswering(n *node, ctx rdma.Context) error {
	var err error
	if n.sendCQ, err = ctx.CreateCQ(1, nil); err != nil {
		return err
	}
	if n.recvCQ, err = ctx.CreateCQ(rcRecvWindow, nil); err != nil {
		return err
	}
	c := rdma.QPCap{MaxSendWR: 1, MaxRecvWR: rcRecvWindow, MaxSendSGE: 1, MaxRecvSGE: 1, SigAll: true}
	if n.qp, err = n.pd.CreateRCQP(n.sendCQ, n.recvCQ, c); err != nil {
		return err
	}
	if err = n.id.InitOwnQP(n.qp); err != nil {
		return err
	}
	if n.mr, err = n.pd.RegMR(MaxRCMessageSize, rdma.AccessLocalWrite); err != nil {
		return err
	}
	for range rcRecvWindow {
		if err = n.qp.PostRecv(0, rdma.SGEOf(n.mr, MaxRCMessageSize)); err != nil {
			return err
		}
	}
	rid, ok := n.id.(rdma.RNRRetryCMID)
	if !ok {
		return &rdma.Error{Op: "ibv_modify_qp", Errno: syscall.ENOSYS}
	}
	if err = rid.ReadyOwnQPWithRNRRetry(n.qp, retryRNRWithoutEnd); err != nil {
		return err
	}
	// librdmacm's defaults for the client's QP, as the tool's server
	// accepts with.
	return n.id.Accept(&rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7, QPNum: n.qp.Num()})
}

// answerUD is the data phase with an udaddy client of any -C and -S:
// each message is answered with one of its size until the client falls
// silent.
func (t *nodeTest) answerUD(n *node) error {
	x := newExchanged()
	t.exchanged = x
	var wc [8]rdma.WC
	for {
		var got int
		var err error
		if n.ah == nil {
			got, err = t.pollReply(n, wc[:])
		} else {
			got, err = n.recvCQ.Poll(wc[:])
		}
		if err != nil {
			return err
		}
		for _, w := range wc[:got] {
			if w.Status != rdma.WCSuccess {
				return t.stoppedOr(cli.Failf("a completion failed: %s", w.Status))
			}
			x.quiet.Mark(time.Now())
			if w.Opcode != rdma.WCRecv {
				x.sent++
				continue
			}
			if x.received++; x.received > MaxUDMessages {
				return errTooMany()
			}
			size := int(w.ByteLen) - rdma.GRHSize
			x.largest = max(x.largest, size)
			err := n.qp.PostSend(rdma.SendWR{Op: rdma.WRSendWithImm, Local: rdma.SGEOf(n.mr, uint32(size)), Imm: n.qp.Num(),
				Signaled: true, UD: &rdma.UDDest{AH: n.ah, QPN: n.remoteQPN, QKey: n.remoteKey}})
			if err != nil {
				return err
			}
		}
		if done, err := t.quiet(x, got); done || err != nil {
			return err
		}
	}
}

// answerRC is the data phase with a ucmatose client of any -C and -S:
// one message at a time until the client replies, then its replies until
// it falls silent.
func (t *nodeTest) answerRC(n *node) error {
	x := newExchanged()
	t.exchanged = x
	send := func() error {
		return n.qp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(n.mr, rcMessageSize)})
	}
	if err := send(); err != nil {
		return err
	}
	var wc [8]rdma.WC
	for {
		sent, err := n.sendCQ.Poll(wc[:])
		if err != nil {
			return err
		}
		// A failed send is told once the receives are: a reply that
		// did not fit flushes the send that waits. Once the replies
		// began, that send is the one no receive will take, and some
		// stacks (rxe) give up on it after a while: the QP's end, and
		// so the exchange's.
		var sendFailed error
		qpEnded := false
		for _, w := range wc[:sent] {
			if w.Status != rdma.WCSuccess {
				qpEnded = x.received > 0
				if !qpEnded {
					sendFailed = t.stoppedOr(cli.Failf("message %d to the client failed: %s", x.sent+1, w.Status))
				}
				break
			}
			x.quiet.Mark(time.Now())
			// The client replies only once it has all it wants.
			if x.sent++; x.received == 0 {
				if err := send(); err != nil {
					return err
				}
			}
		}
		received, err := n.recvCQ.Poll(wc[:])
		if err != nil {
			return err
		}
		for _, w := range wc[:received] {
			switch {
			case w.Status.DidNotFit():
				return errTooLarge(w.Status)
			case qpEnded && w.Status == rdma.WCWRFlushErr:
				continue
			case w.Status != rdma.WCSuccess:
				return t.stoppedOr(cli.Failf("reply %d from the client failed: %s", x.received+1, w.Status))
			}
			x.quiet.Mark(time.Now())
			x.received++
			x.largest = max(x.largest, int(w.ByteLen))
			if err := n.qp.PostRecv(0, rdma.SGEOf(n.mr, MaxRCMessageSize)); err != nil {
				return err
			}
		}
		if sendFailed != nil {
			return sendFailed
		}
		if qpEnded {
			return t.stoppedOr(x.ended(t.toolName(), time.Since(x.quiet.Last())))
		}
		if done, err := t.quiet(x, sent+received); done || err != nil {
			return err
		}
	}
}

// stoppedOr is err, or errStopped when the run's context ended: serve's
// stop flushes the work of the sessions it ends.
func (t *nodeTest) stoppedOr(err error) error {
	if t.o.stopped() {
		return errStopped
	}
	return err
}

// quiet is a data phase's pause after a poll that got n completions:
// done once the client's silence ends the session, and how it went.
func (t *nodeTest) quiet(x *exchanged, n int) (bool, error) {
	if n > 0 {
		return false, nil
	}
	if t.o.stopped() {
		return true, errStopped
	}
	if d := x.quiet.Limit(t.o.Timeout); time.Since(x.quiet.Last()) >= d {
		return true, x.ended(t.toolName(), d)
	}
	time.Sleep(responderPollGap)
	return false, nil
}
