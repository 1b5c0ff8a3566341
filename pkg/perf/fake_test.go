package perf

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// fakeStack is one rxe0 whose endpoints reach each other through an
// in-memory fabric: sends land in the peer's posted receives, RDMA writes
// and reads copy between the buffers, completions appear on the CQs. The
// flows (handshakes, prints, reports, the latency loops) run on it without
// RDMA; bandwidth runs take made-up times (1 ms per message).
type fakeStack struct {
	mu   sync.Mutex
	eps  map[uint32]*fakeEndpoint
	next uint32
	// streams counts the QPs Stream ran on, to check who moved the data.
	streams int
	// inlined counts the requests posted with their payload inline.
	inlined int
	// the types of service set on ids (-T) and the traffic classes of
	// the RTR transitions (--tclass)
	tos, tclasses []uint8
	// the QP types endpoints were made with, and the attributes of the
	// RTR and RTS transitions
	qpTypes []rdma.QPType
	rtrs    []rdma.RTRAttr
	rtss    []rdma.RTSAttr
	// dropRecvs makes every SEND fail with RNR retries exceeded.
	dropRecvs bool
	// rdma_cm: the listeners by port, the ConnParams sent, the RNR timers
	// the data QPs were readied with
	listeners   map[uint16]*fakeCMID
	params      []rdma.ConnParam
	cmRNRTimers []uint8
}

func newFakeStack() *fakeStack {
	return &fakeStack{eps: map[uint32]*fakeEndpoint{}, next: 0x11, listeners: map[uint16]*fakeCMID{}}
}

func (f *fakeStack) DeviceList() ([]rdma.DeviceEntry, error) {
	return []rdma.DeviceEntry{{Name: "rxe0"}}, nil
}

func (f *fakeStack) Open(name string) (rdma.Device, error) {
	if name != "rxe0" {
		return nil, &rdma.Error{Op: "open " + name, Errno: syscall.ENODEV}
	}
	return &fakeDevice{f: f}, nil
}

type fakeDevice struct{ f *fakeStack }

func (d *fakeDevice) QueryDevice() (rdma.DeviceAttr, error) {
	return rdma.DeviceAttr{MaxQPRdAtom: 128}, nil
}

func (d *fakeDevice) QueryPort(uint8) (rdma.PortAttr, error) {
	return rdma.PortAttr{State: rdma.PortActive, ActiveMTU: 3, GIDTblLen: 4, LinkLayer: rdma.LinkLayerEthernet}, nil
}

func (d *fakeDevice) QueryGIDEntry(_ uint8, index uint32) (rdma.GIDEntry, error) {
	switch index {
	case 0:
		return rdma.GIDEntry{Index: 0, GID: rdma.GID{0: 0xfe, 1: 0x80, 15: 1}, Type: rdma.GIDTypeRoCEv2}, nil
	case 1:
		return rdma.GIDEntry{Index: 1, GID: loopbackGID, Type: rdma.GIDTypeRoCEv2}, nil
	}
	return rdma.GIDEntry{}, rdma.ErrNoGID
}

func (d *fakeDevice) Close() error { return nil }

func (d *fakeDevice) NewPerfEndpoint(c rdma.PerfConfig) (rdma.PerfEndpoint, error) {
	f := d.f
	f.mu.Lock()
	defer f.mu.Unlock()
	e := &fakeEndpoint{f: f, buf: make([]byte, c.BufSize), addr: 0x7f0000000000 + uint64(f.next)<<24,
		send: newFakeCQ(c.Events), recv: newFakeCQ(c.Events), txDepth: c.TxDepth, maxInline: min(c.MaxInline, fakeMaxInline),
		unreliable: c.Type == rdma.QPTypeUC || c.Type == rdma.QPTypeUD}
	if c.Type == rdma.QPTypeUD {
		e.grh = udGRH
	}
	f.qpTypes = append(f.qpTypes, c.Type)
	for i := 0; i < max(c.QPs, 1); i++ {
		e.qpns = append(e.qpns, f.next)
		e.peers = append(e.peers, 0)
		e.recvs = append(e.recvs, nil)
		f.eps[f.next] = e
		f.next++
	}
	return e, nil
}

