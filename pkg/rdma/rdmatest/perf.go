package rdmatest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The perf endpoints (rdma.Perf): QPs of the fabric sharing two CQs and
// one memory region, their data paths run over the QPs' verbs. Each
// endpoint has a clock its data paths stamp with, as perftest stamps with
// the CPU's counter: with a wire time set (SetWireTime) it is virtual and
// advances by it for every message the endpoint sends or takes, so that
// timings are exact; without, it is the monotonic clock.

// perfMaxInline is the most inline data a perf endpoint's QPs hold: asked
// for more, they give this much, as providers may.
const perfMaxInline = 512

// SetWireTime makes each message a perf endpoint sends or takes last d on
// its clock, and a timed Stream post its messages d apart in real time.
func (f *Fabric) SetWireTime(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wire = d
}

// perfEndpoint is one rdma.PerfEndpoint.
type perfEndpoint struct {
	f          *Fabric
	pd         *pd
	mr         *MR   // the whole buffer
	shares     []*MR // with PerfConfig.MRPerQP, the regions of the QPs' shares
	srq        *SRQ  // with PerfConfig.SRQ, where the receives go
	send, recv *CQ
	qps        []*QP
	ahs        []rdma.AH // a UD QP's peer
	dests      []uint32  // a UD QP's peer QP
	qkey       uint32
	txDepth    int
	events     bool
	maxInline  int
	now        int64 // the virtual clock, f.mu
	base       time.Time
}

