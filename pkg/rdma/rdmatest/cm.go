package rdmatest

import (
	"net/netip"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The fabric's connection manager (rdma.CM): the addresses of its
// devices are those of their GIDs, ids find each other's listeners by
// port space and port, and each step raises the event librdmacm raises.
// An address no device has is on the link but never answers ARP.

// udpQKey is the Q_Key rdma_cm gives the QPs of UDP port space ids
// (RDMA_UDP_QKEY).
const udpQKey = 0x01234567

// mcastQPN is the QP number of a multicast group's sends.
const mcastQPN = 0xffffff

// The statuses a refused connect request reports: IB_CM_REJ_INVALID_SERVICE_ID
// and IB_CM_REJ_CONSUMER_DEFINED for RC, IB_SIDR_UNSUPPORTED and
// IB_SIDR_REJECT for UD.
const (
	rejNoListener = 8
	rejConsumer   = 28
	sidrNoService = 1
	sidrReject    = 2
)

// LookupHost parses numeric addresses; a name answers as getaddrinfo does
// without a resolver (EAI_AGAIN), the empty name with EAI_NONAME.
func (f *Fabric) LookupHost(name string) (netip.Addr, error) {
	if name == "" {
		return netip.Addr{}, &rdma.LookupError{Code: -2, Msg: "Name or service not known"}
	}
	a, err := netip.ParseAddr(name)
	if err != nil {
		return netip.Addr{}, &rdma.LookupError{Code: -3, Msg: "Temporary failure in name resolution"}
	}
	return a, nil
}

// CreateEventChannel fails with ENODEV on a fabric without devices, as
// librdmacm does on a host without any.
func (f *Fabric) CreateEventChannel() (rdma.EventChannel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_create_event_channel"); err != nil {
		return nil, err
	}
	if len(f.devices) == 0 {
		return nil, rdma.Errorf("rdma_create_event_channel", syscall.ENODEV)
	}
	return &EventChannel{f: f, ready: make(chan struct{}, 1)}, nil
}

// Listening reports whether an id listens on port in port space ps: a
// test starts a client once its server does.
func (f *Fabric) Listening(ps rdma.PortSpace, port uint16) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range f.bound {
		if id.ps == ps && id.local.Port() == port && id.listening {
			return true
		}
	}
	return false
}

// Members is how many QPs receive group's datagrams: a test starts a
// sender once its receivers joined.
func (f *Fabric) Members(group netip.Addr) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.groups[rdma.GIDFor(group)])
}

// deviceOf is the device with ip among its GIDs; f.mu held.
func (f *Fabric) deviceOf(ip netip.Addr) *Device {
	g := rdma.GIDFor(ip)
	for _, d := range f.devices {
		for _, e := range d.cfg.GIDs {
			if e.GID == g {
				return d
			}
		}
	}
	return nil
}

// EventChannel is an rdma_cm event channel.
type EventChannel struct {
	f      *Fabric
	events []rdma.CMEvent // f.mu
	ready  chan struct{}  // a token when an event may be there
}