// fakeMaxInline is the most inline data the fake's QPs hold: asked for
// more, it gives this much, as providers may.
const fakeMaxInline = 512

type fakeEndpoint struct {
	f         *fakeStack
	maxInline int
	qpns      []uint32 // the QPs' numbers
	peers     []uint32 // and their peers'
	buf       []byte
	addr      uint64
	send      *fakeCQ
	recv      *fakeCQ
	txDepth   int
	rts       bool
	// unreliable (UC, UD) drops a SEND that finds no receive, silently
	unreliable bool
	// grh is the room a UD message's GRH takes before it in a receive
	grh   int
	recvs [][]rdma.SGE // posted receives per QP, oldest first
}

// peerQP is the index, among peer's QPs, of the one QP i is connected to.
func (e *fakeEndpoint) peerQP(peer *fakeEndpoint, i int) int {
	return slices.Index(peer.qpns, e.peers[i])
}

func (e *fakeEndpoint) QPN(i int) uint32 { return e.qpns[i] }
func (e *fakeEndpoint) Buffer() []byte   { return e.buf }
func (e *fakeEndpoint) Addr() uint64     { return e.addr }
func (e *fakeEndpoint) LKey() uint32     { return 0x200 + e.qpns[0] }
func (e *fakeEndpoint) RKey() uint32     { return 0x100 + e.qpns[0] }
func (e *fakeEndpoint) SendCQ() rdma.CQ  { return e.send }
func (e *fakeEndpoint) RecvCQ() rdma.CQ  { return e.recv }
func (e *fakeEndpoint) MaxInline() int   { return e.maxInline }

// postInline counts n requests of size bytes posted inline, or refuses
// them as ibv_post_send does when they exceed the QP's inline space.
func (e *fakeEndpoint) postInline(inline bool, size uint32, n int) error {
	if !inline {
		return nil
	}
	if int(size) > e.maxInline {
		return &rdma.Error{Op: "ibv_post_send", Errno: syscall.EINVAL}
	}
	e.f.inlined += n
	return nil
}
func (e *fakeEndpoint) ToRTR(qp int, a rdma.RTRAttr) error {
	if a.GRH != nil && a.GRH.DGID != loopbackGID {
		return fmt.Errorf("RTR towards GID %v", a.GRH.DGID)
	}
	if a.GRH != nil {
		e.f.mu.Lock()
		e.f.tclasses = append(e.f.tclasses, a.GRH.TrafficClass)
		e.f.mu.Unlock()
	}
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.peers[qp] = a.DestQPN
	e.f.rtrs = append(e.f.rtrs, a)
	return nil
}
func (e *fakeEndpoint) ToRTS(_ int, a rdma.RTSAttr) error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.rts = true
	e.f.rtss = append(e.f.rtss, a)
	return nil
}
func (e *fakeEndpoint) Close() error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	for _, n := range e.qpns {
		delete(e.f.eps, n)
	}
	return nil
}

func (e *fakeEndpoint) PostRecvs(qp, n int, sge rdma.SGE) error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	if qp < 0 || qp >= len(e.recvs) {
		return fmt.Errorf("receives on QP %d of %d", qp, len(e.recvs))
	}
	for i := 0; i < n; i++ {
		e.recvs[qp] = append(e.recvs[qp], sge)
	}
	return nil
}

// span is the part of e's buffer at addr, length n.
func (e *fakeEndpoint) span(addr uint64, n uint32) ([]byte, error) {
	if addr < e.addr || addr+uint64(n) > e.addr+uint64(len(e.buf)) {
		return nil, fmt.Errorf("access of %d bytes at %#x outside QP %#x's buffer", n, addr, e.qpns[0])
	}
	off := addr - e.addr
	return e.buf[off : off+uint64(n)], nil
}

