package perf

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The data paths over an rdma.PerfEndpoint: a bandwidth run is one call
// into the endpoint (its loop runs in C, nothing allocated per message),
// and so is send_lat with --busy-poll; the receiver and the other latency
// loops are Go loops of single posts and waits (pingpong.go), timed here.

// Stream is one bandwidth run by the active side: on each QP, Iters
// operations of Size bytes from the start of its span of the buffer to its
// peer's VAddr, at most TxDepth in flight, one completion per CQMod. With
// Duration set it runs for that long instead (Iters then bounds nothing).
type Stream struct {
	Test     Test
	Atomic   string // the atomic tests' -A
	Size     int
	Iters    int
	TxDepth  int
	CQMod    int
	PostList int
	Inline   bool   // the payload travels in the request
	Span     int    // bytes of the buffer per QP
	Remotes  []Dest // one per QP
	Duration time.Duration
	Margin   time.Duration // left out at each end of a Duration
	Idle     time.Duration // the longest wait for any completion
	// Tail is what the previous timed run on these QPs left in flight
	// unseen (BWTiming.Tail): --run_infinitely's periods follow each
	// other, and each Continues.
	Tail      []int
	Continues bool
	// Pace is the rate limiter's schedule; zero sends unpaced.
	Pace rdma.Pace
	// Events sleeps on the send CQ's channel between completions (-e, or
	// one CPU: Resolved.sleeps).
	Events bool
	// Receive, with send_bw -b, is the peer's messages taken meanwhile;
	// AfterFirstMessage posts nothing before the first (the server).
	Receive           *recvRun
	AfterFirstMessage bool
}

// opcodeOf is the test's operation; atomic names the atomic one.
func opcodeOf(t Test, atomic string) rdma.WROpcode {
	switch {
	case t.IsSend():
		return rdma.WRSend
	case t.IsWrite():
		return rdma.WRRDMAWrite
	case t.IsAtomic() && atomic == CmpAndSwap:
		return rdma.WRAtomicCmpAndSwp
	case t.IsAtomic():
		return rdma.WRAtomicFetchAndAdd
	}
	return rdma.WRRDMARead
}

// sgeAt is the entry for size bytes at offset off of ep's buffer, in QP
// qp's share of it.
func sgeAt(ep rdma.PerfEndpoint, qp, off, size int) rdma.SGE {
	return rdma.SGE{Addr: ep.Addr() + uint64(off), Len: uint32(size), LKey: ep.LKey(qp)}
}

// runStream keeps TxDepth operations in flight until Iters have completed
// (or Duration has passed), as perftest's run_iter_bw.
func runStream(ep rdma.PerfEndpoint, s Stream) (BWTiming, error) {
	spec := rdma.Stream{
		Op: opcodeOf(s.Test, s.Atomic), Iters: s.Iters, TxDepth: s.TxDepth, CQMod: s.CQMod, PostList: s.PostList, Duration: s.Duration, Idle: s.Idle,
		Margin: s.Margin, Inline: s.Inline, Tail: s.Tail, Continues: s.Continues, Pace: s.Pace, Events: s.Events, AfterFirstMessage: s.AfterFirstMessage,
	}
	if r := s.Receive; r != nil {
		spec.Receive = &rdma.Receive{SGEs: r.SGEs, Iters: r.Iters, RxDepth: r.RxDepth, PostList: r.PostList, Idle: r.Timeout, Events: r.Events}
	}
	for i, r := range s.Remotes {
		spec.Targets = append(spec.Targets, rdma.StreamTarget{Local: sgeAt(ep, i, i*s.Span, s.Size), RemoteAddr: r.VAddr, RKey: r.RKey})
	}
	t := BWTiming{Size: uint64(s.Size), CQMod: s.CQMod}
	total := s.Iters * len(s.Remotes)
	if s.Duration <= 0 {
		t.Posted, t.Completed = make([]int64, total), make([]int64, total)
		spec.Posted, spec.Completed = t.Posted, t.Completed
	}
	res, err := ep.Stream(spec)
	if err != nil {
		if s.Duration > 0 { // a timed run has no count to reach
			return t, fmt.Errorf("%s after %d completions of a %v run: %w", opcodeName(s.Test), res.Completed, s.Duration, err)
		}
		return t, fmt.Errorf("%s after %d of %d: %w", opcodeName(s.Test), res.Completed, total, err)
	}
	if s.Duration > 0 {
		t.Posted, t.Completed, t.Count, t.NoPeak = []int64{res.First}, []int64{res.Last}, res.Completed, true
		t.Tail = res.Tail
	} else {
		t.Ended = res.Ended
	}
	return t, nil
}

