package perf

import (
	"fmt"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The data paths: tight loops over pkg/cgoverbs, one cgo call per burst of
// posts and per batch of completions, nothing allocated per message.

// listCap bounds one post list (and so the burst of one ibv_post_send).
// On rxe one request per post measured best (write_bw 64 KiB in the lab:
// 24.6 and 22.8 MB/s against 18.7 and 7.6 with lists of 64): the post
// syscall then does the protocol work inline, as it does for perftest.
const listCap = 1

func opcodeOf(t Test) cgoverbs.Opcode {
	switch {
	case t.IsSend():
		return cgoverbs.OpSend
	case t.IsWrite():
		return cgoverbs.OpRDMAWrite
	}
	return cgoverbs.OpRDMARead
}

// Stream keeps TxDepth operations in flight until Iters have completed
// (or Duration has passed), as perftest's run_iter_bw.
func (e *realEndpoint) Stream(s Stream) (BWTiming, error) {
	list, err := cgoverbs.NewSendList(min(listCap, s.TxDepth), opcodeOf(s.Test), e.sge(0, s.Size), s.RemoteAddr, s.RKey, false)
	if err != nil {
		return BWTiming{}, err
	}
	defer list.Close()
	if s.Duration > 0 {
		return e.streamFor(s, list)
	}
	iters := s.Iters
	t := BWTiming{Size: uint64(s.Size), CQMod: s.CQMod, Posted: make([]int64, iters), Completed: make([]int64, iters)}
	// The whole loop runs in C: a Go loop of short cgo calls let the
	// scheduler hand the thread off between post and poll, which cost
	// half the bandwidth under emulation.
	n, err := list.StreamRun(e.qp, e.sendCQ, s.TxDepth, s.CQMod, t.Posted, t.Completed, time.Minute)
	if err != nil {
		return t, fmt.Errorf("%s after %d of %d: %w", opcodeName(s.Test), n, iters, err)
	}
	return t, nil
}

// streamFor is Stream's duration mode: it counts completions for
// s.Duration and reports the average only.
func (e *realEndpoint) streamFor(s Stream, list *cgoverbs.SendList) (BWTiming, error) {
	const unbounded = ^uint64(0)
	start := now()
	end := start + int64(s.Duration)
	var scnt, ccnt uint64
	var last int64
	for {
		stop := now() >= end
		if !stop && scnt-ccnt < uint64(s.TxDepth) {
			n := min(s.TxDepth-int(scnt-ccnt), listCap)
			if err := list.Post(e.qp, scnt, n, s.CQMod, unbounded); err != nil {
				return BWTiming{}, err
			}
			scnt += uint64(n)
		}
		// Requests after the last signalled one complete unseen.
		if stop && ccnt >= scnt-scnt%uint64(s.CQMod) {
			break
		}
		n, err := e.sendCQ.PollIDs(e.ids[:])
		if n > 0 {
			last = now()
			for _, id := range e.ids[:n] {
				ccnt = max(ccnt, id+1)
			}
		}
		if err != nil {
			return BWTiming{}, fmt.Errorf("%s after %d: %w", opcodeName(s.Test), ccnt, err)
		}
	}
	return BWTiming{Size: uint64(s.Size), CQMod: s.CQMod, Posted: []int64{start}, Completed: []int64{last}, Count: ccnt, NoPeak: true}, nil
}

// Receive takes iters messages on the receive CQ, re-posting a receive
// for each while more are due, and times the first and the last.
func (e *realEndpoint) Receive(iters, size, off, rxDepth int, timeout time.Duration) (BWTiming, error) {
	sge := e.sge(off, size)
	var first, last int64
	rcnt := 0
	deadline := now() + int64(timeout)
	for spins := 0; rcnt < iters; spins++ {
		n, err := e.recvCQ.PollIDs(e.ids[:])
		if n == 0 && spins&0xffff == 0xffff && now() > deadline {
			return BWTiming{}, fmt.Errorf("receive %d of %d: %w", rcnt+1, iters, syscall.ETIMEDOUT)
		}
		if n > 0 {
			last = now()
			deadline = last + int64(timeout)
			if rcnt == 0 {
				first = last
			}
			rcnt += n
			if more := min(n, iters-(rcnt-n)-rxDepth); more > 0 {
				if err := e.qp.PostRecvs(more, sge); err != nil {
					return BWTiming{}, err
				}
			}
		}
		if err != nil {
			return BWTiming{}, fmt.Errorf("receive after %d of %d: %w", rcnt, iters, err)
		}
	}
	return BWTiming{Size: uint64(size), Posted: []int64{first}, Completed: []int64{last}, Count: uint64(rcnt), NoPeak: true}, nil
}

// PingPong runs a latency test's loop (run_iter_lat_send, _lat_write, _lat).
func (e *realEndpoint) PingPong(p PingPong) ([]int64, error) {
	switch {
	case p.Test.IsSend():
		return e.sendPingPong(p)
	case p.Test.IsWrite():
		return e.writePingPong(p)
	}
	return e.readLoop(p)
}

func (e *realEndpoint) sendPingPong(p PingPong) ([]int64, error) {
	posted := make([]int64, p.Iters)
	recvSGE := e.sge(p.LocalOff, p.Size)
	wr := cgoverbs.SendWR{Op: cgoverbs.OpSend, Local: e.sge(0, p.Size), Signaled: true}
	scnt, rcnt := 0, 0
	for scnt < p.Iters || rcnt < p.Iters {
		if rcnt < p.Iters && !(scnt < 1 && p.Client) {
			if err := e.wait(e.recvCQ, p); err != nil {
				return nil, fmt.Errorf("receive %d of %d: %w", rcnt+1, p.Iters, err)
			}
			rcnt++
			if rcnt+p.RxDepth <= p.Iters {
				if err := e.qp.PostRecv(0, recvSGE); err != nil {
					return nil, err
				}
			}
		}
		if scnt < p.Iters {
			posted[scnt] = now()
			scnt++
			if err := e.qp.PostSend(wr); err != nil {
				return nil, err
			}
			if err := e.wait(e.sendCQ, p); err != nil {
				return nil, fmt.Errorf("send %d of %d: %w", scnt, p.Iters, err)
			}
		}
	}
	return posted, nil
}

func (e *realEndpoint) writePingPong(p PingPong) ([]int64, error) {
	posted := make([]int64, p.Iters)
	buf := e.buf.Bytes()
	postOff, pollOff := p.Size-1, p.LocalOff+p.Size-1
	wr := cgoverbs.SendWR{Op: cgoverbs.OpRDMAWrite, Local: e.sge(0, p.Size), RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true}
	scnt, rcnt, ccnt := 0, 0, 0
	for scnt < p.Iters || ccnt < p.Iters || rcnt < p.Iters {
		if rcnt < p.Iters && !(scnt < 1 && !p.Client) {
			rcnt++
			if err := e.buf.SpinByte(pollOff, byte(rcnt), p.Timeout, !p.BusyPoll); err != nil {
				return nil, fmt.Errorf("waiting for the peer's write %d of %d: %w", rcnt, p.Iters, err)
			}
		}
		if scnt < p.Iters {
			posted[scnt] = now()
			scnt++
			buf[postOff] = byte(scnt)
			if err := e.qp.PostSend(wr); err != nil {
				return nil, err
			}
		}
		if ccnt < p.Iters {
			if err := e.wait(e.sendCQ, p); err != nil {
				return nil, fmt.Errorf("write %d of %d: %w", ccnt+1, p.Iters, err)
			}
			ccnt++
		}
	}
	return posted, nil
}

func (e *realEndpoint) readLoop(p PingPong) ([]int64, error) {
	posted := make([]int64, p.Iters)
	wr := cgoverbs.SendWR{Op: cgoverbs.OpRDMARead, Local: e.sge(0, p.Size), RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true}
	for i := range posted {
		posted[i] = now()
		if err := e.qp.PostSend(wr); err != nil {
			return nil, err
		}
		if err := e.wait(e.sendCQ, p); err != nil {
			return nil, fmt.Errorf("read %d of %d: %w", i+1, p.Iters, err)
		}
	}
	return posted, nil
}

// wait takes one completion from cq: spinning on it with --busy-poll (as
// perftest does), otherwise sleeping on its completion channel so that a
// small VM's one CPU goes to the peer. Every latency wait goes through
// here, so the waiting policy lives in one place.
func (e *realEndpoint) wait(cq *cgoverbs.CQ, p PingPong) error {
	if p.BusyPoll || !e.events {
		deadline := int64(0)
		for spins := 0; ; spins++ {
			n, err := cq.PollIDs(e.ids[:1])
			if err != nil {
				return err
			}
			if n == 1 {
				return nil
			}
			if spins&0xffff == 0xffff {
				if deadline == 0 {
					deadline = now() + int64(p.Timeout)
				} else if now() > deadline {
					return syscall.ETIMEDOUT
				}
			}
		}
	}
	n, _, err := cq.Await(e.wc[:], -1, p.Timeout)
	if err != nil {
		return err
	}
	if n == 1 && e.wc[0].Status != 0 {
		return &rdma.WCError{Status: e.wc[0].Status, VendorErr: e.wc[0].VendorErr}
	}
	return nil
}

func opcodeName(t Test) string {
	switch {
	case t.IsSend():
		return "SEND"
	case t.IsWrite():
		return "RDMA_WRITE"
	}
	return "RDMA_READ"
}