func (e *fakeEndpoint) PostSend(wr rdma.SendWR) error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	peer := e.f.eps[e.peers[0]]
	if !e.rts {
		return &rdma.Error{Op: "ibv_post_send", Errno: syscall.EINVAL}
	}
	if peer == nil {
		return nil // the peer is gone: its packets are dropped, no completion yet
	}
	local, err := e.span(wr.Local.Addr, wr.Local.Len)
	if err != nil {
		return err
	}
	if err := e.postInline(wr.Inline, wr.Local.Len, 1); err != nil {
		return err
	}
	status := rdma.WCSuccess
	switch wr.Op {
	case rdma.WRSend:
		q := e.peerQP(peer, 0)
		if len(peer.recvs[q]) == 0 && e.unreliable {
			break
		}
		if len(peer.recvs[q]) == 0 || e.f.dropRecvs {
			status = rdma.WCRNRRetryErr
			break
		}
		r := peer.recvs[q][0]
		peer.recvs[q] = peer.recvs[q][1:]
		if int(r.Len) < int(wr.Local.Len)+peer.grh {
			peer.recv.push(rdma.WC{WRID: uint64(q), Status: rdma.WCLocLenErr})
			break
		}
		dst, err := peer.span(r.Addr, r.Len)
		if err != nil {
			return err
		}
		copy(dst[peer.grh:], local)
		peer.recv.push(rdma.WC{WRID: uint64(q), Status: rdma.WCSuccess, ByteLen: wr.Local.Len + uint32(peer.grh)})
	case rdma.WRRDMAWrite, rdma.WRRDMARead, rdma.WRAtomicFetchAndAdd, rdma.WRAtomicCmpAndSwp:
		remote, err := peer.span(wr.RemoteAddr, wr.Local.Len)
		if err != nil || wr.RKey != peer.RKey() {
			status = rdma.WCRemAccessErr
			break
		}
		if wr.Op == rdma.WRRDMAWrite {
			copy(remote, local)
		} else {
			copy(local, remote)
		}
	}
	if wr.Signaled || status != rdma.WCSuccess {
		e.send.push(rdma.WC{WRID: wr.ID, Status: status})
	}
	return nil
}

