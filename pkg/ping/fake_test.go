package ping

import (
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// fakeNet is an in-process RDMA fabric behind the rdma.CM seam: rping's
// two sides, each a Run with its own fakeStack, find each other through
// it as through rdma_cm, and their QPs move bytes as RC QPs do (SEND into
// the peer's posted receive, RDMA READ and WRITE through rkeys). Faults
// are switched on per test.
type fakeNet struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change: wakes waiters

	local     map[netip.Addr]bool // addresses with an RDMA device
	silent    map[netip.Addr]bool // on the link, never answer ARP
	listeners map[uint16]*fakeID
	mrs       map[uint32]*fakeMR // by rkey; lkey == rkey here
	nextKey   uint32

	noDevices  bool // rdma_create_event_channel fails with ENODEV
	noCMDevice bool // … with ENOENT (/dev/infiniband/rdma_cm missing)
	failRegMR  int  // the n-th RegMR of a server side fails (1-based, 0 never)
	serverRegs int
	killAfter  int  // the server side "dies" after that many RDMA writes (0 never)
	corrupt    bool // RDMA writes change the first byte they carry
	writes     int
}

func newFakeNet() *fakeNet {
	return &fakeNet{
		changed:   make(chan struct{}),
		local:     map[netip.Addr]bool{netip.MustParseAddr("10.9.0.1"): true, netip.MustParseAddr("fd09::1"): true},
		silent:    map[netip.Addr]bool{},
		listeners: map[uint16]*fakeID{},
		mrs:       map[uint32]*fakeMR{},
		nextKey:   0x100,
	}
}

// notify wakes every waiter; call with mu held.
func (n *fakeNet) notify() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// waitFor blocks until ready() (called with mu held) or timeout; it
// reports whether ready() held.
func (n *fakeNet) waitFor(timeout time.Duration, ready func() bool) bool {
	var expire <-chan time.Time
	if timeout >= 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		n.mu.Lock()
		if ready() {
			n.mu.Unlock()
			return true
		}
		ch := n.changed
		n.mu.Unlock()
		select {
		case <-ch:
		case <-expire:
			n.mu.Lock()
			ok := ready()
			n.mu.Unlock()
			return ok
		}
	}
}

// fakeStack is one process's view of the fabric.
type fakeStack struct {
	net    *fakeNet
	server bool
}

func (s *fakeStack) LookupHost(name string) (netip.Addr, error) {
	if name == "" {
		// getaddrinfo("") in the lab, as rping -a '' shows it (exit 254).
		return netip.Addr{}, &rdma.LookupError{Code: -2, Msg: "Name or service not known"}
	}
	a, err := netip.ParseAddr(name)
	if err != nil {
		// What the lab VM, which has no resolver, answers.
		return netip.Addr{}, &rdma.LookupError{Code: -3, Msg: "Temporary failure in name resolution"}
	}
	return a, nil
}

func (s *fakeStack) CreateEventChannel() (rdma.EventChannel, error) {
	switch {
	case s.net.noDevices:
		return nil, &rdma.Error{Op: "rdma_create_event_channel", Errno: syscall.ENODEV}
	case s.net.noCMDevice:
		return nil, &rdma.Error{Op: "rdma_create_event_channel", Errno: syscall.ENOENT}
	}
	return &fakeChannel{net: s.net, stack: s}, nil
}

type fakeChannel struct {
	net    *fakeNet
	stack  *fakeStack
	events []rdma.CMEvent
}

// push queues ev; call with mu held.
func (c *fakeChannel) push(ev rdma.CMEvent) {
	c.events = append(c.events, ev)
	c.net.notify()
}

func (c *fakeChannel) CreateID() (rdma.CMID, error) {
	return &fakeID{net: c.net, ch: c}, nil
}

func (c *fakeChannel) GetEvent(timeout time.Duration) (rdma.CMEvent, error) {
	if !c.net.waitFor(timeout, func() bool { return len(c.events) > 0 }) {
		return rdma.CMEvent{}, rdma.ErrTimeout
	}
	c.net.mu.Lock()
	defer c.net.mu.Unlock()
	ev := c.events[0]
	c.events = c.events[1:]
	return ev, nil
}

