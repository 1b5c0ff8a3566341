package rdmatest

import (
	"errors"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

var (
	addr1 = netip.MustParseAddr("10.9.0.1")
	addr2 = netip.MustParseAddr("10.9.0.2")
)

func cmFabric() *Fabric {
	f := NewFabric()
	f.AddRoCEDevice("rxe0", addr1)
	f.AddRoCEDevice("rxe1", addr2)
	return f
}

func channel(t *testing.T, f *Fabric) *EventChannel {
	t.Helper()
	ch, err := f.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	return ch.(*EventChannel)
}

func newID(t *testing.T, ch *EventChannel, ps rdma.PortSpace) *CMID {
	t.Helper()
	id, err := ch.CreateIDIn(ps)
	if err != nil {
		t.Fatal(err)
	}
	return id.(*CMID)
}

// next is the next event on ch, which must be of type want.
func next(t *testing.T, ch rdma.EventChannel, want rdma.CMEventType) rdma.CMEvent {
	t.Helper()
	ev, err := ch.GetEvent(time.Second)
	if err != nil || ev.Type != want {
		t.Fatalf("event %v (status %d), %v; want %v", ev.Type, ev.Status, err, want)
	}
	return ev
}

// listener is an id of ps listening on 10.9.0.1:port.
func listener(t *testing.T, f *Fabric, ps rdma.PortSpace, port uint16) (*EventChannel, *CMID) {
	t.Helper()
	ch := channel(t, f)
	l := newID(t, ch, ps)
	if err := l.Bind(netip.AddrPortFrom(addr1, port)); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(1); err != nil {
		t.Fatal(err)
	}
	return ch, l
}

// resolved is an id of ps on ch, its route to 10.9.0.1:port resolved
// from src (the zero Addr: none).
func resolved(t *testing.T, ch *EventChannel, ps rdma.PortSpace, src netip.Addr, port uint16) *CMID {
	t.Helper()
	id := newID(t, ch, ps)
	if err := id.ResolveAddr(src, netip.AddrPortFrom(addr1, port), time.Second); err != nil {
		t.Fatal(err)
	}
	next(t, ch, rdma.CMEventAddrResolved)
	if err := id.ResolveRoute(time.Second); err != nil {
		t.Fatal(err)
	}
	next(t, ch, rdma.CMEventRouteResolved)
	return id
}

func qpOf(t *testing.T, id *CMID) (rdma.QP, rdma.CQ, rdma.MR) {
	t.Helper()
	ctx := id.Context()
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, _ := ctx.CreateCQ(8, nil)
	mr, _ := pd.RegMR(256, rdma.AccessLocalWrite|rdma.AccessRemoteWrite)
	qp, err := id.CreateQP(pd, cq, cq, rdma.QPCap{MaxSendWR: 4, MaxRecvWR: 4})
	if err != nil {
		t.Fatal(err)
	}
	return qp, cq, mr
}

func TestRCConnectionCarriesASend(t *testing.T) {
	f := cmFabric()
	sch, l := listener(t, f, rdma.PortSpaceTCP, 7471)
	if !f.Listening(rdma.PortSpaceTCP, 7471) || f.Listening(rdma.PortSpaceUDP, 7471) {
		t.Fatal("Listening does not tell the listener")
	}
	cch := channel(t, f)
	c := resolved(t, cch, rdma.PortSpaceTCP, addr2, 7471)
	cqp, ccq, cmr := qpOf(t, c)
	if err := c.Connect(&rdma.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	req := next(t, sch, rdma.CMEventConnectRequest)
	if req.Listen != rdma.CMID(l) {
		t.Errorf("connect request of listener %v", req.Listen)
	}
	s := req.ID.(*CMID)
	if got := s.PeerAddr(); got.Addr() != addr2 || got.Port() == 0 {
		t.Errorf("server sees the client at %v", got)
	}
	if s.Context() == nil || s.Context().(*verbsContext).dev.cfg.Name != "rxe0" || c.Context().(*verbsContext).dev.cfg.Name != "rxe1" {
		t.Error("the ids are not on the devices of their addresses")
	}
	sqp, scq, smr := qpOf(t, s)
	if err := sqp.PostRecv(1, rdma.SGEOf(smr, 256)); err != nil {
		t.Fatal(err)
	}
	if err := s.Accept(nil); err != nil {
		t.Fatal(err)
	}
	next(t, cch, rdma.CMEventEstablished)
	next(t, sch, rdma.CMEventEstablished)
	copy(cmr.Bytes(), "hello")
	if err := cqp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(cmr, 5), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if wc := one(t, scq); wc.Status != rdma.WCSuccess || string(smr.Bytes()[:5]) != "hello" {
		t.Errorf("server's receive %+v %q", wc, smr.Bytes()[:5])
	}
	if wc := one(t, ccq); wc.Opcode != rdma.WCSend {
		t.Errorf("client's send %+v", wc)
	}
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	next(t, cch, rdma.CMEventDisconnected)
	next(t, sch, rdma.CMEventDisconnected)
	if cqp.(*QP).State() != rdma.QPStateErr || sqp.(*QP).State() != rdma.QPStateRTS {
		t.Errorf("states after the client's disconnect: %v, %v", cqp.(*QP).State(), sqp.(*QP).State())
	}
	for _, id := range []*CMID{c, s, l} {
		if err := id.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if f.Listening(rdma.PortSpaceTCP, 7471) {
		t.Error("a closed listener still listens")
	}
}

// A client with its own QP gets CONNECT_RESPONSE, readies its QP and
// establishes; only then does the server see ESTABLISHED.
func TestOwnQPsAreReadiedByTheProgram(t *testing.T) {
	f := cmFabric()
	sch, _ := listener(t, f, rdma.PortSpaceTCP, 7471)
	cch := channel(t, f)
	c := resolved(t, cch, rdma.PortSpaceTCP, netip.Addr{}, 7471)
	own := func(id *CMID) rdma.QP {
		ctx := id.Context()
		pd, _ := ctx.AllocPD()
		cq, _ := ctx.CreateCQ(4, nil)
		qp, err := pd.CreateRCQP(cq, cq, rdma.QPCap{MaxSendWR: 1, MaxRecvWR: 1})
		if err == nil {
			err = id.InitOwnQP(qp)
		}
		if err != nil {
			t.Fatal(err)
		}
		return qp
	}
	cqp := own(c)
	if err := c.Connect(&rdma.ConnParam{QPNum: cqp.Num()}); err != nil {
		t.Fatal(err)
	}
	s := next(t, sch, rdma.CMEventConnectRequest).ID.(*CMID)
	sqp := own(s)
	if err := s.ReadyOwnQP(sqp); err != nil {
		t.Fatal(err)
	}
	if err := s.Accept(&rdma.ConnParam{QPNum: sqp.Num()}); err != nil {
		t.Fatal(err)
	}
	next(t, cch, rdma.CMEventConnectResponse)
	if _, err := sch.GetEvent(0); err != rdma.ErrTimeout {
		t.Fatalf("server event before the client established: %v", err)
	}
	if err := c.ReadyOwnQP(cqp); err != nil {
		t.Fatal(err)
	}
	if err := c.Establish(); err != nil {
		t.Fatal(err)
	}
	next(t, sch, rdma.CMEventEstablished)
	if cqp.(*QP).rtr.DestQPN != sqp.Num() || sqp.(*QP).rtr.DestQPN != cqp.Num() {
		t.Error("the QPs do not point at each other")
	}
}

func TestRefusedConnectRequests(t *testing.T) {
	f := cmFabric()
	cch := channel(t, f)
	// Nothing listens: REJECTED 8 on RC, UNREACHABLE 1 on UD.
	c := resolved(t, cch, rdma.PortSpaceTCP, netip.Addr{}, 7000)
	_ = c.Connect(nil)
	if ev := next(t, cch, rdma.CMEventRejected); ev.Status != 8 {
		t.Errorf("no listener: status %d", ev.Status)
	}
	u := resolved(t, cch, rdma.PortSpaceUDP, netip.Addr{}, 7000)
	_ = u.Connect(nil)
	if ev := next(t, cch, rdma.CMEventUnreachable); ev.Status != 1 {
		t.Errorf("no UD listener: status %d", ev.Status)
	}
	// The server rejects, or closes the request unanswered: 28 on RC, 2 on UD.
	sch, _ := listener(t, f, rdma.PortSpaceTCP, 7471)
	for _, reject := range []bool{true, false} {
		c := resolved(t, cch, rdma.PortSpaceTCP, netip.Addr{}, 7471)
		_ = c.Connect(nil)
		s := next(t, sch, rdma.CMEventConnectRequest).ID.(*CMID)
		if reject {
			if err := s.Reject(); err != nil {
				t.Fatal(err)
			}
			if err := s.Reject(); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("second reject: %v", err)
			}
		}
		_ = s.Close()
		if ev := next(t, cch, rdma.CMEventRejected); ev.Status != 28 {
			t.Errorf("reject %v: status %d", reject, ev.Status)
		}
		if _, err := cch.GetEvent(0); err != rdma.ErrTimeout {
			t.Errorf("reject %v: a second event", reject)
		}
	}
	uch, _ := listener(t, f, rdma.PortSpaceUDP, 7174)
	u = resolved(t, cch, rdma.PortSpaceUDP, netip.Addr{}, 7174)
	_ = u.Connect(nil)
	_ = next(t, uch, rdma.CMEventConnectRequest).ID.(*CMID).Reject()
	if ev := next(t, cch, rdma.CMEventUnreachable); ev.Status != 2 {
		t.Errorf("UD reject: status %d", ev.Status)
	}
}

// UD: the accept carries the server's QP number and rdma_cm's Q_Key, and
// a datagram sent with them arrives; the reply goes back through the
// address handle PollReply makes.
func TestUDExchange(t *testing.T) {
	f := cmFabric()
	sch, _ := listener(t, f, rdma.PortSpaceUDP, 7174)
	cch := channel(t, f)
	c := resolved(t, cch, rdma.PortSpaceUDP, netip.Addr{}, 7174)
	cqp, ccq, cmr := qpOf(t, c)
	if err := c.Connect(nil); err != nil {
		t.Fatal(err)
	}
	s := next(t, sch, rdma.CMEventConnectRequest).ID.(*CMID)
	sqp, scq, smr := qpOf(t, s)
	if k, err := sqp.(rdma.QKeyQP).QKey(); err != nil || k != udpQKey {
		t.Errorf("Q_Key %#x, %v", k, err)
	}
	_ = sqp.PostRecv(1, rdma.SGEOf(smr, 256))
	_ = cqp.PostRecv(1, rdma.SGEOf(cmr, 256))
	if err := s.Accept(&rdma.ConnParam{QPNum: sqp.Num()}); err != nil {
		t.Fatal(err)
	}
	ev := next(t, cch, rdma.CMEventEstablished)
	if ev.UD == nil || ev.UD.QPNum != sqp.Num() || ev.UD.QKey != udpQKey || ev.UD.AH.GRH == nil || ev.UD.AH.GRH.DGID != rdma.GIDFor(addr1) {
		t.Fatalf("UD parameters %+v", ev.UD)
	}
	pd, _ := c.Context().AllocPD()
	ah, err := pd.CreateAH(ev.UD.AH)
	if err != nil {
		t.Fatal(err)
	}
	copy(cmr.Bytes(), "ping")
	if err := cqp.PostSend(rdma.SendWR{Op: rdma.WRSendWithImm, Local: rdma.SGEOf(cmr, 4), Imm: cqp.Num(),
		UD: &rdma.UDDest{AH: ah, QPN: ev.UD.QPNum, QKey: ev.UD.QKey}}); err != nil {
		t.Fatal(err)
	}
	var wc [1]rdma.WC
	n, back, err := scq.(rdma.ReplyPoller).PollReply(wc[:], true, nil, nil, s.PortNum())
	if n != 1 || back == nil || err != nil || wc[0].Imm != cqp.Num() || string(smr.Bytes()[rdma.GRHSize:rdma.GRHSize+4]) != "ping" {
		t.Fatalf("server got %d %+v %v %q", n, wc[0], err, smr.Bytes()[rdma.GRHSize:rdma.GRHSize+4])
	}
	if err := sqp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(smr, 4), UD: &rdma.UDDest{AH: back, QPN: wc[0].Imm, QKey: udpQKey}}); err != nil {
		t.Fatal(err)
	}
	if wc := one(t, ccq); wc.ByteLen != rdma.GRHSize+4 {
		t.Errorf("reply %+v", wc)
	}
	if mtu, err := s.ActiveMTU(); mtu != 1024 || err != nil {
		t.Errorf("MTU %d, %v", mtu, err)
	}
}

