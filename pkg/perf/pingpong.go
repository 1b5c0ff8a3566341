package perf

import (
	"fmt"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// PingPong is one latency run.
type PingPong struct {
	Test       Test
	Atomic     string // the atomic tests' -A
	Client     bool
	Size       int
	Iters      int
	RxDepth    int
	LocalOff   int // where the peer's messages land in our buffer
	RecvExtra  int // what a receive holds beyond the message (UD's GRH)
	RemoteAddr uint64
	RKey       uint32
	BusyPoll   bool
	Inline     bool // the payload travels in the request
	Timeout    time.Duration
}

// pinger runs latency loops (perftest's run_iter_lat_send, _lat_write and
// _lat) over one endpoint and returns the post times. Every wait for a
// completion goes through wait: the one place that chooses between
// polling and sleeping.
type pinger struct {
	ep    rdma.PerfEndpoint
	clock func() int64
	// One adaptive policy per wait site: a send completes in a fraction
	// of the time the peer's next message takes to arrive.
	sendWait, recvWait *pollwait.Policy
	wc                 [1]rdma.WC
}

func newPinger(ep rdma.PerfEndpoint, clock func() int64, busyPoll bool) *pinger {
	mode := pollwait.Adaptive
	if busyPoll {
		mode = pollwait.BusyPoll
	}
	cpus := pollwait.AvailableCPUs()
	return &pinger{
		ep: ep, clock: clock,
		sendWait: pollwait.New(pollwait.Config{Mode: mode, CPUs: cpus}),
		recvWait: pollwait.New(pollwait.Config{Mode: mode, CPUs: cpus}),
	}
}

func (g *pinger) run(p PingPong) ([]int64, error) {
	switch {
	case p.Test.IsSend():
		return g.send(p)
	case p.Test.IsWrite():
		return g.write(p)
	}
	return g.read(p)
}

func (g *pinger) send(p PingPong) ([]int64, error) {
	posted := make([]int64, p.Iters)
	recvSGE := sgeAt(g.ep, 0, p.LocalOff, p.Size+p.RecvExtra)
	if p.BusyPoll {
		// perftest's loop, all in the endpoint: with the Go loop of
		// single posts and polls t_typical was 1.31x ib_send_lat's in
		// the lab at 2 vCPUs, with this one 1.08x (same boot).
		err := g.ep.SendPingPong(rdma.SendPingPong{
			Local: sgeAt(g.ep, 0, 0, p.Size), Recv: recvSGE, Iters: p.Iters, RxDepth: p.RxDepth,
			Client: p.Client, Inline: p.Inline, Idle: p.Timeout, Posted: posted,
		})
		return posted, err
	}
	wr := rdma.SendWR{Op: rdma.WRSend, Local: sgeAt(g.ep, 0, 0, p.Size), Signaled: true, Inline: p.Inline}
	scnt, rcnt := 0, 0
	for scnt < p.Iters || rcnt < p.Iters {
		if rcnt < p.Iters && !(scnt < 1 && p.Client) {
			if err := g.wait(g.ep.RecvCQ(), g.recvWait, p.Timeout); err != nil {
				return nil, fmt.Errorf("receive %d of %d: %w", rcnt+1, p.Iters, err)
			}
			rcnt++
			if rcnt+p.RxDepth <= p.Iters {
				if err := g.ep.PostRecvs(0, 1, recvSGE); err != nil {
					return nil, err
				}
			}
		}
		if scnt < p.Iters {
			posted[scnt] = g.clock()
			scnt++
			if err := g.ep.PostSend(wr); err != nil {
				return nil, err
			}
			if err := g.wait(g.ep.SendCQ(), g.sendWait, p.Timeout); err != nil {
				return nil, fmt.Errorf("send %d of %d: %w", scnt, p.Iters, err)
			}
		}
	}
	return posted, nil
}

// write: each side RDMA-writes its count into the last byte of the
// peer's message and watches its own for the peer's.
func (g *pinger) write(p PingPong) ([]int64, error) {
	posted := make([]int64, p.Iters)
	buf := g.ep.Buffer()
	postOff, pollOff := p.Size-1, p.LocalOff+p.Size-1
	wr := rdma.SendWR{Op: rdma.WRRDMAWrite, Local: sgeAt(g.ep, 0, 0, p.Size), RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true, Inline: p.Inline}
	if p.BusyPoll {
		// perftest's loop, all in the endpoint, as send_lat's.
		err := g.ep.WritePingPong(rdma.WritePingPong{Local: wr.Local, RemoteAddr: wr.RemoteAddr, RKey: wr.RKey, PollOff: pollOff,
			Iters: p.Iters, Client: p.Client, Inline: p.Inline, Idle: p.Timeout, Posted: posted})
		return posted, err
	}
	scnt, rcnt, ccnt := 0, 0, 0
	for scnt < p.Iters || ccnt < p.Iters || rcnt < p.Iters {
		if rcnt < p.Iters && !(scnt < 1 && !p.Client) {
			rcnt++
			if err := g.ep.WaitByte(pollOff, byte(rcnt), p.Timeout, !p.BusyPoll); err != nil {
				return nil, fmt.Errorf("waiting for the peer's write %d of %d: %w", rcnt, p.Iters, err)
			}
		}
		if scnt < p.Iters {
			posted[scnt] = g.clock()
			scnt++
			buf[postOff] = byte(scnt)
			if err := g.ep.PostSend(wr); err != nil {
				return nil, err
			}
		}
		if ccnt < p.Iters {
			if err := g.wait(g.ep.SendCQ(), g.sendWait, p.Timeout); err != nil {
				return nil, fmt.Errorf("write %d of %d: %w", ccnt+1, p.Iters, err)
			}
			ccnt++
		}
	}
	return posted, nil
}

func (g *pinger) read(p PingPong) ([]int64, error) {
	posted := make([]int64, p.Iters)
	wr := rdma.SendWR{Op: opcodeOf(p.Test, p.Atomic), Local: sgeAt(g.ep, 0, 0, p.Size), RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true}
	if p.BusyPoll {
		// perftest's loop, all in the endpoint, as send_lat's.
		err := g.ep.RequestPingPong(rdma.RequestPingPong{Op: wr.Op, Local: wr.Local, RemoteAddr: wr.RemoteAddr, RKey: wr.RKey,
			Iters: p.Iters, Idle: p.Timeout, Posted: posted})
		if err != nil {
			return nil, fmt.Errorf("%s %w", opcodeName(p.Test), err)
		}
		return posted, nil
	}
	for i := range posted {
		posted[i] = g.clock()
		if err := g.ep.PostSend(wr); err != nil {
			return nil, err
		}
		if err := g.wait(g.ep.SendCQ(), g.sendWait, p.Timeout); err != nil {
			return nil, fmt.Errorf("%s request %d of %d: %w", opcodeName(p.Test), i+1, p.Iters, err)
		}
	}
	return posted, nil
}

// wait takes one completion from cq. With --busy-poll it spins, as
// perftest does; otherwise it polls for as long as pol grants (never on
// one CPU, where polling would starve the peer and rxe's kernel work) and
// then sleeps on the CQ's completion channel.
func (g *pinger) wait(cq rdma.CQ, pol *pollwait.Policy, timeout time.Duration) error {
	start := time.Now()
	budget := pol.Spin()
	var n int
	var spun time.Duration
	var err error
	switch {
	case budget == pollwait.Forever:
		var expired bool
		n, expired, err = pollwait.PollUntil(timeout, func() (int, error) { return cq.Poll(g.wc[:]) })
		if expired {
			err = syscall.ETIMEDOUT
		}
		if err == nil {
			pol.Observe(time.Since(start), time.Since(start), true)
		}
		return g.status(n, err)
	case budget > 0:
		if n, spun, err = pollwait.SpinPoll(min(budget, timeout), func() (int, error) { return cq.Poll(g.wc[:]) }); n != 0 || err != nil {
			pol.Observe(time.Since(start), spun, true)
			return g.status(n, err)
		}
	}
	for n == 0 && err == nil {
		n, _, err = cq.Await(g.wc[:], nil, max(timeout-time.Since(start), 0))
	}
	if n > 0 {
		pol.Observe(time.Since(start), spun, false)
	}
	return g.status(n, err)
}

// busyPoll spins on cq until a completion comes or timeout passes; the
// clock is read only every few thousand polls.
func (g *pinger) status(n int, err error) error {
	if err != nil {
		return err
	}
	if n == 1 && g.wc[0].Status != rdma.WCSuccess {
		return &rdma.WCError{Status: g.wc[0].Status, VendorErr: g.wc[0].VendorErr}
	}
	return nil
}
