package cm

import (
	"net/netip"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// mckeySettle is mckey's pause after the joins, for the subnet manager
// to program the switches before data flows.
var mckeySettle = 3 * time.Second

// mckey joins -c ids to one multicast group; the sender (-s) sends -C
// datagrams to it, a receiver takes -C from it.
type mckey struct {
	t     *nodeTest
	group netip.Addr
	src   netip.Addr
}

func runMckey(o *Options) error {
	t := newNodeTest(o, "mckey", true)
	m := &mckey{t: t}
	return m.run()
}

func (m *mckey) run() error {
	t, o := m.t, m.t.o
	t.started = time.Now()
	if o.Unmapped && o.Bind == "" {
		t.out.printf("unmapped multicast address requires binding to source address\n")
		return t.finish(1, false)
	}
	t.connectsLeft = o.Connections
	ec, err := o.CM.CreateEventChannel()
	if err != nil {
		t.fail.noteCall(err)
		if errnoOf(err) == syscall.ENODEV {
			t.out.errorf("No RDMA devices were detected\n")
		} else {
			t.out.perror("failed to create RDMA CM event channel", err)
		}
		return t.finish(1, false)
	}
	t.ec = ec
	defer ec.Close()
	t.nodes = make([]*node, max(o.Connections, 0))
	for i := range t.nodes {
		id, err := t.createID()
		if err != nil {
			t.fail.noteCall(err)
			t.closeNodes()
			return t.finish(1, false)
		}
		t.nodes[i] = &node{id: id}
		t.byID[id] = t.nodes[i]
	}
	ret := m.transfer()
	if t.timedOut {
		m.leave()
		t.closeNodes()
		return t.finish(1, false)
	}
	t.out.printf("test complete\n")
	t.closeNodes()
	t.out.printf("return status %d\n", ret)
	return t.finish(ret, true)
}

func (m *mckey) transfer() int {
	t, o := m.t, m.t.o
	role := "server"
	if o.Sender {
		role = "client"
	}
	t.out.printf("mckey: starting %s\n", role)
	if o.Bind != "" {
		a, err := lookup(o.CM, o.Bind)
		if err != nil {
			t.fail.noteCall(err)
			t.out.printf("getaddrinfo failed (%s) - invalid hostname or IP address\n", gaiText(err))
			return lookupStatus(err)
		}
		m.src = a
	}
	if o.Unmapped {
		a, err := netip.ParseAddr(o.Group)
		if err != nil || !a.Is6() {
			t.out.errorf("rdmactl cm mckey: -M %q: only an IPv6-form multicast GID is understood\n", o.Group)
			return -1
		}
		t.out.errorf("rdmactl cm mckey: -M (AF_IB addresses) is not supported on this stack\n")
		return -int(syscall.EAFNOSUPPORT)
	}
	g, err := lookup(o.CM, o.Group)
	if err != nil {
		t.fail.noteCall(err)
		t.out.printf("getaddrinfo failed (%s) - invalid hostname or IP address\n", gaiText(err))
		return lookupStatus(err)
	}
	m.group = g
	t.out.printf("mckey: joining\n")
	ret := 0
	for _, n := range t.nodes {
		if m.src.IsValid() {
			if err := n.id.Bind(netip.AddrPortFrom(m.src, 0)); err != nil {
				t.fail.noteCall(err)
				t.out.perror("mckey: addr bind failure", err)
				t.connectError()
				return -1
			}
		}
		if err := n.id.ResolveAddr(m.src, netip.AddrPortFrom(g, 0), 2000*time.Millisecond); err != nil {
			t.fail.noteCall(err)
			t.out.perror("mckey: resolve addr failure", err)
			t.connectError()
			return -1
		}
	}
	ret = m.connectEvents()
	if ret == 0 && !t.timedOut {
		ret = m.data()
	}
	if t.timedOut {
		return 1
	}
	return m.leave()
}

// lookupStatus is what mckey returns for a failed getaddrinfo: its EAI code.
func lookupStatus(err error) int {
	if le, ok := err.(*rdma.LookupError); ok {
		return le.Code
	}
	return -1
}

func (m *mckey) leave() int {
	t := m.t
	ret := 0
	for _, n := range t.nodes {
		dg, ok := n.id.(rdma.DatagramID)
		var err error = &rdma.Error{Op: "rdma_leave_multicast", Errno: syscall.ENOSYS}
		if ok {
			err = dg.LeaveMulticast(m.group)
		}
		ret = 0
		if err != nil {
			ret = -1
			if !t.timedOut {
				t.out.perror("mckey: failure leaving", err)
			}
		}
	}
	return ret
}

func (m *mckey) connectEvents() int {
	t := m.t
	ret := 0
	for t.connectsLeft > 0 && ret == 0 {
		ev, err := t.waitEvent()
		if err != nil {
			return int(errnoOf(err))
		}
		n := t.byID[ev.ID]
		switch ev.Type {
		case rdma.CMEventAddrResolved:
			ret = m.addrHandler(n)
		case rdma.CMEventMulticastJoin:
			ret = m.joinHandler(n, ev)
		case rdma.CMEventAddrError, rdma.CMEventRouteError, rdma.CMEventMulticastError:
			t.fail.noteEvent(ev)
			t.out.printf("mckey: event: %s, error: %d\n", ev.Type, ev.Status)
			t.connectError()
			ret = ev.Status
		}
	}
	return ret
}

func (m *mckey) addrHandler(n *node) int {
	t, o := m.t, m.t.o
	ret := t.verify(n)
	if ret == 0 {
		ret = m.initNode(n)
	}
	if ret == 0 && !o.Sender {
		ret = t.postRecvs(n)
	}
	if ret == 0 {
		dg := n.id.(rdma.DatagramID)
		if err := dg.JoinMulticast(m.group, o.SendOnly); err != nil {
			t.fail.noteCall(err)
			t.out.perror("mckey: failure joining", err)
			ret = -1
		}
	}
	if ret != 0 {
		t.connectError()
	}
	return ret
}

// initNode is udaddy's, with mckey's -l (no multicast loopback).
func (m *mckey) initNode(n *node) int {
	if !m.t.o.NoLoopback {
		return m.t.initNode(n)
	}
	m.t.blockSelfMcast = true
	return m.t.initNode(n)
}

func (m *mckey) joinHandler(n *node, ev rdma.CMEvent) int {
	t := m.t
	var gid rdma.GID
	var dlid uint16
	var sl uint8
	if ev.UD != nil {
		if ev.UD.AH.GRH != nil {
			gid = ev.UD.AH.GRH.DGID
		}
		dlid, sl = ev.UD.AH.DLID, ev.UD.AH.SL
	}
	t.out.printf("mckey: joined dgid: %s mlid 0x%x sl %d\n", gid.String(), dlid, sl)
	return t.resolvedHandler(n, ev)
}

// data waits out the settle time, then sends or receives, reporting the
// CM events mckey's event thread reports meanwhile.
func (m *mckey) data() int {
	t, o := m.t, m.t.o
	end := time.Now().Add(mckeySettle)
	for left := time.Until(end); left > 0; left = time.Until(end) {
		m.reportEvents(left)
	}
	if t.count == 0 {
		return 0
	}
	if o.Sender {
		t.out.printf("initiating data transfers\n")
		for _, n := range t.nodes {
			if ret := t.postSends(n, false); ret != 0 {
				return ret
			}
		}
	} else {
		t.out.printf("receiving data transfers\n")
		if ret := m.receive(); ret != 0 || t.timedOut {
			return ret
		}
	}
	t.out.printf("data transfers complete\n")
	t.messages = t.count * t.connectedCount()
	return 0
}

// reportEvents prints the multicast errors and address changes that
// arrive within wait, as mckey's event thread does.
func (m *mckey) reportEvents(wait time.Duration) {
	ev, err := m.t.ec.GetEvent(wait)
	if err != nil {
		if err != rdma.ErrTimeout {
			time.Sleep(wait)
		}
		return
	}
	switch ev.Type {
	case rdma.CMEventMulticastError, rdma.CMEventAddrChange:
		m.t.fail.noteEvent(ev)
		m.t.out.printf("mckey: event: %s, status: %d\n", ev.Type, ev.Status)
	}
}

// receive takes -C completions from each node, busy polling as mckey
// does, and looks at the CM events now and then.
func (m *mckey) receive() int {
	t := m.t
	var wc [8]rdma.WC
	var deadline time.Time
	if t.o.Timeout > 0 {
		deadline = time.Now().Add(t.o.Timeout)
	}
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		for done, spins := 0, 0; done < t.count; spins++ {
			got, err := n.recvCQ.Poll(wc[:])
			if err != nil {
				t.fail.noteCall(err)
				t.out.printf("mckey: failed polling CQ: %d\n", -int(errnoOf(err)))
				return -int(errnoOf(err))
			}
			done += got
			if got == 0 && spins%4096 == 4095 {
				m.reportEvents(0)
				if !deadline.IsZero() && time.Now().After(deadline) {
					t.timedOut = true
					t.fail.noteTimeout(t.o.Timeout, "multicast data")
					return 1
				}
			}
		}
	}
	return 0
}