func TestMulticastReachesTheGroupsMembers(t *testing.T) {
	f := cmFabric()
	group := netip.MustParseAddr("239.1.1.1")
	ch := channel(t, f)
	join := func(sendOnly, block bool) (*CMID, rdma.QP, rdma.CQ, rdma.MR, rdma.CMEvent) {
		id := newID(t, ch, rdma.PortSpaceUDP)
		if err := id.ResolveAddr(netip.Addr{}, netip.AddrPortFrom(group, 0), time.Second); err != nil {
			t.Fatal(err)
		}
		next(t, ch, rdma.CMEventAddrResolved)
		ctx := id.Context()
		pd, _ := ctx.AllocPD()
		cq, _ := ctx.CreateCQ(8, nil)
		mr, _ := pd.RegMR(256, rdma.AccessLocalWrite)
		qp, err := id.CreateTypedQP(pd, cq, cq, rdma.QPCap{MaxSendWR: 4, MaxRecvWR: 4}, rdma.QPTypeUD, block)
		if err != nil {
			t.Fatal(err)
		}
		_ = qp.PostRecv(1, rdma.SGEOf(mr, 256))
		if err := id.JoinMulticast(group, sendOnly); err != nil {
			t.Fatal(err)
		}
		return id, qp, cq, mr, next(t, ch, rdma.CMEventMulticastJoin)
	}
	_, _, rcq, _, _ := join(false, false)
	_, _, ocq, _, _ := join(true, false) // a send-only member receives nothing
	sid, sqp, scq, smr, ev := join(false, true)
	if f.Members(group) != 2 || ev.UD.QPNum != mcastQPN || ev.UD.AH.GRH.DGID != rdma.GIDFor(group) {
		t.Fatalf("%d members, join %+v", f.Members(group), ev.UD)
	}
	pd, _ := sid.Context().AllocPD()
	ah, err := pd.CreateAH(ev.UD.AH)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(smr, 8), Signaled: true,
		UD: &rdma.UDDest{AH: ah, QPN: ev.UD.QPNum, QKey: ev.UD.QKey}}); err != nil {
		t.Fatal(err)
	}
	if wc := one(t, rcq); wc.ByteLen != rdma.GRHSize+8 {
		t.Errorf("member's receive %+v", wc)
	}
	if wc := one(t, scq); wc.Opcode != rdma.WCSend {
		t.Errorf("sender's completion %+v (its own loopback is blocked)", wc)
	}
	var wc [1]rdma.WC
	if n, _ := ocq.Poll(wc[:]); n != 0 {
		t.Error("a send-only member received")
	}
	if err := sid.LeaveMulticast(group); err != nil || f.Members(group) != 1 {
		t.Errorf("leave: %v, %d members", err, f.Members(group))
	}
	if err := sid.LeaveMulticast(group); !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Errorf("second leave: %v", err)
	}
	if err := sid.JoinMulticast(addr2, false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("join of a unicast address: %v", err)
	}
}