// Stream: every message takes 1 ms, one in flight. Each QP's target
// must lie in its own peer QP's span of the peer's buffer.
func (e *fakeEndpoint) Stream(s rdma.Stream) (rdma.StreamResult, error) {
	e.f.mu.Lock()
	var peer *fakeEndpoint
	for i, t := range s.Targets {
		peer = e.f.eps[e.peers[i]]
		if peer == nil || t.RKey != peer.RKey() || t.RemoteAddr < peer.addr || t.RemoteAddr+uint64(t.Local.Len) > peer.addr+uint64(len(peer.buf)) {
			e.f.mu.Unlock()
			return rdma.StreamResult{}, &rdma.WCError{Status: rdma.WCRemAccessErr}
		}
		span := uint64(len(peer.buf) / len(peer.qpns))
		if q := e.peerQP(peer, i); (t.RemoteAddr-peer.addr)/span != uint64(q) {
			e.f.mu.Unlock()
			return rdma.StreamResult{}, fmt.Errorf("QP %d writes into the span of the peer's QP %d", i, (t.RemoteAddr-peer.addr)/span)
		}
		if _, err := e.span(t.Local.Addr, t.Local.Len); err != nil {
			e.f.mu.Unlock()
			return rdma.StreamResult{}, err
		}
		if err := e.postInline(s.Inline, t.Local.Len, s.Iters); err != nil {
			e.f.mu.Unlock()
			return rdma.StreamResult{}, err
		}
	}
	e.f.streams += len(s.Targets)
	e.f.mu.Unlock()
	total := s.Iters * len(s.Targets)
	if s.TxDepth > e.txDepth || s.CQMod < 1 {
		return rdma.StreamResult{}, fmt.Errorf("tx depth %d of a %d-deep QP, cq_mod %d", s.TxDepth, e.txDepth, s.CQMod)
	}
	if s.Duration > 0 {
		n := uint64(s.Duration / time.Millisecond)
		if s.Op == rdma.WRSend {
			// A message on each QP every millisecond, in real time: the
			// receiver's sample window runs on the wall clock.
			for range n {
				for i := range s.Targets {
					e.f.mu.Lock()
					q := e.peerQP(peer, i)
					e.f.mu.Unlock()
					peer.recv.push(rdma.WC{WRID: uint64(q), Status: rdma.WCSuccess, ByteLen: s.Targets[i].Local.Len})
				}
				time.Sleep(time.Millisecond)
			}
		}
		return rdma.StreamResult{Completed: n * uint64(len(s.Targets)), First: 0, Last: int64(n) * 1e6}, nil
	}
	for i := 0; i < total; i++ {
		s.Posted[i], s.Completed[i] = int64(i)*1e6, int64(i+1)*1e6
	}
	if s.Op == rdma.WRSend { // the receivers' completions (RNR retries win once one is posted)
		for i := range s.Targets {
			e.f.mu.Lock()
			q := e.peerQP(peer, i)
			if len(peer.recvs[q]) == 0 && !e.unreliable {
				e.f.mu.Unlock()
				return rdma.StreamResult{}, &rdma.WCError{Status: rdma.WCRNRRetryErr}
			}
			arrive := s.Iters
			if e.unreliable { // the messages beyond the receives are lost
				arrive = min(s.Iters, len(peer.recvs[q]))
			}
			if arrive == 0 {
				e.f.mu.Unlock()
				continue
			}
			if r := peer.recvs[q][0]; int(r.Len) < int(s.Targets[i].Local.Len)+peer.grh {
				e.f.mu.Unlock()
				peer.recv.push(rdma.WC{WRID: uint64(q), Status: rdma.WCLocLenErr})
				continue
			}
			span := uint64(len(peer.buf) / len(peer.qpns))
			if at := (peer.recvs[q][0].Addr - peer.addr) / span; at != uint64(q) {
				e.f.mu.Unlock()
				return rdma.StreamResult{}, fmt.Errorf("the peer's QP %d receives into the span of its QP %d", q, at)
			}
			peer.recvs[q] = peer.recvs[q][min(s.Iters, len(peer.recvs[q])):]
			e.f.mu.Unlock()
			for range arrive {
				peer.recv.push(rdma.WC{WRID: uint64(q), Status: rdma.WCSuccess, ByteLen: s.Targets[i].Local.Len})
			}
		}
	}
	return rdma.StreamResult{Completed: uint64(total)}, nil
}