// push queues ev; f.mu held.
func (c *EventChannel) push(ev rdma.CMEvent) {
	c.events = append(c.events, ev)
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

func (c *EventChannel) pending() bool {
	if c == nil {
		return false
	}
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	return len(c.events) > 0
}

// CreateID makes an id in the TCP port space.
func (c *EventChannel) CreateID() (rdma.CMID, error) { return c.CreateIDIn(rdma.PortSpaceTCP) }

// CreateIDIn makes an id in port space ps (TCP, UDP or IPoIB).
func (c *EventChannel) CreateIDIn(ps rdma.PortSpace) (rdma.CMID, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if err := c.f.call("rdma_create_id"); err != nil {
		return nil, err
	}
	if ps != rdma.PortSpaceTCP && ps != rdma.PortSpaceUDP && ps != rdma.PortSpaceIPoIB {
		return nil, rdma.Errorf("rdma_create_id", syscall.EINVAL)
	}
	return &CMID{f: c.f, ch: c, ps: ps}, nil
}

// GetEvent takes the next event, waiting at most timeout (negative: for ever).
func (c *EventChannel) GetEvent(timeout time.Duration) (rdma.CMEvent, error) {
	f := c.f
	f.mu.Lock()
	err := f.call("rdma_get_cm_event")
	f.mu.Unlock()
	if err != nil {
		return rdma.CMEvent{}, err
	}
	expire, stop := expiry(timeout)
	defer stop()
	for {
		f.mu.Lock()
		if len(c.events) > 0 {
			ev := c.events[0]
			c.events = c.events[1:]
			f.mu.Unlock()
			return ev, nil
		}
		f.mu.Unlock()
		if timeout == 0 {
			return rdma.CMEvent{}, rdma.ErrTimeout
		}
		select {
		case <-c.ready:
		case <-expire:
			return rdma.CMEvent{}, rdma.ErrTimeout
		}
	}
}

// Close destroys the channel; its queued events are dropped.
func (c *EventChannel) Close() error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if err := c.f.call("rdma_destroy_event_channel"); err != nil {
		return err
	}
	c.events = nil
	return nil
}

// CMID is an rdma_cm id (rdma.CMID and rdma.DatagramID).
type CMID struct {
	f         *Fabric
	ch        *EventChannel
	ps        rdma.PortSpace
	dev       *Device
	local     netip.AddrPort
	remote    netip.AddrPort
	bound     bool
	listening bool
	// peer is the other end: the connect request's id on the server, the
	// client's id on the connect request.
	peer      *CMID
	request   bool // made by a connect request, not yet answered
	connected bool
	closed    bool
	qp        *QP  // made by the CM, or the program's own (InitOwnQP)
	own       bool // qp is the program's: it readies it itself
	qpNum     uint32
	joined    map[netip.Addr]bool
	tos       uint8
	ackExp    uint8
	// dreqLost: this id's disconnect request was lost and its resend is
	// due (LoseNextDisconnectRequest)
	dreqLost bool
}

func (id *CMID) event(t rdma.CMEventType, status int) rdma.CMEvent {
	return rdma.CMEvent{Type: t, Status: status, ID: id}
}

// raise queues an event for id, unless id is gone; f.mu held.
func (id *CMID) raise(ev rdma.CMEvent) {
	if !id.closed {
		id.ch.push(ev)
	}
}

// qpn is the number of the id's QP: the CM's, the program's own, or the
// one its connection parameters named; f.mu held.
func (id *CMID) qpn() uint32 {
	if id.qp != nil {
		return id.qp.num
	}
	return id.qpNum
}

// ResolveAddr binds the id to the device of src, else of dst (the fabric
// is one host's loopback as much as a network); ADDR_ERROR with
// -ETIMEDOUT when no device has dst, as when no neighbour answers.
func (id *CMID) ResolveAddr(src netip.Addr, dst netip.AddrPort, timeout time.Duration) error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_resolve_addr"); err != nil {
		return err
	}
	if src.IsValid() && !src.IsUnspecified() {
		d := f.deviceOf(src)
		if d == nil {
			return rdma.Errorf("rdma_resolve_addr", syscall.ENODEV)
		}
		id.dev = d
		if !id.bound {
			id.local = netip.AddrPortFrom(src, 0)
		}
	}
	id.remote = dst
	if dst.Addr().IsMulticast() {
		if id.dev == nil && len(f.devices) > 0 {
			id.dev = f.devices[0]
		}
		id.raise(id.event(rdma.CMEventAddrResolved, 0))
		return nil
	}
	d := f.deviceOf(dst.Addr())
	if d == nil {
		id.raise(id.event(rdma.CMEventAddrError, -int(syscall.ETIMEDOUT)))
		return nil
	}
	if id.dev == nil {
		id.dev = d
		id.local = netip.AddrPortFrom(dst.Addr(), 0)
	}
	if id.local.Port() == 0 {
		id.local = netip.AddrPortFrom(id.local.Addr(), f.ephemeralPort())
	}
	id.raise(id.event(rdma.CMEventAddrResolved, 0))
	return nil
}