func TestAddressAndBindErrors(t *testing.T) {
	f := cmFabric()
	ch := channel(t, f)
	id := newID(t, ch, rdma.PortSpaceTCP)
	_ = id.ResolveAddr(netip.Addr{}, netip.MustParseAddrPort("10.9.0.77:7471"), time.Second)
	if ev := next(t, ch, rdma.CMEventAddrError); ev.Status != -int(syscall.ETIMEDOUT) {
		t.Errorf("silent address: status %d", ev.Status)
	}
	if err := id.ResolveRoute(time.Second); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("route without address: %v", err)
	}
	if err := id.Connect(nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("connect without route: %v", err)
	}
	if err := id.ResolveAddr(netip.MustParseAddr("10.77.0.1"), netip.AddrPortFrom(addr1, 1), time.Second); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("source without device: %v", err)
	}
	if err := newID(t, ch, rdma.PortSpaceTCP).Bind(netip.MustParseAddrPort("10.77.0.1:1")); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("bind without device: %v", err)
	}
	a := newID(t, ch, rdma.PortSpaceTCP)
	if err := a.Bind(netip.MustParseAddrPort("0.0.0.0:7471")); err != nil {
		t.Fatal(err)
	}
	if err := a.Bind(netip.MustParseAddrPort("0.0.0.0:7472")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("second bind: %v", err)
	}
	if err := newID(t, ch, rdma.PortSpaceTCP).Bind(netip.AddrPortFrom(addr1, 7471)); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("port taken: %v", err)
	}
	if err := newID(t, ch, rdma.PortSpaceUDP).Bind(netip.AddrPortFrom(addr1, 7471)); err != nil {
		t.Errorf("the same port in another space: %v", err)
	}
	if _, err := ch.CreateIDIn(0x999); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("unknown port space: %v", err)
	}
	if _, err := NewFabric().CreateEventChannel(); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("no devices: %v", err)
	}
	if err := newID(t, ch, rdma.PortSpaceTCP).Accept(nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("accept of no request: %v", err)
	}
	if _, err := newID(t, ch, rdma.PortSpaceTCP).ActiveMTU(); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("MTU of an unbound id: %v", err)
	}
	for _, name := range []string{"", "host.invalid"} {
		var le *rdma.LookupError
		if _, err := f.LookupHost(name); !errors.As(err, &le) {
			t.Errorf("lookup %q: %v", name, err)
		}
	}
}

