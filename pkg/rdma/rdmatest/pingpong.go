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
	if len(p.Pending) != len(p.QPs) {
		p.Pending = make([]uint64, len(p.QPs))
	}
	wcs := make([]rdma.WC, 2)
	low := 1
	if p.SRQ != nil {
		wcs = make([]rdma.WC, min(len(p.QPs)+p.RxDepth, 16))
		low = len(p.QPs)
	}
	now := func() int64 { return time.Now().UnixNano() }
	for i := range p.QPs {
		p.Pending[i] = p.RecvID
		if !p.Client {
			continue
		}
		if err := postPingPongSend(p, i); err != nil {
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
				p.Sent += p.Covering
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
			p.Pending[qi] &^= wc.WRID
			if p.Posted < p.Iters && p.Pending[qi] == 0 {
				if err := postPingPongSend(p, qi); err != nil {
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

// postPingPongSend posts QP qi's next send, signaled as the C loop
// signals it.
func postPingPongSend(p *rdma.PingPong, qi int) error {
	every := p.SignalEvery
	if len(p.QPs) > 1 {
		every = 1
	}
	signaled := p.Unsignaled+1 >= every || p.Posted+1 >= p.Iters
	wr := rdma.SendWR{ID: p.SendID, Op: rdma.WRSend, Signaled: signaled, Inline: p.Inline, Local: p.Send, UD: p.UD}
	if err := p.QPs[qi].PostSend(wr); err != nil {
		return err
	}
	p.Posted++
	p.Unsignaled++
	p.Pending[qi] = p.RecvID
	if signaled {
		p.Covering, p.Unsignaled = p.Unsignaled, 0
		p.Pending[qi] |= p.SendID
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