// ephemeralPort is a port no id has bound; f.mu held.
func (f *Fabric) ephemeralPort() uint16 {
	f.nextPort++
	return 32768 + f.nextPort%28000
}

// ResolveRoute raises ROUTE_RESOLVED for an id whose address is resolved.
func (id *CMID) ResolveRoute(timeout time.Duration) error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_resolve_route"); err != nil {
		return err
	}
	if id.dev == nil {
		return rdma.Errorf("rdma_resolve_route", syscall.EINVAL)
	}
	id.raise(id.event(rdma.CMEventRouteResolved, 0))
	return nil
}

// Bind binds addr: ENODEV for an address no device has, EADDRINUSE for a
// port another id of the port space bound on an overlapping address.
func (id *CMID) Bind(addr netip.AddrPort) error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_bind_addr"); err != nil {
		return err
	}
	if id.bound {
		return rdma.Errorf("rdma_bind_addr", syscall.EINVAL)
	}
	if !addr.Addr().IsUnspecified() {
		d := f.deviceOf(addr.Addr())
		if d == nil {
			return rdma.Errorf("rdma_bind_addr", syscall.ENODEV)
		}
		id.dev = d
	}
	if addr.Port() == 0 {
		addr = netip.AddrPortFrom(addr.Addr(), f.ephemeralPort())
	}
	for _, o := range f.bound {
		if o.ps == id.ps && o.local.Port() == addr.Port() &&
			(o.local.Addr() == addr.Addr() || o.local.Addr().IsUnspecified() || addr.Addr().IsUnspecified()) {
			return rdma.Errorf("rdma_bind_addr", syscall.EADDRINUSE)
		}
	}
	id.local, id.bound = addr, true
	f.bound = append(f.bound, id)
	return nil
}

// Listen takes connect requests; an unbound id binds every address first.
func (id *CMID) Listen(backlog int) error {
	f := id.f
	f.mu.Lock()
	if err := f.call("rdma_listen"); err != nil {
		f.mu.Unlock()
		return err
	}
	bound := id.bound
	f.mu.Unlock()
	if !bound {
		if err := id.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), 0)); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id.listening = true
	return nil
}

// listener is the id listening for dst in port space ps; f.mu held.
func (f *Fabric) listener(ps rdma.PortSpace, dst netip.AddrPort) *CMID {
	for _, l := range f.bound {
		if l.listening && !l.closed && l.ps == ps && l.local.Port() == dst.Port() &&
			(l.local.Addr().IsUnspecified() || l.local.Addr() == dst.Addr()) {
			return l
		}
	}
	return nil
}

// Migrate moves the id, and its events not yet taken, to ch.
func (id *CMID) Migrate(ch rdma.EventChannel) error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_migrate_id"); err != nil {
		return err
	}
	to, ok := ch.(*EventChannel)
	if !ok {
		return rdma.Errorf("rdma_migrate_id", syscall.EINVAL)
	}
	kept := id.ch.events[:0]
	for _, ev := range id.ch.events {
		if ev.ID == rdma.CMID(id) {
			to.push(ev)
		} else {
			kept = append(kept, ev)
		}
	}
	id.ch.events = kept
	id.ch = to
	return nil
}

