package perf

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
	// dropRecvs makes every SEND fail with RNR retries exceeded.
	dropRecvs bool
}

func newFakeStack() *fakeStack { return &fakeStack{eps: map[uint32]*fakeEndpoint{}, next: 0x11} }

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

var loopbackGID = rdma.GID{10: 0xff, 11: 0xff, 12: 127, 15: 1}

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

func (d *fakeDevice) SetupRC(int, rdma.Access) (rdma.RCEndpoint, error) {
	return nil, errors.New("perf's fake has no RC demo")
}

func (d *fakeDevice) Close() error { return nil }

func (d *fakeDevice) NewPerfEndpoint(c rdma.PerfConfig) (rdma.PerfEndpoint, error) {
	f := d.f
	f.mu.Lock()
	defer f.mu.Unlock()
	e := &fakeEndpoint{f: f, buf: make([]byte, c.BufSize), addr: 0x7f0000000000 + uint64(f.next)<<24,
		send: newFakeCQ(c.Events), recv: newFakeCQ(c.Events), txDepth: c.TxDepth}
	for i := 0; i < max(c.QPs, 1); i++ {
		e.qpns = append(e.qpns, f.next)
		e.peers = append(e.peers, 0)
		f.eps[f.next] = e
		f.next++
	}
	return e, nil
}

type fakeEndpoint struct {
	f       *fakeStack
	qpns    []uint32 // the QPs' numbers
	peers   []uint32 // and their peers'
	buf     []byte
	addr    uint64
	send    *fakeCQ
	recv    *fakeCQ
	txDepth int
	rts     bool
	recvs   []rdma.SGE // posted receives, oldest first
}

func (e *fakeEndpoint) QPN(i int) uint32 { return e.qpns[i] }
func (e *fakeEndpoint) Buffer() []byte   { return e.buf }
func (e *fakeEndpoint) Addr() uint64     { return e.addr }
func (e *fakeEndpoint) LKey() uint32     { return 0x200 + e.qpns[0] }
func (e *fakeEndpoint) RKey() uint32     { return 0x100 + e.qpns[0] }
func (e *fakeEndpoint) SendCQ() rdma.CQ  { return e.send }
func (e *fakeEndpoint) RecvCQ() rdma.CQ  { return e.recv }
func (e *fakeEndpoint) ToRTR(qp int, a rdma.RTRAttr) error {
	if a.GRH != nil && a.GRH.DGID != loopbackGID {
		return fmt.Errorf("RTR towards GID %v", a.GRH.DGID)
	}
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.peers[qp] = a.DestQPN
	return nil
}
func (e *fakeEndpoint) ToRTS(int, rdma.RTSAttr) error { e.rts = true; return nil }
func (e *fakeEndpoint) Close() error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	for _, n := range e.qpns {
		delete(e.f.eps, n)
	}
	return nil
}

func (e *fakeEndpoint) PostRecvs(n int, sge rdma.SGE) error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	for i := 0; i < n; i++ {
		e.recvs = append(e.recvs, sge)
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
	status := rdma.WCSuccess
	switch wr.Op {
	case rdma.WRSend:
		if len(peer.recvs) == 0 || e.f.dropRecvs {
			status = rdma.WCRNRRetryErr
			break
		}
		r := peer.recvs[0]
		peer.recvs = peer.recvs[1:]
		dst, err := peer.span(r.Addr, r.Len)
		if err != nil {
			return err
		}
		copy(dst, local)
		peer.recv.push(rdma.WC{Status: rdma.WCSuccess, ByteLen: wr.Local.Len})
	case rdma.WRRDMAWrite, rdma.WRRDMARead:
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
		if q := slices.Index(peer.qpns, e.peers[i]); (t.RemoteAddr-peer.addr)/span != uint64(q) {
			e.f.mu.Unlock()
			return rdma.StreamResult{}, fmt.Errorf("QP %d writes into the span of the peer's QP %d", i, (t.RemoteAddr-peer.addr)/span)
		}
		if _, err := e.span(t.Local.Addr, t.Local.Len); err != nil {
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
		return rdma.StreamResult{Completed: n, First: 0, Last: int64(n) * 1e6}, nil
	}
	for i := 0; i < total; i++ {
		s.Posted[i], s.Completed[i] = int64(i)*1e6, int64(i+1)*1e6
	}
	if s.Op == rdma.WRSend { // the receiver's completions (RNR retries always win)
		e.f.mu.Lock()
		peer.recvs = peer.recvs[min(s.Iters, len(peer.recvs)):]
		e.f.mu.Unlock()
		for i := 0; i < s.Iters; i++ {
			peer.recv.push(rdma.WC{Status: rdma.WCSuccess, ByteLen: s.Targets[0].Local.Len})
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

// stepClock is a session clock that advances 20 µs per reading: latency
// runs, which read it once per message, then report 10 µs one way.
func stepClock() func() int64 {
	var t int64
	return func() int64 { t += 20000; return t }
}

func init() { sessionClock = stepClock }

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
				e.PostRecvs(1, p.Recv)
			}
		}
		if scnt < p.Iters {
			p.Posted[scnt] = int64(scnt) * 20000
			scnt++
			if err := e.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: p.Local, Signaled: true}); err != nil {
				return err
			}
			if err := take(e.send); err != nil {
				return err
			}
		}
	}
	return nil
}