func (c *fakeChannel) Close() error { return nil }

type fakeID struct {
	net      *fakeNet
	ch       *fakeChannel
	ctx      *fakeContext
	port     uint16
	dst      netip.Addr
	peer     *fakeID // the other end of the connection
	child    bool    // made by a connect request
	accepted bool
	gone     bool // disconnected or closed
	qp       *fakeQP
}

func (id *fakeID) ResolveAddr(src netip.Addr, dst netip.AddrPort, timeout time.Duration) error {
	n := id.net
	n.mu.Lock()
	defer n.mu.Unlock()
	id.dst, id.port = dst.Addr(), dst.Port()
	if n.silent[dst.Addr()] {
		go func() { // the kernel gives up after its ARP retries
			time.Sleep(10 * time.Millisecond)
			n.mu.Lock()
			id.ch.push(rdma.CMEvent{Type: rdma.CMEventAddrError, Status: -int(syscall.ETIMEDOUT), ID: id})
			n.mu.Unlock()
		}()
		return nil
	}
	id.ctx = &fakeContext{net: n, server: id.ch.stack.server}
	id.ch.push(rdma.CMEvent{Type: rdma.CMEventAddrResolved, ID: id})
	return nil
}

func (id *fakeID) ResolveRoute(time.Duration) error {
	id.net.mu.Lock()
	defer id.net.mu.Unlock()
	id.ch.push(rdma.CMEvent{Type: rdma.CMEventRouteResolved, ID: id})
	return nil
}

func (id *fakeID) Bind(a netip.AddrPort) error {
	n := id.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if !a.Addr().IsUnspecified() && !n.local[a.Addr()] {
		return &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.ENODEV}
	}
	if _, busy := n.listeners[a.Port()]; busy {
		return &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.EADDRINUSE}
	}
	id.port = a.Port()
	id.ctx = &fakeContext{net: n, server: id.ch.stack.server}
	return nil
}

func (id *fakeID) Listen(int) error {
	id.net.mu.Lock()
	defer id.net.mu.Unlock()
	id.net.listeners[id.port] = id
	id.net.notify()
	return nil
}

func (id *fakeID) Migrate(ch rdma.EventChannel) error {
	id.net.mu.Lock()
	defer id.net.mu.Unlock()
	id.ch = ch.(*fakeChannel)
	return nil
}

func (id *fakeID) Connect(*rdma.ConnParam) error {
	n := id.net
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.listeners[id.port]
	if !ok || !n.local[id.dst] {
		id.ch.push(rdma.CMEvent{Type: rdma.CMEventRejected, Status: 8, ID: id})
		return nil
	}
	child := &fakeID{net: n, ch: l.ch, ctx: &fakeContext{net: n, server: true}, port: id.port, peer: id, child: true}
	id.peer = child
	l.ch.push(rdma.CMEvent{Type: rdma.CMEventConnectRequest, ID: child, Listen: l})
	return nil
}

func (id *fakeID) Accept(*rdma.ConnParam) error {
	n := id.net
	n.mu.Lock()
	defer n.mu.Unlock()
	id.accepted = true
	id.qp.peer, id.peer.qp.peer = id.peer.qp, id.qp
	id.peer.ch.push(rdma.CMEvent{Type: rdma.CMEventEstablished, ID: id.peer})
	id.ch.push(rdma.CMEvent{Type: rdma.CMEventEstablished, ID: id})
	return nil
}

func (id *fakeID) Establish() error { return nil }

func (id *fakeID) Disconnect() error {
	n := id.net
	n.mu.Lock()
	defer n.mu.Unlock()
	id.disconnect()
	return nil
}

// disconnect ends the connection on both sides; call with mu held.
func (id *fakeID) disconnect() {
	for _, end := range []*fakeID{id, id.peer} {
		if end == nil || end.gone {
			continue
		}
		end.gone = true
		if end.qp != nil {
			end.qp.flush()
		}
		end.ch.push(rdma.CMEvent{Type: rdma.CMEventDisconnected, ID: end})
	}
}

func (id *fakeID) Context() rdma.Context {
	if id.ctx == nil {
		return nil
	}
	return id.ctx
}

