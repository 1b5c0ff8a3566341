package rdmatest

import (
	"context"
	"errors"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

var _ rdma.PingPonger = (*CQ)(nil)

// pingPongTick is how long the fake's loop sleeps on the CQ before it
// looks at its context again.
const pingPongTick = 10 * time.Millisecond

// PingPong runs the tools' loop over the fake's own verbs, to the contract
// cgoverbs's C loop keeps. Both modes sleep on the CQ: the fake has no
// CPU of its own to spin on.
func (cq *CQ) PingPong(ctx context.Context, p *rdma.PingPong, idle time.Duration) error {
	r := &pingPongRun{PingPong: p, pending: make([]uint64, len(p.QPs))}
	wcs := make([]rdma.WC, 2)
	low := 1
	if p.SRQ != nil {
		wcs = make([]rdma.WC, min(len(p.QPs)+p.RxDepth, 16))
		low = len(p.QPs)
	}
	now := func() int64 { return time.Now().UnixNano() }
	for i := range p.QPs {
		r.pending[i] = p.RecvID
		if !p.Client {
			continue
		}
		if err := r.postSend(i); err != nil {
			p.Stop = rdma.PingPongSendFailed
			return nil
		}
	}
	p.Began = now()
	if p.Stamps != nil {
		p.Stamps[0] = p.Began
	}
	fail := func(stop rdma.PingPongStop, wc rdma.WC, ne int) error {
		p.Stop, p.WC, p.Polled = stop, wc, ne
		return nil
	}
	last := time.Now()
	for p.Received < p.Iters || p.Sent < p.Iters {
		if ctx.Err() != nil {
			p.Stop = rdma.PingPongCancelled
			return nil
		}
		step := pingPongTick
		if idle >= 0 {
			left := idle - time.Since(last)
			if left <= 0 {
				p.Stop = rdma.PingPongIdle
				return nil
			}
			step = min(step, left)
		}
		ne, _, err := cq.Await(wcs, nil, step)
		if errors.Is(err, rdma.ErrTimeout) {
			continue
		}
		if err != nil {
			return err
		}
		last = time.Now()
		for _, wc := range wcs[:ne] {
			if wc.Status != rdma.WCSuccess {
				return fail(rdma.PingPongFailedStatus, wc, ne)
			}
			qi := 0
			if p.SRQ != nil {
				qi = -1
				for i, qp := range p.QPs {
					if qp.Num() == wc.QPNum {
						qi = i
					}
				}
				if qi < 0 {
					return fail(rdma.PingPongUnknownQPN, wc, ne)
				}
			}
			topUp := false
			switch wc.WRID {
			case p.SendID:
				p.Sent += r.covering
			case p.RecvID:
				if p.Outstanding--; p.Outstanding == low {
					topUp = true // after the answer, as the C loop does
				} else if p.Outstanding < low && !topUpPingPongRecvs(p) {
					return fail(rdma.PingPongRecvsShort, wc, ne)
				}
				p.Received++
				if p.Stamps != nil {
					p.Stamps[p.Received] = now()
				}
			default:
				return fail(rdma.PingPongUnknownWRID, wc, ne)
			}
			r.pending[qi] &^= wc.WRID
			if p.Posted < p.Iters && r.pending[qi] == 0 {
				if err := r.postSend(qi); err != nil {
					return fail(rdma.PingPongSendFailed, wc, ne)
				}
			}
			if topUp && !topUpPingPongRecvs(p) {
				return fail(rdma.PingPongRecvsShort, wc, ne)
			}
		}
	}
	p.Ended = now()
	p.Stop = rdma.PingPongDone
	return nil
}

// pingPongRun is a run's state the caller does not see.
type pingPongRun struct {
	*rdma.PingPong
	pending []uint64 // per QP, the wr ids it waits for
	// sends posted since the last signaled one, and how many the
	// signaled one in flight stands for
	unsignaled, covering int
}

// postSend posts QP qi's next send, signaled as the C loop signals it.
func (r *pingPongRun) postSend(qi int) error {
	p := r.PingPong
	every := p.SignalEvery
	if len(p.QPs) > 1 {
		every = 1
	}
	signaled := r.unsignaled+1 >= every || p.Posted+1 >= p.Iters
	wr := rdma.SendWR{ID: p.SendID, Op: rdma.WRSend, Signaled: signaled, Inline: p.Inline, Local: p.Send, UD: p.UD}
	if err := p.QPs[qi].PostSend(wr); err != nil {
		return err
	}
	p.Posted++
	r.unsignaled++
	r.pending[qi] = p.RecvID
	if signaled {
		r.covering, r.unsignaled = r.unsignaled, 0
		r.pending[qi] |= p.SendID
	}
	return nil
}

// topUpPingPongRecvs posts receives up to RxDepth; false when some are
// missing.
func topUpPingPongRecvs(p *rdma.PingPong) bool {
	p.Outstanding += postPingPongRecvs(p, p.RxDepth-p.Outstanding)
	return p.Outstanding == p.RxDepth
}

// postPingPongRecvs posts up to n receives, stopping at the first refusal
// as the tools do.
func postPingPongRecvs(p *rdma.PingPong, n int) int {
	for i := 0; i < n; i++ {
		var err error
		if p.SRQ != nil {
			err = p.SRQ.PostRecv(p.RecvID, p.Recv)
		} else {
			err = p.QPs[0].PostRecv(p.RecvID, p.Recv)
		}
		if err != nil {
			return i
		}
	}
	return n
}