// Connect sends a connect request to the listener of the resolved
// address: CONNECT_REQUEST there, or REJECTED (RC) / UNREACHABLE (UD)
// here when nothing listens.
func (id *CMID) Connect(p *rdma.ConnParam) error {
	f := id.f
	time.Sleep(f.connectDelay())
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_connect"); err != nil {
		return err
	}
	if id.dev == nil || id.peer != nil {
		return rdma.Errorf("rdma_connect", syscall.EINVAL)
	}
	f.connectTOS = append(f.connectTOS, id.tos)
	if p != nil && id.qp == nil {
		id.qpNum = p.QPNum
	}
	l := f.listener(id.ps, id.remote)
	if l == nil {
		if id.ps == rdma.PortSpaceUDP {
			id.raise(id.event(rdma.CMEventUnreachable, sidrNoService))
		} else {
			id.raise(id.event(rdma.CMEventRejected, rejNoListener))
		}
		return nil
	}
	dev := l.dev
	if dev == nil {
		dev = f.deviceOf(id.remote.Addr())
	}
	if p != nil {
		f.params = append(f.params, *p)
	}
	child := &CMID{f: f, ch: l.ch, ps: id.ps, dev: dev, local: id.remote, remote: id.local, peer: id, request: true}
	id.peer = child
	ev := rdma.CMEvent{Type: rdma.CMEventConnectRequest, ID: child, Listen: l}
	if id.ps != rdma.PortSpaceUDP {
		ev.Conn = requested(p)
	}
	l.raise(ev)
	return nil
}

// maxRDAtomic is the RDMA read depth librdmacm offers for a device when
// the program gives no connection parameters (rdma_rxe's).
const maxRDAtomic = 128

// requested is what the passive side of a connect request with p sees:
// the client's depths swapped, and librdmacm's defaults for a nil p.
func requested(p *rdma.ConnParam) *rdma.ConnParam {
	if p == nil {
		return &rdma.ConnParam{ResponderResources: maxRDAtomic, InitiatorDepth: maxRDAtomic, RetryCount: 7, RNRRetryCount: 7}
	}
	return &rdma.ConnParam{ResponderResources: p.InitiatorDepth, InitiatorDepth: p.ResponderResources,
		RetryCount: min(p.RetryCount, 7), RNRRetryCount: min(p.RNRRetryCount, 7)}
}

// Accept answers a connect request. On UD the client's ESTABLISHED
// carries where to send; on RC the CM moves the QPs it made to RTS, and a
// client with its own QP gets CONNECT_RESPONSE and must Establish.
func (id *CMID) Accept(p *rdma.ConnParam) error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_accept"); err != nil {
		return err
	}
	client := id.peer
	if !id.request || client == nil {
		return rdma.Errorf("rdma_accept", syscall.EINVAL)
	}
	if p != nil && id.qp == nil {
		id.qpNum = p.QPNum
	}
	if p != nil {
		f.params = append(f.params, *p)
	}
	id.request = false
	if id.ps == rdma.PortSpaceUDP {
		ud := &rdma.UDParam{AH: client.dev.ahTo(id.dev, id.local.Addr(), client.local.Addr()), QPNum: id.qpn(), QKey: udpQKey}
		client.raise(rdma.CMEvent{Type: rdma.CMEventEstablished, ID: client, UD: ud})
		return nil
	}
	if id.qp != nil && !id.own {
		if err := id.qp.ready(client.qpn()); err != nil {
			return err
		}
	}
	id.connected, client.connected = true, true
	if client.qp != nil && !client.own {
		if err := client.qp.ready(id.qpn()); err != nil {
			return err
		}
		client.raise(client.event(rdma.CMEventEstablished, 0))
		id.raise(id.event(rdma.CMEventEstablished, 0))
		return nil
	}
	client.raise(client.event(rdma.CMEventConnectResponse, 0))
	return nil
}

// Establish completes a client connection whose QP the program readied:
// the server sees ESTABLISHED.
func (id *CMID) Establish() error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_establish"); err != nil {
		return err
	}
	if !id.connected || id.peer == nil {
		return rdma.Errorf("rdma_establish", syscall.EINVAL)
	}
	id.peer.raise(id.peer.event(rdma.CMEventEstablished, 0))
	return nil
}