func (id *fakeID) CreateQP(pd rdma.PD, send, recv rdma.CQ, _ rdma.QPCap) (rdma.QP, error) {
	id.qp = &fakeQP{net: id.net, cq: send.(*fakeCQ), id: id}
	return id.qp, nil
}

func (id *fakeID) InitOwnQP(qp rdma.QP) error {
	id.qp = qp.(*fakeQP)
	id.qp.id = id
	return nil
}

func (id *fakeID) ReadyOwnQP(rdma.QP) error { return nil }

func (id *fakeID) Close() error {
	n := id.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.listeners[id.port] == id {
		delete(n.listeners, id.port)
	}
	// A connect request destroyed unanswered is a reject with status 28
	// (IB_CM_REJ_CONSUMER_DEFINED), as the lab shows for a server whose
	// reg_mr failed.
	if id.child && !id.accepted && id.peer != nil && !id.peer.gone {
		id.peer.ch.push(rdma.CMEvent{Type: rdma.CMEventRejected, Status: 28, ID: id.peer})
	}
	return nil
}

type fakeContext struct {
	net    *fakeNet
	server bool
}

func (c *fakeContext) AllocPD() (rdma.PD, error) { return &fakePD{net: c.net, server: c.server}, nil }

func (c *fakeContext) CreateCompChannel() (rdma.CompChannel, error) { return fakeCompChannel{}, nil }

func (c *fakeContext) CreateCQ(int, rdma.CompChannel) (rdma.CQ, error) {
	return &fakeCQ{net: c.net}, nil
}

type fakeCompChannel struct{}

func (fakeCompChannel) Close() error { return nil }

type fakePD struct {
	net    *fakeNet
	server bool
}

func (pd *fakePD) RegMR(size int, _ rdma.Access) (rdma.MR, error) {
	n := pd.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if pd.server {
		n.serverRegs++
		if n.failRegMR == n.serverRegs {
			// The kernel's answer under `ulimit -l 0` without CAP_IPC_LOCK.
			return nil, &rdma.Error{Op: "ibv_reg_mr", Errno: syscall.EPERM}
		}
	}
	n.nextKey++
	mr := &fakeMR{buf: make([]byte, size), addr: uint64(n.nextKey) << 20, key: n.nextKey}
	n.mrs[mr.key] = mr
	return mr, nil
}

func (pd *fakePD) CreateRCQP(send, recv rdma.CQ, _ rdma.QPCap) (rdma.QP, error) {
	return &fakeQP{net: pd.net, cq: send.(*fakeCQ)}, nil
}

func (pd *fakePD) Close() error { return nil }

type fakeMR struct {
	buf  []byte
	addr uint64
	key  uint32
}

func (m *fakeMR) Bytes() []byte { return m.buf }
func (m *fakeMR) Addr() uint64  { return m.addr }
func (m *fakeMR) LKey() uint32  { return m.key }
func (m *fakeMR) RKey() uint32  { return m.key }
func (m *fakeMR) Close() error  { return nil }

// span is the bytes [addr, addr+n) of the MR with key, or nil when they
// are not all inside it.
func (n *fakeNet) span(key uint32, addr uint64, length uint32) []byte {
	mr := n.mrs[key]
	if mr == nil || addr < mr.addr || addr+uint64(length) > mr.addr+uint64(len(mr.buf)) {
		return nil
	}
	off := addr - mr.addr
	return mr.buf[off : off+uint64(length)]
}

type fakeCQ struct {
	net *fakeNet
	wcs []rdma.WC
}

// add queues a completion; call with mu held.
func (cq *fakeCQ) add(wc rdma.WC) {
	cq.wcs = append(cq.wcs, wc)
	cq.net.notify()
}

func (cq *fakeCQ) Await(wc []rdma.WC, also rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	var ch *fakeChannel
	if also != nil {
		ch = also.(*fakeChannel)
	}
	ready := func() bool { return len(cq.wcs) > 0 || (ch != nil && len(ch.events) > 0) }
	if !cq.net.waitFor(timeout, ready) {
		return 0, false, rdma.ErrTimeout
	}
	cq.net.mu.Lock()
	defer cq.net.mu.Unlock()
	n := copy(wc, cq.wcs)
	cq.wcs = cq.wcs[n:]
	return n, ch != nil && len(ch.events) > 0, nil
}