func (e *fakeEndpoint) WaitByte(off int, want byte, timeout time.Duration, yield bool) error {
	deadline := time.Now().Add(timeout)
	for {
		e.f.mu.Lock()
		got := e.buf[off]
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

// fakeCQ is a queue of completions; Await needs Events.
type fakeCQ struct {
	mu     sync.Mutex
	wcs    []rdma.WC
	ready  chan struct{} // signalled on every push
	events bool
}

func newFakeCQ(events bool) *fakeCQ { return &fakeCQ{ready: make(chan struct{}, 1), events: events} }

func (q *fakeCQ) push(wc rdma.WC) {
	q.mu.Lock()
	q.wcs = append(q.wcs, wc)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *fakeCQ) Poll(wc []rdma.WC) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := copy(wc, q.wcs)
	q.wcs = q.wcs[n:]
	return n, nil
}

func (q *fakeCQ) Await(wc []rdma.WC, also rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	if !q.events {
		return 0, false, errors.New("CQ has no completion channel")
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		if n, _ := q.Poll(wc); n > 0 {
			return n, false, nil
		}
		select {
		case <-q.ready:
		case <-t.C:
			return 0, false, rdma.ErrTimeout
		}
	}
}

func (q *fakeCQ) SetSpin(int)  {}
func (q *fakeCQ) Close() error { return nil }

// Receive is send_bw's receiving loop over the fake CQ, stamped with
// the session's clock as the C loop stamps with the CPU's counter.
func (e *fakeEndpoint) Receive(r rdma.Receive) (rdma.ReceiveResult, error) {
	cq := e.RecvCQ()
	var wc [16]rdma.WC
	var res rdma.ReceiveResult
	total := uint64(r.Iters * len(r.SGEs))
	got := make([]int, len(r.SGEs))
	re := reposts{sges: r.SGEs}
	clock := sessionClock()
	deadline := time.Now().Add(r.Idle)
	for spins := 0; res.Completed < total; spins++ {
		n, err := cq.Poll(wc[:])
		if err != nil {
			return res, err
		}
		if n == 0 {
			if spins&0xfff == 0xfff && time.Now().After(deadline) {
				return res, rdma.ErrTimeout
			}
			continue
		}
		res.Last = clock()
		deadline = time.Now().Add(r.Idle)
		if res.Completed == 0 {
			res.First = res.Last
		}
		for _, w := range wc[:n] {
			q, err := re.qpOf(w)
			if err != nil {
				return res, err
			}
			got[q]++
			res.Completed++
			if got[q]+r.RxDepth <= r.Iters {
				re.due[q]++
			}
		}
		if err := re.post(e); err != nil {
			return res, err
		}
	}
	return res, nil
}

// SendPingPong is send_lat's busy loop over the fabric, with stamps 20 µs
// apart.
func (e *fakeEndpoint) SendPingPong(p rdma.SendPingPong) error {
	var wc [1]rdma.WC
	take := func(q *fakeCQ) error {
		deadline := time.Now().Add(p.Idle)
		for {
			if n, _ := q.Poll(wc[:]); n == 1 {
				if wc[0].Status != rdma.WCSuccess {
					return &rdma.WCError{Status: wc[0].Status}
				}
				return nil
			}
			if time.Now().After(deadline) {
				return rdma.ErrTimeout
			}
			runtime.Gosched()
		}
	}
	scnt, rcnt := 0, 0
	for scnt < p.Iters || rcnt < p.Iters {
		if rcnt < p.Iters && !(scnt < 1 && p.Client) {
			if err := take(e.recv); err != nil {
				return err
			}
			rcnt++
			if rcnt+p.RxDepth <= p.Iters {
				e.PostRecvs(0, 1, p.Recv)
			}
		}
		if scnt < p.Iters {
			p.Posted[scnt] = int64(scnt) * 20000
			scnt++
			if err := e.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: p.Local, Signaled: true, Inline: p.Inline}); err != nil {
				return err
			}
			if err := take(e.send); err != nil {
				return err
			}
		}
	}
	return nil
}

// The fake's rdma_cm (-R): listeners by port, connect requests and
// replies as events on the ids' channels. A control QP (CreateQP) hands
// each SEND to the peer's next posted receive, holding it until one is
// posted as RNR retries would; ReadyPerfQP points an endpoint's QP at the
// QP number the peer named. The ConnParams of every connect request a
// listener took and of every accept are recorded.

func (f *fakeStack) LookupHost(name string) (netip.Addr, error) {
	a, err := netip.ParseAddr(name)
	if err != nil {
		return a, &rdma.LookupError{Code: -2, Msg: "Name or service not known"}
	}
	return a, nil
}

func (f *fakeStack) CreateEventChannel() (rdma.EventChannel, error) {
	return &fakeEventChannel{f: f, events: make(chan rdma.CMEvent, 64)}, nil
}

// sentParams are the ConnParams recorded so far, in order.
func (f *fakeStack) sentParams() []rdma.ConnParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.params)
}

func (f *fakeStack) readiedRNRTimers() []uint8 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.cmRNRTimers)
}

type fakeEventChannel struct {
	f      *fakeStack
	events chan rdma.CMEvent
}

func (c *fakeEventChannel) CreateID() (rdma.CMID, error) { return &fakeCMID{f: c.f, ch: c}, nil }