// Disconnect ends the connection: the QP the CM made goes to the error
// state (the peer's stays as it is until the peer disconnects too), and
// both ends see DISCONNECTED unless the peer ended it first.
func (id *CMID) Disconnect() error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_disconnect"); err != nil {
		return err
	}
	if id.peer == nil || id.request {
		return rdma.Errorf("rdma_disconnect", syscall.EINVAL)
	}
	if len(f.lostDREQs) > 0 && id.connected {
		resend := f.lostDREQs[0]
		f.lostDREQs = f.lostDREQs[1:]
		id.flushQP()
		id.dreqLost = true
		time.AfterFunc(resend, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if id.dreqLost && !id.closed {
				id.dreqLost = false
				id.disconnect()
			}
		})
		return nil
	}
	id.disconnect()
	return nil
}

// disconnect is Disconnect's work; f.mu held.
func (id *CMID) disconnect() {
	id.flushQP()
	for _, end := range []*CMID{id, id.peer} {
		if end.connected {
			end.connected = false
			end.raise(end.event(rdma.CMEventDisconnected, 0))
		}
	}
}

// flushQP moves the QP the CM made for id to the error state, as
// rdma_disconnect does; f.mu held.
func (id *CMID) flushQP() {
	if id.qp != nil && !id.own {
		id.qp.flush()
	}
}

// Context is the device the id is bound to; nil before that.
func (id *CMID) Context() rdma.Context {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if id.dev == nil {
		return nil
	}
	return id.dev.VerbsContext()
}

// CreateQP makes the id's RC QP (UD in the UDP port space) and moves it
// to INIT as rdma_create_qp does.
func (id *CMID) CreateQP(pd rdma.PD, send, recv rdma.CQ, cap rdma.QPCap) (rdma.QP, error) {
	t := rdma.QPTypeRC
	if id.ps == rdma.PortSpaceUDP {
		t = rdma.QPTypeUD
	}
	return id.CreateTypedQP(pd, send, recv, cap, t, false)
}

// CreateTypedQP makes the id's QP of type t, with a PD and CQs of its own
// when none are given. A UD QP is made ready to send with rdma_cm's
// Q_Key; an RC one is left in INIT until the connection is accepted.
func (id *CMID) CreateTypedQP(pd rdma.PD, send, recv rdma.CQ, cap rdma.QPCap, t rdma.QPType, blockSelfMcast bool) (rdma.QP, error) {
	ctx := id.Context()
	if ctx == nil {
		return nil, rdma.Errorf("rdma_create_qp", syscall.EINVAL)
	}
	var err error
	if pd == nil {
		if pd, err = ctx.AllocPD(); err != nil {
			return nil, err
		}
	}
	if send == nil {
		if send, err = ctx.CreateCQ(int(max(cap.MaxSendWR, 1)), nil); err != nil {
			return nil, err
		}
	}
	if recv == nil {
		if recv, err = ctx.CreateCQ(int(max(cap.MaxRecvWR, 1)), nil); err != nil {
			return nil, err
		}
	}
	qp, err := pd.CreateQP(rdma.QPInitAttr{Type: t, SendCQ: send, RecvCQ: recv, Cap: cap})
	if err != nil {
		return nil, err
	}
	q := qp.(*QP)
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	q.id, q.blockSelfMcast, q.byCM = id, blockSelfMcast, true
	q.init = rdma.InitAttr{Port: 1, Access: rdma.AccessLocalWrite | rdma.AccessRemoteRead | rdma.AccessRemoteWrite, QKey: udpQKey}
	if err := q.modify(rdma.QPStateReset, rdma.QPStateInit); err != nil {
		return nil, err
	}
	if t == rdma.QPTypeUD {
		if err := q.modify(rdma.QPStateInit, rdma.QPStateRTR); err != nil {
			return nil, err
		}
		if err := q.modify(rdma.QPStateRTR, rdma.QPStateRTS); err != nil {
			return nil, err
		}
		q.readied = true
	}
	id.qp = q
	return q, nil
}