// NewPerfEndpoint makes a perf endpoint's QPs, CQs and memory and moves
// the QPs to INIT on c.Port.
func (d *Device) NewPerfEndpoint(c rdma.PerfConfig) (rdma.PerfEndpoint, error) {
	typ := c.Type
	if typ == 0 {
		typ = rdma.QPTypeRC
	}
	n := max(c.QPs, 1)
	if n > rdma.MaxPerfQPs || c.BufSize <= 0 || c.TxDepth < 1 {
		return nil, rdma.Errorf("ibv_create_qp", syscall.EINVAL)
	}
	ctx := d.VerbsContext()
	p, err := ctx.AllocPD()
	if err != nil {
		return nil, err
	}
	e := &perfEndpoint{f: d.fabric, pd: p.(*pd), qkey: c.QKey, txDepth: c.TxDepth, events: c.Events,
		maxInline: min(c.MaxInline, perfMaxInline), base: time.Now()}
	if err := e.make(ctx, c, typ, n); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// make registers the memory and makes the CQs and QPs.
func (e *perfEndpoint) make(ctx rdma.Context, c rdma.PerfConfig, typ rdma.QPType, n int) error {
	mr, err := e.pd.RegMR(c.BufSize, rdma.AccessLocalWrite|rdma.AccessRemoteWrite|rdma.AccessRemoteRead|rdma.AccessRemoteAtomic)
	if err != nil {
		return err
	}
	e.mr = mr.(*MR)
	if c.MRPerQP {
		share := c.BufSize / n
		var shares []*MR
		for i := range n {
			m, err := e.mr.share(i*share, share)
			if err != nil {
				for _, s := range shares {
					s.Close()
				}
				return err
			}
			shares = append(shares, m)
		}
		// only the QPs' own regions stay, as perftest registers no other
		e.mr.Close()
		e.shares = shares
	}
	for _, cq := range []**CQ{&e.send, &e.recv} {
		q, err := ctx.CreateCQ(max(c.TxDepth, c.RxDepth, 1)*n, nil)
		if err != nil {
			return err
		}
		*cq = q.(*CQ)
	}
	qcap := rdma.QPCap{MaxSendWR: uint32(c.TxDepth), MaxRecvWR: uint32(max(c.RxDepth, 1)), MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: uint32(e.maxInline)}
	var srq rdma.SRQ
	if c.SRQ {
		if srq, err = e.pd.CreateSRQ(rdma.SRQAttr{MaxWR: uint32(max(c.RxDepth, 1)), MaxSGE: 1}); err != nil {
			return err
		}
		e.srq = srq.(*SRQ)
	}
	for range n {
		qp, err := e.pd.CreateQP(rdma.QPInitAttr{Type: typ, SendCQ: e.send, RecvCQ: e.recv, SRQ: srq, Cap: qcap})
		if err != nil {
			return err
		}
		q := qp.(*QP)
		e.qps = append(e.qps, q)
		e.ahs, e.dests = append(e.ahs, nil), append(e.dests, 0)
		if err := q.ToInit(rdma.InitAttr{Port: c.Port, QKey: c.QKey,
			Access: rdma.AccessLocalWrite | rdma.AccessRemoteWrite | rdma.AccessRemoteRead | rdma.AccessRemoteAtomic}); err != nil {
			return err
		}
	}
	return nil
}

func (e *perfEndpoint) QPN(qp int) uint32  { return e.qps[qp].num }
func (e *perfEndpoint) Buffer() []byte     { return e.mr.buf }
func (e *perfEndpoint) Addr() uint64       { return e.mr.addr }
func (e *perfEndpoint) LKey(qp int) uint32 { return e.mrOf(qp).key }
func (e *perfEndpoint) RKey(qp int) uint32 { return e.mrOf(qp).key }

// mrOf is the memory region of QP qp's share of the buffer.
func (e *perfEndpoint) mrOf(qp int) *MR {
	if e.shares == nil {
		return e.mr
	}
	return e.shares[qp]
}
func (e *perfEndpoint) MaxInline() int { return e.maxInline }

// SendCQ and RecvCQ sleep only with PerfConfig.Events, as a CQ without a
// completion channel cannot.
func (e *perfEndpoint) SendCQ() rdma.CQ { return &perfCQ{CQ: e.send, events: e.events} }
func (e *perfEndpoint) RecvCQ() rdma.CQ { return &perfCQ{CQ: e.recv, events: e.events} }

type perfCQ struct {
	*CQ
	events bool
}

func (q *perfCQ) Await(wc []rdma.WC, also rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	if !q.events {
		return 0, false, rdma.Errorf("ibv_get_cq_event", syscall.EINVAL)
	}
	return q.CQ.Await(wc, also, timeout)
}

// ToRTR readies QP qp; a UD QP takes the peer's address as an address
// handle.
func (e *perfEndpoint) ToRTR(qp int, a rdma.RTRAttr) error {
	q := e.qps[qp]
	if q.typ == rdma.QPTypeUD {
		ah, err := e.pd.CreateAH(rdma.AHAttr{DLID: a.DLID, SL: a.SL, Port: a.Port, GRH: a.GRH})
		if err != nil {
			return err
		}
		e.ahs[qp], e.dests[qp] = ah, a.DestQPN
	}
	return q.ToRTR(a)
}

func (e *perfEndpoint) ToRTS(qp int, a rdma.RTSAttr) error { return e.qps[qp].ToRTS(a) }

// clock is the endpoint's time in nanoseconds.
func (e *perfEndpoint) clock() int64 {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	if e.f.wire == 0 {
		return int64(time.Since(e.base))
	}
	return e.now
}

// pass advances the virtual clock by n messages.
func (e *perfEndpoint) pass(n int) {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.now += int64(n) * int64(e.f.wire)
}

// post posts wr on QP qp, addressed to a UD QP's peer.
func (e *perfEndpoint) post(qp int, wr rdma.SendWR) error {
	if e.qps[qp].typ == rdma.QPTypeUD {
		wr.UD = &rdma.UDDest{AH: e.ahs[qp], QPN: e.dests[qp], QKey: e.qkey}
	}
	if err := e.qps[qp].PostSend(wr); err != nil {
		return err
	}
	e.pass(1)
	return nil
}

func (e *perfEndpoint) PostSend(wr rdma.SendWR) error { return e.post(0, wr) }

func (e *perfEndpoint) PostRecvs(qp, n int, sge rdma.SGE) error {
	if qp < 0 || qp >= len(e.qps) {
		return rdma.Errorf("ibv_post_recv", syscall.EINVAL)
	}
	e.f.mu.Lock()
	e.f.recvBatches = append(e.f.recvBatches, n)
	e.f.mu.Unlock()
	for range n {
		var err error
		if e.srq != nil {
			err = e.srq.PostRecv(uint64(qp), sge)
		} else {
			err = e.qps[qp].PostRecv(uint64(qp), sge)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// take waits for up to len(wc) completions of cq for at most idle.
func take(cq *CQ, wc []rdma.WC, idle time.Duration) (int, error) {
	if n, err := cq.Poll(wc); n > 0 || err != nil {
		return n, err
	}
	n, _, err := cq.Await(wc, nil, max(idle, time.Nanosecond))
	return n, err
}

// Stream is perftest's run_iter_bw over the QPs: each request's work
// request ID is its QP and the number of requests its completion covers.
func (e *perfEndpoint) Stream(s rdma.Stream) (rdma.StreamResult, error) {
	list := max(s.PostList, 1)
	total := s.Iters * len(s.Targets)
	if len(s.Targets) == 0 || len(s.Targets) > len(e.qps) || s.TxDepth < 1 || s.TxDepth > e.txDepth || s.CQMod < 1 ||
		list > rdma.MaxPostList || s.Duration <= 0 && (s.Iters < 1 || len(s.Posted) < total || len(s.Completed) < total) {
		return rdma.StreamResult{}, rdma.Errorf("ibv_post_send", syscall.EINVAL)
	}
	if err := e.sleeps(s.Events); err != nil {
		return rdma.StreamResult{}, err
	}
	if s.Receive != nil {
		if s.Receive.Events != s.Events {
			return rdma.StreamResult{}, rdma.ErrSleepMismatch
		}
		return e.duplex(s)
	}
	st := newStreamRun(e, s)
	if s.Duration > 0 {
		// a previous timed run's unsignalled tail, still in flight
		for q := range min(len(s.Tail), len(st.posted)) {
			st.posted[q], st.inFlight[q] = s.Tail[q], s.Tail[q]
		}
		return st.runFor()
	}
	return st.run()
}

func newStreamRun(e *perfEndpoint, s rdma.Stream) *streamRun {
	return &streamRun{e: e, s: s, list: max(s.PostList, 1), posted: make([]int, len(s.Targets)), inFlight: make([]int, len(s.Targets))}
}

type streamRun struct {
	e        *perfEndpoint
	s        rdma.Stream
	list     int
	posted   []int // per QP
	inFlight []int
	total    int // posted over all QPs
	// the rate limiter's burst: open, its requests so far, and when the
	// next may begin
	inBurst     bool
	burstPosted int
	nextBurst   time.Time
	// undrained: a timed run ends at its time, its last requests left
	undrained bool
	start     time.Time // of a timed run
}

// mayPost says whether the rate limiter lets a request go now, opening a
// burst when the gap since the last one has passed.
func (r *streamRun) mayPost() bool {
	if r.s.Pace.Gap <= 0 || r.inBurst {
		return true
	}
	if now := time.Now(); !now.Before(r.nextBurst) {
		r.inBurst, r.burstPosted, r.nextBurst = true, 0, now.Add(r.s.Pace.Gap)
	}
	return r.inBurst
}

// waitForBurst sleeps out the rate limiter's gap, but not past end (when
// not zero), if nothing is in flight: waiting for a completion would wait
// for nothing.
func (r *streamRun) waitForBurst(end time.Time) bool {
	if r.s.Pace.Gap <= 0 || r.inBurst || slices.ContainsFunc(r.inFlight, func(n int) bool { return n > 0 }) {
		return false
	}
	until := r.nextBurst
	if !end.IsZero() && end.Before(until) {
		until = end
	}
	time.Sleep(time.Until(until))
	return true
}

// postRound lets each QP post the lists its depth allows, the QPs taking
// turns; stamp receives each request's post time.
func (r *streamRun) postRound(limit int, stamp func(k int, t int64)) error {
	for qp, t := range r.s.Targets {
		for (limit == 0 || r.posted[qp] < limit) && r.inFlight[qp]+r.list <= r.s.TxDepth && r.mayPost() {
			for range r.list {
				r.posted[qp]++
				n := r.posted[qp]
				covered := 0
				if n%r.s.CQMod == 0 {
					covered = r.s.CQMod
				} else if n == limit {
					covered = n % r.s.CQMod
				}
				wr := rdma.SendWR{ID: uint64(qp)<<32 | uint64(covered), Op: r.s.Op, Local: t.Local, RemoteAddr: t.RemoteAddr, RKey: t.RKey,
					Signaled: covered > 0, Inline: r.s.Inline}
				if r.s.Op == rdma.WRAtomicFetchAndAdd {
					wr.CompareAdd = 1
				}
				stamp(r.total, r.e.clock())
				r.total++
				r.inFlight[qp]++
				if err := r.e.post(qp, wr); err != nil {
					return err
				}
			}
			if r.burstPosted += r.list; r.burstPosted >= r.s.Pace.Burst {
				r.inBurst = false
			}
		}
	}
	return nil
}

// reap takes the completions there are, waiting up to wait for the
// first; each reports the requests it covered.
func (r *streamRun) reap(wc []rdma.WC, wait time.Duration, got func(covered int, t int64)) error {
	n, err := take(r.e.send, wc, wait)
	if err != nil {
		return err
	}
	now := r.e.clock()
	for _, w := range wc[:n] {
		if w.Status != rdma.WCSuccess {
			return &rdma.WCError{Status: w.Status, VendorErr: w.VendorErr}
		}
		qp, covered := int(w.WRID>>32), int(uint32(w.WRID))
		if qp >= len(r.inFlight) {
			return fmt.Errorf("a completion for QP %d of %d", qp, len(r.inFlight))
		}
		r.inFlight[qp] -= covered
		got(covered, now)
	}
	return nil
}

func (r *streamRun) run() (rdma.StreamResult, error) {
	var res rdma.StreamResult
	want := uint64(r.s.Iters * len(r.s.Targets))
	var wc [16]rdma.WC
	for res.Completed < want {
		if err := r.postRound(r.s.Iters, func(k int, t int64) { r.s.Posted[k] = t }); err != nil {
			return res, err
		}
		if r.waitForBurst(time.Time{}) {
			continue
		}
		if err := r.reap(wc[:], r.s.Idle, func(covered int, t int64) {
			res.Completed += uint64(covered)
			r.s.Completed[res.Completed-1] = t
		}); err != nil {
			return res, err
		}
	}
	return res, nil
}

// sampleWindow is a timed run's span whose completions count: Margin in
// from either end.
func (r *streamRun) sampleWindow() (from, to time.Time) {
	return r.start.Add(r.s.Margin), r.start.Add(r.s.Duration - r.s.Margin)
}

// runFor streams for s.Duration of real time and counts the completions
// of the sample window, Margin in from either end.
func (r *streamRun) runFor() (rdma.StreamResult, error) {
	var res rdma.StreamResult
	r.start = time.Now()
	from, to := r.sampleWindow()
	end := r.start.Add(r.s.Duration)
	var wc [16]rdma.WC
	r.e.f.mu.Lock()
	pace := r.e.f.wire
	r.e.f.mu.Unlock()
	for time.Now().Before(end) {
		before := r.total
		if err := r.postRound(0, func(int, int64) {}); err != nil {
			return res, err
		}
		if pace > 0 && r.total > before {
			time.Sleep(time.Duration(r.total-before) * pace)
		}
		if r.waitForBurst(end) {
			continue
		}
		// no completion for a while is no failure once the time is up
		wait := min(r.s.Idle, max(time.Until(end), time.Nanosecond))
		if err := r.reap(wc[:], wait, func(covered int, t int64) {
			if now := time.Now(); now.Before(from) || now.After(to) {
				return
			}
			if res.Completed == 0 {
				res.First = t
			}
			res.Completed += uint64(covered)
			res.Last = t
		}); errors.Is(err, rdma.ErrTimeout) && !time.Now().Before(end) {
			break
		} else if err != nil {
			return res, err
		}
	}
	// As the C loop: a run that another follows waits for every
	// signalled request (not in a duplex: the peer may have stopped
	// receiving); the rest is the tail.
	for qp := 0; qp < len(r.inFlight) && r.s.Continues && !r.undrained; {
		if r.inFlight[qp] <= r.posted[qp]%r.s.CQMod {
			qp++
			continue
		}
		if err := r.reap(wc[:], r.s.Idle, func(int, int64) {}); err != nil {
			return res, err
		}
	}
	res.Tail = append([]int(nil), r.inFlight...)
	return res, nil
}

// sleeps checks that a data path asked to sleep on its CQ's channel
// has one, as the verbs would, and counts it.
func (e *perfEndpoint) sleeps(events bool) error {
	if !events {
		return nil
	}
	if !e.events {
		return rdma.Errorf("ibv_get_cq_event", syscall.EINVAL)
	}
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.f.sleepingRuns++
	return nil
}

// Receive is perftest's run_iter_bw_server: the shared receive CQ taken
// up to 16 at a time, each QP's used receives posted again in whole lists
// while more are due.
func (e *perfEndpoint) Receive(r rdma.Receive) (rdma.ReceiveResult, error) {
	if err := e.sleeps(r.Events); err != nil {
		return rdma.ReceiveResult{}, err
	}
	return e.receive(r, func() {})
}

// duplex is a Stream that takes s.Receive's messages too: here the
// receiving runs beside the stream, which with s.AfterFirstMessage waits
// for the first message.
func (e *perfEndpoint) duplex(s rdma.Stream) (rdma.StreamResult, error) {
	type received struct {
		res rdma.ReceiveResult
		err error
	}
	if err := e.sleeps(s.Receive.Events); err != nil {
		return rdma.StreamResult{}, err
	}
	if s.Duration > 0 {
		return e.duplexFor(s)
	}
	done, first := make(chan received, 1), make(chan struct{})
	go func() {
		res, err := e.receive(*s.Receive, sync.OnceFunc(func() { close(first) }))
		done <- received{res, err}
	}()
	var got *received
	if s.AfterFirstMessage {
		select {
		case <-first:
		case r := <-done:
			if r.err != nil {
				return rdma.StreamResult{}, r.err
			}
			got = &r
		}
	}
	inner := s
	inner.Receive, inner.AfterFirstMessage, inner.Events = nil, false, false
	res, err := e.Stream(inner)
	if got == nil {
		r := <-done
		got = &r
	}
	res.Received = got.res.Completed
	res.Ended = e.clock() // both directions done
	if err == nil {
		err = got.err
	}
	return res, err
}

// duplexFor is a timed duplex, as the C loop runs it: the messages are
// taken until the stream's time is up (which with s.AfterFirstMessage
// starts at the first), those of the sample window count beside its
// sends, and the stream ends without waiting for its last requests.
func (e *perfEndpoint) duplexFor(s rdma.Stream) (rdma.StreamResult, error) {
	type arrival struct {
		wall  time.Time
		stamp int64
	}
	var arrivals []arrival
	stop, first, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		firstOnce := sync.OnceFunc(func() { close(first) })
		_, err := e.takeReceives(*s.Receive, stop, func(n int) {
			firstOnce()
			a := arrival{time.Now(), e.clock()}
			for range n {
				arrivals = append(arrivals, a)
			}
		})
		done <- err
	}()
	if s.AfterFirstMessage {
		select {
		case <-first:
		case err := <-done:
			return rdma.StreamResult{}, err
		}
	}
	inner := s
	inner.Receive, inner.AfterFirstMessage = nil, false
	st := newStreamRun(e, inner)
	st.undrained = true
	res, err := st.runFor()
	close(stop)
	if rerr := <-done; err == nil {
		err = rerr
	}
	from, to := st.sampleWindow()
	for _, a := range arrivals {
		res.Received++
		if a.wall.Before(from) || a.wall.After(to) {
			continue
		}
		if res.Completed == 0 || a.stamp < res.First {
			res.First = a.stamp
		}
		res.Completed++
		res.Last = max(res.Last, a.stamp)
	}
	return res, err
}

// receive is Receive, calling first once the first message came.
func (e *perfEndpoint) receive(r rdma.Receive, first func()) (rdma.ReceiveResult, error) {
	var res rdma.ReceiveResult
	came := false
	n, err := e.takeReceives(r, nil, func(int) {
		if res.Last = e.clock(); !came {
			came, res.First = true, res.Last
			first()
		}
	})
	res.Completed = n
	if err == nil {
		res.Last = e.clock()
	}
	return res, err
}

// takeReceives takes r's messages, each QP's used receives posted again in
// whole lists while more are due: until r.Iters came on every QP, or, with
// stop, until stop closes (then only r.Idle of silence is a failure). It
// tells got how many each poll took, and counts the messages one by one,
// so that a failed completion leaves the count of those before it.
func (e *perfEndpoint) takeReceives(r rdma.Receive, stop <-chan struct{}, got func(n int)) (uint64, error) {
	var wc [16]rdma.WC
	var completed uint64
	total := uint64(r.Iters * len(r.SGEs))
	list := max(r.PostList, 1)
	used, posted := make([]int, len(r.SGEs)), make([]int, len(r.SGEs))
	for q := range posted {
		posted[q] = r.RxDepth
	}
	wait, last := r.Idle, time.Now()
	if stop != nil {
		wait = time.Millisecond // to look at stop between polls
	}
	for stop != nil || completed < total {
		if stop != nil {
			select {
			case <-stop:
				return completed, nil
			default:
			}
		}
		n, err := take(e.recv, wc[:], wait)
		if stop != nil && errors.Is(err, rdma.ErrTimeout) && (r.Idle <= 0 || time.Since(last) <= r.Idle) {
			continue
		}
		if err != nil {
			return completed, err
		}
		last = time.Now()
		e.pass(n)
		got(n)
		for _, w := range wc[:n] {
			if w.Status != rdma.WCSuccess {
				return completed, &rdma.WCError{Status: w.Status, VendorErr: w.VendorErr}
			}
			q := int(w.WRID)
			if q >= len(r.SGEs) {
				return completed, fmt.Errorf("a completion for QP %d of %d", q, len(r.SGEs))
			}
			used[q]++
			completed++
		}
		for q := range used {
			k := used[q] / list * list
			if stop == nil {
				k = min(k, (r.Iters-posted[q])/list*list)
			}
			if k <= 0 {
				continue
			}
			if err := e.PostRecvs(q, k, r.SGEs[q]); err != nil {
				return completed, err
			}
			used[q] -= k
			posted[q] += k
		}
	}
	return completed, nil
}

// SendPingPong is perftest's run_iter_lat_send on QP 0.
func (e *perfEndpoint) SendPingPong(p rdma.SendPingPong) error {
	var wc [1]rdma.WC
	one := func(cq *CQ) error {
		if _, err := take(cq, wc[:], p.Idle); err != nil {
			return err
		}
		if wc[0].Status != rdma.WCSuccess {
			return &rdma.WCError{Status: wc[0].Status, VendorErr: wc[0].VendorErr}
		}
		return nil
	}
	for scnt, rcnt := 0, 0; scnt < p.Iters || rcnt < p.Iters; {
		if rcnt < p.Iters && !(scnt < 1 && p.Client) {
			if err := one(e.recv); err != nil {
				return err
			}
			e.pass(1)
			if rcnt++; rcnt+p.RxDepth <= p.Iters {
				if err := e.PostRecvs(0, 1, p.Recv); err != nil {
					return err
				}
			}
		}
		if scnt < p.Iters {
			p.Posted[scnt] = e.clock()
			scnt++
			if err := e.post(0, rdma.SendWR{Op: rdma.WRSend, Local: p.Local, Signaled: true, Inline: p.Inline}); err != nil {
				return err
			}
			if err := one(e.send); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *perfEndpoint) RequestPingPong(p rdma.RequestPingPong) error {
	var wc [1]rdma.WC
	for i := 0; i < p.Iters; i++ {
		p.Posted[i] = e.clock()
		wr := rdma.SendWR{Op: p.Op, Local: p.Local, RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true}
		if err := e.post(0, wr); err != nil {
			return fmt.Errorf("request %d of %d: %w", i+1, p.Iters, err)
		}
		if _, err := take(e.send, wc[:], p.Idle); err != nil {
			return fmt.Errorf("request %d of %d: %w", i+1, p.Iters, err)
		}
		if wc[0].Status != rdma.WCSuccess {
			return fmt.Errorf("request %d of %d: %w", i+1, p.Iters, &rdma.WCError{Status: wc[0].Status, VendorErr: wc[0].VendorErr})
		}
	}
	return nil
}

// WritePingPong is perftest's run_iter_lat_write on QP 0.
func (e *perfEndpoint) WritePingPong(p rdma.WritePingPong) error {
	var wc [1]rdma.WC
	count := int(p.Local.Addr-e.mr.addr) + int(p.Local.Len) - 1
	for scnt, rcnt, ccnt := 0, 0, 0; scnt < p.Iters || ccnt < p.Iters || rcnt < p.Iters; {
		if rcnt < p.Iters && !(scnt < 1 && !p.Client) {
			rcnt++
			if err := e.WaitByte(p.PollOff, byte(rcnt), p.Idle, true); err != nil {
				return fmt.Errorf("waiting for the peer's write %d of %d: %w", rcnt, p.Iters, err)
			}
		}
		if scnt < p.Iters {
			p.Posted[scnt] = e.clock()
			scnt++
			e.f.mu.Lock()
			e.mr.buf[count] = byte(scnt)
			e.f.mu.Unlock()
			wr := rdma.SendWR{Op: rdma.WRRDMAWrite, Local: p.Local, RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true, Inline: p.Inline}
			if err := e.post(0, wr); err != nil {
				return fmt.Errorf("write %d of %d: %w", scnt, p.Iters, err)
			}
		}
		if ccnt < p.Iters {
			ccnt++
			if _, err := take(e.send, wc[:], p.Idle); err != nil {
				return fmt.Errorf("write %d of %d: %w", ccnt, p.Iters, err)
			}
			if wc[0].Status != rdma.WCSuccess {
				return fmt.Errorf("write %d of %d: %w", ccnt, p.Iters, &rdma.WCError{Status: wc[0].Status, VendorErr: wc[0].VendorErr})
			}
		}
	}
	return nil
}

// WaitByte looks at the buffer until off reads want or timeout passes.
func (e *perfEndpoint) WaitByte(off int, want byte, timeout time.Duration, yield bool) error {
	if off < 0 || off >= len(e.mr.buf) {
		return rdma.Errorf("wait byte", syscall.EINVAL)
	}
	deadline := time.Now().Add(timeout)
	for {
		e.f.mu.Lock()
		got := e.mr.buf[off]
		e.f.mu.Unlock()
		if got == want {
			return nil
		}
		if time.Now().After(deadline) {
			return rdma.ErrTimeout
		}
		runtime.Gosched()
	}
}

// Close destroys the QPs, the CQs, the memory and the PD.
func (e *perfEndpoint) Close() error {
	for _, q := range e.qps {
		q.Close()
	}
	if e.srq != nil {
		e.srq.Close()
	}
	for _, cq := range []*CQ{e.send, e.recv} {
		if cq != nil {
			cq.Close()
		}
	}
	for _, m := range e.shares {
		m.Close()
	}
	if e.mr != nil && e.shares == nil {
		e.mr.Close()
	}
	return e.pd.Close()
}

// ReadyPerfQP moves QP qp of a perf endpoint of this fabric through RTR
// to RTS towards the peer's QP, as for the program's own QP, with
// minRNRTimer.
func (id *CMID) ReadyPerfQP(ep rdma.PerfEndpoint, qp int, minRNRTimer uint8) error {
	e, ok := ep.(*perfEndpoint)
	if !ok || qp < 0 || qp >= len(e.qps) {
		return rdma.Errorf("rdma_init_qp_attr", syscall.EINVAL)
	}
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_init_qp_attr"); err != nil {
		return err
	}
	if id.peer == nil {
		return rdma.Errorf("rdma_init_qp_attr", syscall.EINVAL)
	}
	q := e.qps[qp]
	if err := q.ready(id.peer.qpn()); err != nil {
		return err
	}
	q.rtr.MinRNRTimer = minRNRTimer
	q.id, id.qp, id.own = id, q, true
	return nil
}

var (
	_ rdma.Perf     = (*Device)(nil)
	_ rdma.PerfCMID = (*CMID)(nil)
)