func TestInjectedCMFailures(t *testing.T) {
	f := cmFabric()
	f.FailNext("rdma_create_event_channel", rdma.Errorf("rdma_create_event_channel", syscall.ENOENT))
	if _, err := f.CreateEventChannel(); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("channel: %v", err)
	}
	ch := channel(t, f)
	f.FailNext("rdma_resolve_addr", rdma.Errorf("rdma_resolve_addr", syscall.ENOMEM))
	if err := newID(t, ch, rdma.PortSpaceTCP).ResolveAddr(netip.Addr{}, netip.AddrPortFrom(addr1, 1), time.Second); !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("resolve: %v", err)
	}
	f.FailNext("rdma_get_cm_event", rdma.Errorf("rdma_get_cm_event", syscall.EBADF))
	if _, err := ch.GetEvent(0); !errors.Is(err, syscall.EBADF) {
		t.Errorf("get event: %v", err)
	}
}

// Migrate moves the id's queued events with it; Await wakes for an event
// on the channel it watches.
func TestMigrateAndAwaitWatchTheChannel(t *testing.T) {
	f := cmFabric()
	old, to := channel(t, f), channel(t, f)
	id := newID(t, old, rdma.PortSpaceTCP)
	_ = id.ResolveAddr(netip.Addr{}, netip.AddrPortFrom(addr1, 7471), time.Second)
	if err := id.Migrate(to); err != nil {
		t.Fatal(err)
	}
	if _, err := old.GetEvent(0); err != rdma.ErrTimeout {
		t.Error("the event stayed on the old channel")
	}
	cq, _ := id.Context().CreateCQ(1, nil)
	var wc [1]rdma.WC
	if n, ready, err := cq.Await(wc[:], to, time.Second); n != 0 || !ready || err != nil {
		t.Errorf("await: %d %v %v", n, ready, err)
	}
	next(t, to, rdma.CMEventAddrResolved)
	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = id.ResolveRoute(time.Second)
	}()
	if _, ready, err := cq.Await(wc[:], to, 5*time.Second); !ready || err != nil {
		t.Errorf("await woken by an event: %v %v", ready, err)
	}
	if _, _, err := cq.Await(wc[:], old, time.Millisecond); err != rdma.ErrTimeout {
		t.Errorf("quiet await: %v", err)
	}
}