// InitOwnQP moves a QP the program made to INIT on the id's port.
func (id *CMID) InitOwnQP(qp rdma.QP) error {
	q, ok := qp.(*QP)
	if !ok {
		return rdma.Errorf("rdma_init_qp_attr", syscall.EINVAL)
	}
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if id.dev == nil {
		return rdma.Errorf("rdma_init_qp_attr", syscall.EINVAL)
	}
	q.init = rdma.InitAttr{Port: 1, Access: rdma.AccessLocalWrite | rdma.AccessRemoteRead | rdma.AccessRemoteWrite}
	if err := q.modify(rdma.QPStateReset, rdma.QPStateInit); err != nil {
		return err
	}
	q.id, id.qp, id.own = id, q, true
	return nil
}

// ReadyOwnQP moves the program's QP to RTS towards the peer's QP.
func (id *CMID) ReadyOwnQP(qp rdma.QP) error {
	q, ok := qp.(*QP)
	if !ok {
		return rdma.Errorf("rdma_init_qp_attr", syscall.EINVAL)
	}
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if id.peer == nil {
		return rdma.Errorf("rdma_init_qp_attr", syscall.EINVAL)
	}
	return q.ready(id.peer.qpn())
}

// ReadyOwnQPWithRNRRetry is ReadyOwnQP; the fabric's sends wait for a
// receive without end whatever the count, which the QP keeps.
func (id *CMID) ReadyOwnQPWithRNRRetry(qp rdma.QP, rnrRetry uint8) error {
	if err := id.ReadyOwnQP(qp); err != nil {
		return err
	}
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	qp.(*QP).rts.RNRRetry = rnrRetry
	return nil
}

var _ rdma.RNRRetryCMID = (*CMID)(nil)

// PeerAddr is the other end's address and port.
func (id *CMID) PeerAddr() netip.AddrPort {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if id.peer == nil {
		return netip.AddrPort{}
	}
	return id.remote
}

// Close destroys the id. A connect request closed unanswered is refused
// (REJECTED 28 on RC, as the kernel does); a connection still up ends
// with DISCONNECTED at the peer.
func (id *CMID) Close() error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_destroy_id"); err != nil {
		return err
	}
	if id.request {
		id.refuse()
	}
	if id.connected && id.peer.connected && !id.dreqLost {
		id.peer.connected = false
		id.peer.raise(id.peer.event(rdma.CMEventDisconnected, 0))
	}
	for g := range id.joined {
		f.leave(g, id.qp)
	}
	for i, o := range f.bound {
		if o == id {
			f.bound = append(f.bound[:i], f.bound[i+1:]...)
			break
		}
	}
	if id.qp != nil && id.qp.id == id {
		id.qp.id = nil
	}
	id.closed, id.connected = true, false
	return nil
}

// refuse answers a connect request with a reject; f.mu held.
func (id *CMID) refuse() {
	id.request = false
	if id.ps == rdma.PortSpaceUDP {
		id.peer.raise(id.peer.event(rdma.CMEventUnreachable, sidrReject))
	} else {
		id.peer.raise(id.peer.event(rdma.CMEventRejected, rejConsumer))
	}
}

// Reject refuses a connect request.
func (id *CMID) Reject() error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_reject"); err != nil {
		return err
	}
	if !id.request {
		return rdma.Errorf("rdma_reject", syscall.EINVAL)
	}
	id.refuse()
	return nil
}

// JoinMulticast attaches the id's QP (not when sendOnly) to group and
// raises MULTICAST_JOIN with where the group's sends go.
func (id *CMID) JoinMulticast(group netip.Addr, sendOnly bool) error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_join_multicast"); err != nil {
		return err
	}
	if id.dev == nil || !group.IsMulticast() {
		return rdma.Errorf("rdma_join_multicast", syscall.EINVAL)
	}
	if id.joined == nil {
		id.joined = map[netip.Addr]bool{}
	}
	id.joined[group] = true
	if !sendOnly && id.qp != nil {
		if f.groups == nil {
			f.groups = map[rdma.GID][]*QP{}
		}
		g := rdma.GIDFor(group)
		f.groups[g] = append(f.groups[g], id.qp)
	}
	ud := &rdma.UDParam{AH: id.dev.ahTo(nil, group, id.local.Addr()), QPNum: mcastQPN, QKey: udpQKey}
	id.raise(rdma.CMEvent{Type: rdma.CMEventMulticastJoin, ID: id, UD: ud})
	return nil
}