// recvRun is send_bw's receiving side of one size: Iters messages on
// each QP, into SGEs[qp], with RxDepth receives posted per QP at the
// start and re-posted PostList at a time.
type recvRun struct {
	Iters, RxDepth int
	PostList       int
	Size           int // the messages' size; a receive may hold more (UD's GRH)
	SGEs           []rdma.SGE
	Timeout        time.Duration // the longest wait for any message
	// Events sleeps on the receive CQ's channel between messages (-e, or
	// one CPU: Resolved.sleeps).
	Events bool
}

// reposts gathers, per QP, the receives to post again after a poll, so
// that a QP gets one post call per poll, in whole lists of list.
type reposts struct {
	sges []rdma.SGE
	list int
	due  [rdma.MaxPerfQPs]int
}

// qpOf checks a receive's completion and names its QP, its work request ID.
func (p *reposts) qpOf(w rdma.WC) (int, error) {
	if w.Status != rdma.WCSuccess {
		return 0, &rdma.WCError{Status: w.Status, VendorErr: w.VendorErr}
	}
	if q := int(w.WRID); q < len(p.sges) {
		return q, nil
	}
	return 0, fmt.Errorf("a completion for QP %d of %d", w.WRID, len(p.sges))
}

// take polls cq once into wc, checks each receive's completion and counts
// it due on its QP. n is the number taken: on a failed completion, those
// before it.
func (p *reposts) take(cq rdma.CQ, wc []rdma.WC) (taken int, err error) {
	n, err := cq.Poll(wc)
	if err != nil {
		return 0, err
	}
	return p.count(wc[:n])
}

// count checks each receive's completion of wc and counts it due on its
// QP; on a failed one it stops, and taken is those before it.
func (p *reposts) count(wc []rdma.WC) (taken int, err error) {
	for _, w := range wc {
		q, err := p.qpOf(w)
		if err != nil {
			return taken, err
		}
		p.due[q]++
		taken++
	}
	return taken, nil
}

// await is take sleeping on cq's channel until a completion comes or
// timeout passed (then 0).
func (p *reposts) await(cq rdma.CQ, wc []rdma.WC, timeout time.Duration) (taken int, err error) {
	n, _, err := cq.Await(wc, nil, max(timeout, 0))
	if errors.Is(err, rdma.ErrTimeout) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return p.count(wc[:n])
}

// post posts the receives due, in whole lists, and keeps the rest due.
func (p *reposts) post(ep rdma.PerfEndpoint) error {
	list := max(p.list, 1)
	for q, due := range p.due[:len(p.sges)] {
		if k := due / list * list; k > 0 {
			if err := ep.PostRecvs(q, k, p.sges[q]); err != nil {
				return err
			}
			p.due[q] -= k
		}
	}
	return nil
}

// receive takes the messages of r on the receive CQ the QPs share, in
// one call of the endpoint (its loop runs in C), and times the first and
// the last.
func receive(ep rdma.PerfEndpoint, r recvRun) (BWTiming, error) {
	total := r.Iters * len(r.SGEs)
	res, err := ep.Receive(rdma.Receive{SGEs: r.SGEs, Iters: r.Iters, RxDepth: r.RxDepth, PostList: r.PostList, Idle: r.Timeout, Events: r.Events})
	if err != nil {
		return BWTiming{}, fmt.Errorf("receive %d of %d: %w", res.Completed+1, total, err)
	}
	return BWTiming{Size: uint64(r.Size), Posted: []int64{res.First}, Completed: []int64{res.Last}, Count: res.Completed, NoPeak: true}, nil
}