// DisconnectAfter ends the connection of the QP that posted the n-th
// request: both ends see DISCONNECTED, its QP flushes.
func TestDisconnectAfterEndsTheConnection(t *testing.T) {
	f := cmFabric()
	sch, _ := listener(t, f, rdma.PortSpaceTCP, 7471)
	cch := channel(t, f)
	c := resolved(t, cch, rdma.PortSpaceTCP, netip.Addr{}, 7471)
	cqp, _, cmr := qpOf(t, c)
	_ = c.Connect(nil)
	s := next(t, sch, rdma.CMEventConnectRequest).ID.(*CMID)
	_, _, smr := qpOf(t, s)
	_ = s.Accept(nil)
	next(t, cch, rdma.CMEventEstablished)
	next(t, sch, rdma.CMEventEstablished)
	_ = s.SetTOS(32)
	_ = s.SetAckTimeout(14)
	if s.TOS() != 32 {
		t.Errorf("TOS %d", s.TOS())
	}
	f.DisconnectAfter(rdma.WRRDMAWrite, 2)
	f.CorruptNextWrites(1)
	copy(cmr.Bytes(), "ab")
	write := rdma.SendWR{Op: rdma.WRRDMAWrite, Local: rdma.SGEOf(cmr, 2), RemoteAddr: smr.Addr(), RKey: smr.RKey()}
	if err := cqp.PostSend(write); err != nil {
		t.Fatal(err)
	}
	if got := smr.Bytes()[:2]; got[0] != ^byte('a') || got[1] != 'b' {
		t.Errorf("corrupted write landed as %q", got)
	}
	if err := cqp.PostSend(write); err != nil {
		t.Fatal(err)
	}
	if string(smr.Bytes()[:2]) != "ab" || f.Posts(rdma.WRRDMAWrite) != 2 {
		t.Errorf("second write %q, %d writes", smr.Bytes()[:2], f.Posts(rdma.WRRDMAWrite))
	}
	next(t, cch, rdma.CMEventDisconnected)
	next(t, sch, rdma.CMEventDisconnected)
	if cqp.(*QP).State() != rdma.QPStateErr {
		t.Errorf("the writer's QP is %v", cqp.(*QP).State())
	}
}