// LeaveMulticast detaches the id from group; EADDRNOTAVAIL if it is not
// a member.
func (id *CMID) LeaveMulticast(group netip.Addr) error {
	f := id.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("rdma_leave_multicast"); err != nil {
		return err
	}
	if !id.joined[group] {
		return rdma.Errorf("rdma_leave_multicast", syscall.EADDRNOTAVAIL)
	}
	delete(id.joined, group)
	f.leave(group, id.qp)
	return nil
}

// leave detaches q from group; f.mu held.
func (f *Fabric) leave(group netip.Addr, q *QP) {
	g := rdma.GIDFor(group)
	members := f.groups[g]
	for i, m := range members {
		if m == q {
			f.groups[g] = append(members[:i], members[i+1:]...)
			return
		}
	}
}

// SetTOS records the type of service.
func (id *CMID) SetTOS(tos uint8) error {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if err := id.f.call("rdma_set_option"); err != nil {
		return err
	}
	id.tos = tos
	id.f.tos = append(id.f.tos, tos)
	return nil
}

// SetAckTimeout records the ACK timeout exponent.
func (id *CMID) SetAckTimeout(exp uint8) error {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if err := id.f.call("rdma_set_option"); err != nil {
		return err
	}
	id.ackExp = exp
	return nil
}

// TOS is the type of service set on the id.
func (id *CMID) TOS() uint8 {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	return id.tos
}

// ActiveMTU is the bound device's active MTU in bytes.
func (id *CMID) ActiveMTU() (int, error) {
	id.f.mu.Lock()
	defer id.f.mu.Unlock()
	if err := id.f.call("ibv_query_port"); err != nil {
		return 0, err
	}
	if id.dev == nil {
		return 0, rdma.Errorf("ibv_query_port", syscall.ENODEV)
	}
	return mtuBytes(id.dev.cfg.ActiveMTU), nil
}

// PortNum is the device's one port.
func (id *CMID) PortNum() uint8 { return 1 }

// ahTo addresses a peer at ip (on device to, nil for a group) from this
// device's address from: by GID on RoCE, by LID on InfiniBand.
func (d *Device) ahTo(to *Device, ip, from netip.Addr) rdma.AHAttr {
	a := rdma.AHAttr{Port: 1}
	if d.cfg.LinkLayer == rdma.LinkLayerInfiniBand {
		if to != nil {
			a.DLID = to.cfg.LID
		}
		return a
	}
	a.GRH = &rdma.GRH{DGID: rdma.GIDFor(ip), SGIDIndex: d.gidIndex(from), HopLimit: 64}
	return a
}

// gidIndex is the index of ip's RoCE v2 GID, else of the first entry.
func (d *Device) gidIndex(ip netip.Addr) uint8 {
	g := rdma.GIDFor(ip)
	idx := uint8(0)
	if len(d.cfg.GIDs) > 0 {
		idx = uint8(d.cfg.GIDs[0].Index)
	}
	for _, e := range d.cfg.GIDs {
		if e.GID == g && ip.IsValid() {
			idx = uint8(e.Index)
			if e.Type == rdma.GIDTypeRoCEv2 {
				break
			}
		}
	}
	return idx
}

var (
	_ rdma.CM               = (*Fabric)(nil)
	_ rdma.Stack            = (*Fabric)(nil)
	_ rdma.PortSpaceChannel = (*EventChannel)(nil)
	_ rdma.DatagramID       = (*CMID)(nil)
)