// receiveFor is send_bw's server with -D: it takes messages for d from the
// first one, as perftest's alarm does, re-posting every receive, and
// counts those of the sample window (see durClock) between the clock at
// the window's first and last message.
func receiveFor(ep rdma.PerfEndpoint, clock func() int64, r recvRun, d, margin time.Duration) (BWTiming, error) {
	cq := ep.RecvCQ()
	var wc [16]rdma.WC
	re := reposts{sges: r.SGEs, list: r.PostList}
	dc := newDurClock(d, margin)
	var first, last int64
	deadline := time.Now().Add(r.Timeout)
	for spins := 0; dc.state != durEnd; spins++ {
		var n int
		var err error
		if r.Events {
			n, err = re.await(cq, wc[:], dc.untilNext(time.Now(), time.Until(deadline)))
		} else {
			n, err = re.take(cq, wc[:])
		}
		if n == 0 && err == nil {
			if r.Events || spins&0xfff == 0xfff {
				now := time.Now()
				dc.tick(now)
				if dc.start.IsZero() && now.After(deadline) {
					return BWTiming{}, fmt.Errorf("receive the first message: %w", syscall.ETIMEDOUT)
				}
			}
			continue
		}
		now := time.Now()
		dc.begin(now)
		before := dc.iters
		for range n {
			dc.count(now)
		}
		if err != nil {
			return BWTiming{}, fmt.Errorf("receive after %d: %w", dc.iters, err)
		}
		if dc.iters > before {
			if last = clock(); before == 0 {
				first = last
			}
		}
		if err := re.post(ep); err != nil {
			return BWTiming{}, err
		}
	}
	return BWTiming{Size: uint64(r.Size), Posted: []int64{first}, Completed: []int64{last}, Count: dc.iters, NoPeak: true}, nil
}

// receiveForever is send_bw's server under --run_infinitely (perftest's
// run_iter_bw_infinitely_server): it takes and re-posts messages without
// end and hands row each period's timing, the period running from one
// row to the next. It returns row's error, errPeerLeft once peerLeft says
// so at a period's end, or the first failed receive.
func receiveForever(ep rdma.PerfEndpoint, clock func() int64, r recvRun, period time.Duration, row func(BWTiming) error, peerLeft func() bool) error {
	cq := ep.RecvCQ()
	var wc [16]rdma.WC
	re := reposts{sges: r.SGEs, list: r.PostList}
	var count uint64
	from, end := clock(), time.Now().Add(period)
	for spins := 0; ; spins++ {
		var n int
		var err error
		if r.Events {
			n, err = re.await(cq, wc[:], time.Until(end))
		} else {
			n, err = re.take(cq, wc[:])
		}
		if err != nil {
			return fmt.Errorf("receive: %w", err)
		}
		count += uint64(n)
		if err := re.post(ep); err != nil {
			return err
		}
		if n > 0 || r.Events || spins&0xfff == 0xfff {
			if now := time.Now(); !now.Before(end) {
				to := clock()
				if err := row(BWTiming{Size: uint64(r.Size), Posted: []int64{from}, Completed: []int64{to}, Count: count, NoPeak: true}); err != nil {
					return err
				}
				if peerLeft() {
					return errPeerLeft
				}
				count, from, end = 0, to, now.Add(period)
			}
		}
	}
}

// errPeerLeft ends a --run_infinitely server: the client went away, the
// one way such a run ends.
var errPeerLeft = errors.New("the client left: a --run_infinitely run ends when its client is stopped")

func opcodeName(t Test) string {
	switch {
	case t.IsSend():
		return "SEND"
	case t.IsWrite():
		return "RDMA_WRITE"
	case t.IsAtomic():
		return "ATOMIC"
	}
	return "RDMA_READ"
}

// monotonic is the data paths' clock: nanoseconds since the process
// started looking, monotonic.
var clockBase = time.Now()

func monotonic() int64 { return int64(time.Since(clockBase)) }

// sessionClock gives each run its clock; tests count instead.
var sessionClock = func() func() int64 { return monotonic }