func (c *fakeEventChannel) GetEvent(timeout time.Duration) (rdma.CMEvent, error) {
	t := time.NewTimer(max(timeout, 0))
	defer t.Stop()
	select {
	case ev := <-c.events:
		return ev, nil
	case <-t.C:
		return rdma.CMEvent{}, rdma.ErrTimeout
	}
}

func (c *fakeEventChannel) Close() error { return nil }

type fakeCMID struct {
	f       *fakeStack
	ch      *fakeEventChannel
	dst     netip.AddrPort // resolved, or the listener's port once bound
	listens bool
	peer    *fakeCMID
	peerQPN uint32 // the QP number the peer's ConnParam named
	qp      *fakeCtlQP
}

func (id *fakeCMID) event(t rdma.CMEventType) { id.ch.events <- rdma.CMEvent{Type: t, ID: id} }

func (id *fakeCMID) ResolveAddr(_ netip.Addr, dst netip.AddrPort, _ time.Duration) error {
	id.dst = dst
	id.event(rdma.CMEventAddrResolved)
	return nil
}

func (id *fakeCMID) ResolveRoute(time.Duration) error {
	id.event(rdma.CMEventRouteResolved)
	return nil
}

func (id *fakeCMID) Bind(a netip.AddrPort) error { id.dst = a; return nil }

func (id *fakeCMID) Listen(int) error {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if id.f.listeners[id.dst.Port()] != nil {
		return &rdma.Error{Op: "rdma_listen", Errno: syscall.EADDRINUSE}
	}
	id.f.listeners[id.dst.Port()], id.listens = id, true
	return nil
}

func (id *fakeCMID) Migrate(ch rdma.EventChannel) error {
	id.ch = ch.(*fakeEventChannel)
	return nil
}

func (id *fakeCMID) Connect(p *rdma.ConnParam) error {
	id.f.mu.Lock()
	l := id.f.listeners[id.dst.Port()]
	if l != nil {
		id.f.params = append(id.f.params, *p)
	}
	id.f.mu.Unlock()
	if l == nil {
		id.event(rdma.CMEventRejected)
		return nil
	}
	id.peer = &fakeCMID{f: id.f, ch: l.ch, dst: netip.AddrPortFrom(id.dst.Addr(), 0), peer: id, peerQPN: p.QPNum}
	l.ch.events <- rdma.CMEvent{Type: rdma.CMEventConnectRequest, ID: id.peer, Listen: l}
	return nil
}

// Accept answers the client: a control connection (both QPs the CM's) is
// established at once, a perf QP's client first gets the reply.
func (id *fakeCMID) Accept(p *rdma.ConnParam) error {
	id.f.mu.Lock()
	id.f.params = append(id.f.params, *p)
	id.f.mu.Unlock()
	c := id.peer
	c.peerQPN = p.QPNum
	if id.qp != nil && c.qp != nil {
		id.qp.peer, c.qp.peer = c.qp, id.qp
		c.event(rdma.CMEventEstablished)
		id.event(rdma.CMEventEstablished)
		return nil
	}
	c.event(rdma.CMEventConnectResponse)
	return nil
}

func (id *fakeCMID) Establish() error {
	id.peer.event(rdma.CMEventEstablished)
	return nil
}

func (id *fakeCMID) Disconnect() error { return nil }
func (id *fakeCMID) SetTOS(tos uint8) error {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if !id.dst.IsValid() {
		return errors.New("TOS set before the address was resolved")
	}
	id.f.tos = append(id.f.tos, tos)
	return nil
}
func (id *fakeCMID) Context() rdma.Context    { return fakeCMContext{} }
func (id *fakeCMID) PeerAddr() netip.AddrPort { return id.dst }

func (id *fakeCMID) CreateQP(pd rdma.PD, send, recv rdma.CQ, _ rdma.QPCap) (rdma.QP, error) {
	id.qp = &fakeCtlQP{pd: pd.(*fakePD), send: send.(*fakeCQ), recv: recv.(*fakeCQ)}
	return id.qp, nil
}

func (id *fakeCMID) InitOwnQP(rdma.QP) error  { return errors.New("perf's fake has no own QPs") }
func (id *fakeCMID) ReadyOwnQP(rdma.QP) error { return errors.New("perf's fake has no own QPs") }