func (cq *fakeCQ) SetSpin(int)  {}
func (cq *fakeCQ) Close() error { return nil }

type fakeQP struct {
	net   *fakeNet
	cq    *fakeCQ
	id    *fakeID
	peer  *fakeQP
	recvs []fakeRecv
	dead  bool
}

type fakeRecv struct {
	id  uint64
	sge rdma.SGE
}

func (qp *fakeQP) Num() uint32 { return 0x11 }

func (qp *fakeQP) PostRecv(id uint64, sge rdma.SGE) error {
	qp.net.mu.Lock()
	defer qp.net.mu.Unlock()
	qp.recvs = append(qp.recvs, fakeRecv{id, sge})
	return nil
}

// flush completes the posted receives with WR_FLUSH_ERR, as a QP that
// goes to the error state does; call with mu held.
func (qp *fakeQP) flush() {
	qp.dead = true
	for _, r := range qp.recvs {
		qp.cq.add(rdma.WC{WRID: r.id, Status: rdma.WCWRFlushErr, Opcode: rdma.WCRecv})
	}
	qp.recvs = nil
}

func (qp *fakeQP) PostSend(wr rdma.SendWR) error {
	n := qp.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if qp.dead || qp.peer == nil || qp.peer.dead {
		return nil // lost: the peer is gone
	}
	local := n.span(wr.Local.LKey, wr.Local.Addr, wr.Local.Len)
	fail := func(st rdma.WCStatus, op rdma.WCOpcode) error {
		qp.cq.add(rdma.WC{WRID: wr.ID, Status: st, Opcode: op})
		return nil
	}
	switch wr.Op {
	case rdma.WRSend:
		peer := qp.peer
		if len(peer.recvs) == 0 {
			return fail(rdma.WCRNRRetryErr, rdma.WCSend)
		}
		r := peer.recvs[0]
		peer.recvs = peer.recvs[1:]
		copy(n.span(r.sge.LKey, r.sge.Addr, r.sge.Len), local)
		peer.cq.add(rdma.WC{WRID: r.id, Opcode: rdma.WCRecv, ByteLen: uint32(len(local))})
		if wr.Signaled {
			qp.cq.add(rdma.WC{WRID: wr.ID, Opcode: rdma.WCSend})
		}
	case rdma.WRRDMARead:
		if local == nil {
			return fail(rdma.WCLocProtErr, rdma.WCRDMARead)
		}
		remote := n.span(wr.RKey, wr.RemoteAddr, wr.Local.Len)
		if remote == nil {
			return fail(rdma.WCRemAccessErr, rdma.WCRDMARead)
		}
		copy(local, remote)
		qp.cq.add(rdma.WC{WRID: wr.ID, Opcode: rdma.WCRDMARead, ByteLen: wr.Local.Len})
	case rdma.WRRDMAWrite:
		remote := n.span(wr.RKey, wr.RemoteAddr, wr.Local.Len)
		if local == nil || remote == nil {
			return fail(rdma.WCRemAccessErr, rdma.WCRDMAWrite)
		}
		copy(remote, local)
		if n.corrupt && len(remote) > 0 {
			remote[0] ^= 1
		}
		qp.cq.add(rdma.WC{WRID: wr.ID, Opcode: rdma.WCRDMAWrite})
		n.writes++
		if n.killAfter > 0 && n.writes == n.killAfter {
			// The server process dies: its connection goes away and
			// the client sees DISCONNECTED.
			qp.id.disconnect()
		}
	}
	return nil
}

func (qp *fakeQP) ToError() error {
	qp.net.mu.Lock()
	defer qp.net.mu.Unlock()
	qp.flush()
	return nil
}

func (qp *fakeQP) Close() error { return nil }

func (id *fakeID) PeerAddr() netip.AddrPort {
	if id.peer == nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(id.peer.dst, id.peer.port)
}

func (cq *fakeCQ) Poll(wc []rdma.WC) (int, error) {
	cq.net.mu.Lock()
	defer cq.net.mu.Unlock()
	n := copy(wc, cq.wcs)
	cq.wcs = cq.wcs[n:]
	return n, nil
}