func (id *fakeCMID) ReadyPerfQP(ep rdma.PerfEndpoint, qp int, minRNRTimer uint8) error {
	e := ep.(*fakeEndpoint)
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	e.peers[qp], e.rts = id.peerQPN, true
	id.f.cmRNRTimers = append(id.f.cmRNRTimers, minRNRTimer)
	return nil
}

func (id *fakeCMID) Close() error {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if id.listens {
		delete(id.f.listeners, id.dst.Port())
	}
	return nil
}

type fakeCMContext struct{}

func (fakeCMContext) AllocPD() (rdma.PD, error)                    { return &fakePD{}, nil }
func (fakeCMContext) CreateCompChannel() (rdma.CompChannel, error) { return fakeCompChannel{}, nil }
func (fakeCMContext) CreateCQ(int, rdma.CompChannel) (rdma.CQ, error) {
	return newFakeCQ(true), nil
}

type fakeCompChannel struct{}

func (fakeCompChannel) Close() error { return nil }

type fakePD struct{ mrs []*fakeMR }

func (p *fakePD) RegMR(size int, _ rdma.Access) (rdma.MR, error) {
	m := &fakeMR{buf: make([]byte, size), addr: 0x10000 * uint64(len(p.mrs)+1)}
	p.mrs = append(p.mrs, m)
	return m, nil
}

func (p *fakePD) CreateRCQP(rdma.CQ, rdma.CQ, rdma.QPCap) (rdma.QP, error) {
	return nil, errors.New("perf's fake has no own QPs")
}

func (p *fakePD) Close() error { return nil }

// at is the memory an entry names.
func (p *fakePD) at(s rdma.SGE) []byte {
	for _, m := range p.mrs {
		if s.Addr >= m.addr && s.Addr+uint64(s.Len) <= m.addr+uint64(len(m.buf)) {
			return m.buf[s.Addr-m.addr : s.Addr-m.addr+uint64(s.Len)]
		}
	}
	panic(fmt.Sprintf("SGE %+v outside every MR", s))
}

type fakeMR struct {
	buf  []byte
	addr uint64
}

func (m *fakeMR) Bytes() []byte { return m.buf }
func (m *fakeMR) Addr() uint64  { return m.addr }
func (m *fakeMR) LKey() uint32  { return 1 }
func (m *fakeMR) RKey() uint32  { return 1 }
func (m *fakeMR) Close() error  { return nil }

type fakeCtlQP struct {
	pd         *fakePD
	send, recv *fakeCQ
	mu         sync.Mutex
	peer       *fakeCtlQP
	recvs      []rdma.SGE
	held       [][]byte // messages that came before a receive
}

func (q *fakeCtlQP) Num() uint32 { return 0x1000 }

func (q *fakeCtlQP) PostSend(wr rdma.SendWR) error {
	q.peer.deliver(slices.Clone(q.pd.at(wr.Local)))
	q.send.push(rdma.WC{WRID: wr.ID, Status: rdma.WCSuccess})
	return nil
}

func (q *fakeCtlQP) PostRecv(_ uint64, s rdma.SGE) error {
	q.mu.Lock()
	q.recvs = append(q.recvs, s)
	q.mu.Unlock()
	q.deliver(nil)
	return nil
}

// deliver takes msg (if any) and fills posted receives with what is held.
func (q *fakeCtlQP) deliver(msg []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if msg != nil {
		q.held = append(q.held, msg)
	}
	for len(q.held) > 0 && len(q.recvs) > 0 {
		m, s := q.held[0], q.recvs[0]
		q.held, q.recvs = q.held[1:], q.recvs[1:]
		copy(q.pd.at(s), m)
		q.recv.push(rdma.WC{Status: rdma.WCSuccess, ByteLen: uint32(len(m))})
	}
}

func (q *fakeCtlQP) ToError() error { return nil }
func (q *fakeCtlQP) Close() error   { return nil }
