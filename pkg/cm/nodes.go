package cm

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// node is one connection of ucmatose or udaddy.
type node struct {
	id        rdma.CMID
	connected bool
	pd        rdma.PD
	sendCQ    rdma.CQ
	recvCQ    rdma.CQ // the same CQ as sendCQ on UD
	qp        rdma.QP
	mr        rdma.MR
	ah        rdma.AH
	remoteQPN uint32
	remoteKey uint32
}

// nodeTest is the flow ucmatose (RC) and udaddy (UD) share: -c
// connections, -C messages of -S bytes one way and back, with the C
// tools' lines.
type nodeTest struct {
	o    *Options
	out  *output
	name string // "cmatose" or "udaddy", as the lines name it
	ud   bool
	ec   rdma.EventChannel

	nodes                                    []*node
	byID                                     map[rdma.CMID]*node
	connIndex, connectsLeft, disconnectsLeft int
	count, size                              int
	src                                      netip.Addr
	dst                                      netip.AddrPort
	fail                                     failure
	timedOut                                 bool
	started                                  time.Time
	messages                                 int
	connected                                int  // connections that came up
	blockSelfMcast                           bool // mckey -l
	// answersAny makes the server answer one client of any -C and -S
	// (Request.Answer's), count and size unused; exchanged is what it
	// answered.
	answersAny bool
	exchanged  *exchanged
}

// errTimedOut ends a flow whose --timeout passed; the failure says where.
var errTimedOut = errors.New("timed out")

func newNodeTest(o *Options, name string, ud bool) *nodeTest {
	return &nodeTest{o: o, name: name, ud: ud, out: newOutput(o),
		byID: map[rdma.CMID]*node{}, count: o.Count, size: o.Size}
}

// newToolTest is the node test of o.Tool: udaddy's, over UD, or
// ucmatose's, which calls itself cmatose.
func newToolTest(o *Options) *nodeTest {
	if o.Tool == "udaddy" {
		return newNodeTest(o, "udaddy", true)
	}
	return newNodeTest(o, "cmatose", false)
}

func (t *nodeTest) createID() (rdma.CMID, error) {
	if psc, ok := t.ec.(rdma.PortSpaceChannel); ok {
		return psc.CreateIDIn(t.o.PortSpace)
	}
	if t.o.PortSpace != rdma.PortSpaceTCP {
		return nil, &rdma.Error{Op: "rdma_create_id", Errno: syscall.EINVAL}
	}
	return t.ec.CreateID()
}

// run is main() of the tool after option parsing.
func (t *nodeTest) run() error {
	t.started = time.Now()
	t.connectsLeft = t.o.Connections
	ec, err := t.o.CM.CreateEventChannel()
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
	t.nodes = make([]*node, max(t.o.Connections, 0))
	for i := range t.nodes {
		t.nodes[i] = &node{}
		if t.o.Server != "" {
			id, err := t.createID()
			if err != nil {
				t.fail.noteCall(err)
				t.closeNodes()
				return t.finish(1, false)
			}
			t.nodes[i].id = id
			t.byID[id] = t.nodes[i]
		}
	}
	var ret int
	if t.o.Server != "" {
		ret = t.client()
	} else {
		ret = t.server()
	}
	if t.timedOut {
		t.closeNodes()
		return t.finish(1, false)
	}
	t.out.printf("test complete\n")
	t.closeNodes()
	t.out.printf("return status %d\n", ret)
	return t.finish(ret, true)
}

// finish prints the JSON document or the hint and gives the exit status.
func (t *nodeTest) finish(status int, completed bool) error {
	peer := t.o.Server
	if t.name == "mckey" {
		peer = t.o.Group
	}
	hint := ""
	if status != 0 || t.timedOut {
		hint = t.fail.hint(t.toolName(), peer)
	}
	if t.timedOut {
		t.out.errorf("rdmactl cm %s: %s\n", t.toolName(), t.fail.message())
	}
	if t.o.JSON {
		doc := runDocument{Tool: t.toolName(), OK: status == 0 && !t.timedOut, Role: t.role(),
			Connections: t.o.Connections, Connected: t.connected, Messages: t.messages, Size: t.size,
			ElapsedMs: ms(time.Since(t.started)), Output: t.out.lines}
		if !doc.OK {
			code := status & 0xff
			if t.timedOut {
				code = cli.ExitFailed
			}
			doc.Error = &cli.ErrorBody{Message: t.fail.message(), Hint: hint, Code: code}
			if doc.Error.Message == "" {
				doc.Error.Message = fmt.Sprintf("return status %d", status)
			}
		}
		_ = cli.WriteJSON(t.o.IO.Out, doc)
	} else if hint != "" {
		t.out.errorf("hint: %s\n", hint)
	}
	if t.timedOut {
		return cli.SilentExit(cli.ExitFailed)
	}
	return exitFor(status)
}

func (t *nodeTest) toolName() string {
	if t.name == "cmatose" {
		return "ucmatose"
	}
	return t.name
}

func (t *nodeTest) role() string {
	if t.o.Server != "" {
		return "client"
	}
	return "server"
}

func (t *nodeTest) connectedCount() int { return t.connected }

// established counts a connection that came up; the count outlives the
// connection, for the JSON document written after the nodes are closed.
func (t *nodeTest) established(n *node) {
	n.connected = true
	t.connectsLeft--
	t.connected++
}

func (t *nodeTest) waitEvent() (rdma.CMEvent, error) {
	timeout := time.Duration(-1)
	if t.o.Timeout > 0 {
		timeout = t.o.Timeout
	}
	var ev rdma.CMEvent
	err := t.o.wait(timeout, func(d time.Duration) (err error) {
		ev, err = t.ec.GetEvent(d)
		return err
	})
	if err == errStopped {
		t.fail.noteCall(err)
		return ev, err
	}
	if err == rdma.ErrTimeout {
		t.timedOut = true
		what := "an rdma_cm event"
		if t.o.Server == "" && t.connIndex == 0 && t.name != "mckey" {
			what = whatConnectRequest
		}
		t.fail.noteTimeout(t.o.Timeout, what)
		return ev, errTimedOut
	}
	return ev, err
}

func (t *nodeTest) connectError() { t.connectsLeft-- }

func (t *nodeTest) addrHandler(n *node) int {
	dg, _ := n.id.(rdma.DatagramID)
	if t.o.SetTOS {
		if err := setOpt(dg, func() error { return dg.SetTOS(t.o.TOS) }); err != nil {
			t.out.perror(t.name+": set TOS option failed", err)
		}
	}
	if t.o.SetAck {
		if err := setOpt(dg, func() error { return dg.SetAckTimeout(t.o.AckTimeout) }); err != nil {
			t.out.perror(t.name+": set ack timeout option failed", err)
		}
	}
	if err := n.id.ResolveRoute(2000 * time.Millisecond); err != nil {
		t.fail.noteCall(err)
		t.out.perror(t.name+": resolve route failed", err)
		t.connectError()
		return -1
	}
	return 0
}

func setOpt(dg rdma.DatagramID, f func() error) error {
	if dg == nil {
		return &rdma.Error{Op: "rdma_set_option", Errno: syscall.ENOSYS}
	}
	return f()
}

// verify is udaddy's check that a message fits the port's MTU.
func (t *nodeTest) verify(n *node) int {
	if !t.ud {
		return 0
	}
	dg, ok := n.id.(rdma.DatagramID)
	if !ok {
		return -int(syscall.ENOSYS)
	}
	mtu, err := dg.ActiveMTU()
	if err != nil {
		t.fail.noteCall(err)
		return -1
	}
	if t.count > 0 && t.size > mtu {
		t.out.printf("%s: message_size %d is larger than active mtu %d\n", t.name, t.size, mtu)
		return -int(syscall.EINVAL)
	}
	return 0
}

func (t *nodeTest) initNode(n *node) int {
	ctx := n.id.Context()
	if ctx == nil {
		t.out.printf("%s: unable to allocate PD\n", t.name)
		return -int(syscall.ENOMEM)
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.fail.noteCall(err)
		t.out.printf("%s: unable to allocate PD\n", t.name)
		return -int(syscall.ENOMEM)
	}
	n.pd = pd
	cqe := max(t.count, 1)
	if t.ud {
		cqe = 2 * max(t.count, 1)
	}
	if n.sendCQ, err = ctx.CreateCQ(cqe, nil); err == nil && !t.ud {
		n.recvCQ, err = ctx.CreateCQ(cqe, nil)
	} else if err == nil {
		n.recvCQ = n.sendCQ
	}
	if err != nil {
		t.fail.noteCall(err)
		t.out.printf("%s: unable to create CQ\n", t.name)
		return -int(syscall.ENOMEM)
	}
	wr := uint32(max(t.count, 1))
	cap := rdma.QPCap{MaxSendWR: wr, MaxRecvWR: wr, MaxSendSGE: 1, MaxRecvSGE: 1, SigAll: !t.ud}
	if t.ud {
		dg, ok := n.id.(rdma.DatagramID)
		if !ok {
			err = &rdma.Error{Op: "rdma_create_qp", Errno: syscall.ENOSYS}
		} else {
			n.qp, err = dg.CreateTypedQP(pd, n.sendCQ, n.recvCQ, cap, rdma.QPTypeUD, t.blockSelfMcast)
		}
	} else {
		n.qp, err = n.id.CreateQP(pd, n.sendCQ, n.recvCQ, cap)
	}
	if err != nil {
		t.fail.noteCall(err)
		t.out.perror(t.name+": unable to create QP", err)
		return -1
	}
	if t.size == 0 {
		t.count = 0
	}
	if t.count == 0 {
		return 0
	}
	size := t.size
	if t.ud {
		size += rdma.GRHSize
	}
	if n.mr, err = pd.RegMR(size, rdma.AccessLocalWrite); err != nil {
		t.fail.noteCall(err)
		t.out.printf("failed to reg MR\n")
		t.out.printf("%s: failed to create messages: %d\n", t.name, -1)
		return -1
	}
	return 0
}

func (t *nodeTest) postRecvs(n *node) int {
	if t.count == 0 {
		return 0
	}
	size := uint32(t.size)
	if t.ud {
		size += rdma.GRHSize
	}
	for i := 0; i < t.count; i++ {
		if err := n.qp.PostRecv(0, rdma.SGEOf(n.mr, size)); err != nil {
			t.fail.noteCall(err)
			t.out.printf("failed to post receives: %d\n", int(errnoOf(err)))
			return int(errnoOf(err))
		}
	}
	return 0
}

func (t *nodeTest) postSends(n *node, signaled bool) int {
	if !n.connected || t.count == 0 {
		return 0
	}
	wr := rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(n.mr, uint32(t.size))}
	if t.ud {
		wr = rdma.SendWR{Op: rdma.WRSendWithImm, Local: rdma.SGEOf(n.mr, uint32(t.size)), Imm: n.qp.Num(),
			Signaled: signaled, UD: &rdma.UDDest{AH: n.ah, QPN: n.remoteQPN, QKey: n.remoteKey}}
	}
	var err error
	if r, ok := n.qp.(rdma.SendRepeater); ok {
		_, err = r.PostSendN(wr, t.count)
	} else {
		for i := 0; i < t.count && err == nil; i++ {
			err = n.qp.PostSend(wr)
		}
	}
	if err != nil {
		t.fail.noteCall(err)
		t.out.printf("failed to post sends: %d\n", int(errnoOf(err)))
		return int(errnoOf(err))
	}
	return 0
}

func (t *nodeTest) routeHandler(n *node) int {
	ret := t.verify(n)
	if ret == 0 {
		ret = t.initNode(n)
	}
	if ret == 0 {
		ret = t.postRecvs(n)
	}
	if ret == 0 {
		p := &rdma.ConnParam{}
		if !t.ud {
			p.ResponderResources, p.InitiatorDepth, p.RetryCount = 1, 1, 5
		}
		if err := n.id.Connect(p); err != nil {
			t.fail.noteCall(err)
			t.out.perror(t.name+": failure connecting", err)
			ret = -1
		}
	}
	if ret != 0 {
		t.connectError()
	}
	return ret
}

func (t *nodeTest) connectHandler(id rdma.CMID) int {
	ret := 0
	if t.connIndex == len(t.nodes) {
		ret = -int(syscall.ENOMEM)
	} else {
		n := t.nodes[t.connIndex]
		t.connIndex++
		n.id = id
		t.byID[id] = n
		if t.answersAny {
			ret = t.initAnswering(n)
		} else {
			ret = t.accept(n)
		}
		if ret == 0 {
			if t.ud {
				t.established(n)
			}
			return 0
		}
		t.closeNode(n)
		n.id = nil
		delete(t.byID, id)
		t.connectError()
	}
	t.out.printf("%s: failing connection request\n", t.name)
	if dg, ok := id.(rdma.DatagramID); ok {
		_ = dg.Reject()
	}
	return ret
}

// accept is the tool's server side of a connect request to node n: its
// QP, its receives and the accept.
func (t *nodeTest) accept(n *node) int {
	ret := t.verify(n)
	if ret == 0 {
		ret = t.initNode(n)
	}
	if ret == 0 && !t.ud && t.o.SetAck {
		dg, _ := n.id.(rdma.DatagramID)
		if err := setOpt(dg, func() error { return dg.SetAckTimeout(t.o.AckTimeout) }); err != nil {
			t.out.perror(t.name+": set ack timeout option failed", err)
		}
	}
	if ret == 0 {
		ret = t.postRecvs(n)
	}
	if ret == 0 {
		var p *rdma.ConnParam
		if t.ud {
			p = &rdma.ConnParam{QPNum: n.qp.Num()}
		}
		if err := n.id.Accept(p); err != nil {
			t.fail.noteCall(err)
			t.out.perror(t.name+": failure accepting", err)
			ret = -1
		}
	}
	return ret
}

func (t *nodeTest) resolvedHandler(n *node, ev rdma.CMEvent) int {
	if ev.UD == nil {
		t.out.printf("%s: failure creating address handle\n", t.name)
		t.connectError()
		return -1
	}
	n.remoteQPN, n.remoteKey = ev.UD.QPNum, ev.UD.QKey
	var err error
	if n.ah, err = n.pd.CreateAH(ev.UD.AH); err != nil {
		t.fail.noteCall(err)
		t.out.printf("%s: failure creating address handle\n", t.name)
		t.connectError()
		return -1
	}
	t.established(n)
	return 0
}

func (t *nodeTest) handle(ev rdma.CMEvent) int {
	n := t.byID[ev.ID]
	switch ev.Type {
	case rdma.CMEventAddrResolved:
		return t.addrHandler(n)
	case rdma.CMEventRouteResolved:
		return t.routeHandler(n)
	case rdma.CMEventConnectRequest:
		return t.connectHandler(ev.ID)
	case rdma.CMEventEstablished:
		if t.ud {
			return t.resolvedHandler(n, ev)
		}
		t.established(n)
		t.disconnectsLeft++
	case rdma.CMEventAddrError, rdma.CMEventRouteError, rdma.CMEventConnectError,
		rdma.CMEventUnreachable, rdma.CMEventRejected:
		t.fail.noteEvent(ev)
		t.out.printf("%s: event: %s, error: %d\n", t.name, ev.Type, ev.Status)
		t.connectError()
		return ev.Status
	case rdma.CMEventDisconnected:
		if !t.ud && n != nil {
			_ = n.id.Disconnect()
			t.disconnectsLeft--
		}
	}
	return 0
}

// connectEvents handles events until every connection is up or failed.
func (t *nodeTest) connectEvents() int {
	ret := 0
	for t.connectsLeft > 0 && ret == 0 {
		ev, err := t.waitEvent()
		if err != nil {
			if !t.timedOut {
				t.out.perror(t.name+": failure in rdma_get_cm_event in connect events", err)
			}
			return int(errnoOf(err))
		}
		ret = t.handle(ev)
	}
	return ret
}

func (t *nodeTest) disconnectEvents() int {
	ret := 0
	for t.disconnectsLeft > 0 && ret == 0 {
		ev, err := t.waitEvent()
		if err != nil {
			if !t.timedOut {
				t.out.perror(t.name+": failure in rdma_get_cm_event in disconnect events", err)
			}
			return int(errnoOf(err))
		}
		ret = t.handle(ev)
	}
	return ret
}

// pollCQs takes count completions from each connected node's CQ, busy
// polling as the C tools do, within --timeout.
func (t *nodeTest) pollCQs(recv bool) int {
	var wc [8]rdma.WC
	var deadline time.Time
	if t.o.Timeout > 0 {
		deadline = time.Now().Add(t.o.Timeout)
	}
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		cq := n.sendCQ
		if recv {
			cq = n.recvCQ
		}
		for done, spins := 0, 0; done < t.count; spins++ {
			var got, ret int
			// serve's sessions sleep between empty polls, and a UD server
			// polls for its reply address first: those stay in Go.
			if counter, ok := cq.(rdma.CountPoller); ok && t.o.done == nil && !(t.ud && n.ah == nil) {
				got, ret = t.pollCount(counter, t.count-done, deadline)
			} else {
				got, ret = t.pollOnce(n, cq, wc[:], spins, deadline)
			}
			if ret != 0 {
				return ret
			}
			done += got
		}
	}
	return 0
}

// countSlice is how long one PollCount spins before pollCount looks at
// --timeout; a --timeout nearer than that bounds the slice itself. It is
// long because every return from the poll costs the Go runtime its
// hand-offs, and every call wakes its monitor thread for a while, beside
// the peer and the kernel's RDMA work.
const countSlice = time.Second

// pollCount spins in the CQ's own loop for up to n completions, a slice
// at a time so that --timeout is looked at.
func (t *nodeTest) pollCount(counter rdma.CountPoller, n int, deadline time.Time) (int, int) {
	slice := countSlice
	if !deadline.IsZero() {
		slice = min(slice, time.Until(deadline))
	}
	got := 0
	if slice > 0 {
		var err error
		if got, err = counter.PollCount(n, slice); err != nil {
			return 0, t.pollFailed(err)
		}
	}
	if got < n && !deadline.IsZero() && !time.Now().Before(deadline) {
		return got, t.pollTimedOut()
	}
	return got, 0
}

// pollOnce is one poll of the Go loop; it sleeps after an empty one in a
// serve session and looks at --timeout every 4096 empty ones.
func (t *nodeTest) pollOnce(n *node, cq rdma.CQ, wc []rdma.WC, spins int, deadline time.Time) (int, int) {
	var got int
	var err error
	if t.ud && n.ah == nil {
		got, err = t.pollReply(n, wc)
	} else {
		got, err = cq.Poll(wc)
	}
	if err != nil {
		if t.ud && n.ah == nil && got == 0 && isAHError(err) {
			t.fail.noteCall(err)
			t.out.printf("%s: failed to create reply AH\n", t.name)
			return 0, -1
		}
		return 0, t.pollFailed(err)
	}
	if got == 0 && t.o.done != nil {
		if t.o.stopped() {
			t.fail.noteCall(errStopped)
			return 0, -1
		}
		time.Sleep(responderPollGap)
	}
	if got == 0 && spins%4096 == 4095 && !deadline.IsZero() && time.Now().After(deadline) {
		return 0, t.pollTimedOut()
	}
	return got, 0
}

func (t *nodeTest) pollFailed(err error) int {
	t.fail.noteCall(err)
	t.out.printf("%s: failed polling CQ: %d\n", t.name, -int(errnoOf(err)))
	return -int(errnoOf(err))
}

func (t *nodeTest) pollTimedOut() int {
	t.timedOut = true
	t.fail.noteTimeout(t.o.Timeout, "completions")
	return 1
}

func isAHError(err error) bool {
	var ce *rdma.Error
	return asRDMA(err, &ce) && (ce.Op == "ibv_create_ah_from_wc" || ce.Op == "ibv_query_qp")
}

// pollReply polls a UD node that has no peer address yet and addresses
// the reply to the sender of its first completion.
func (t *nodeTest) pollReply(n *node, wc []rdma.WC) (int, error) {
	rp, ok := n.recvCQ.(rdma.ReplyPoller)
	if !ok {
		return 0, &rdma.Error{Op: "ibv_create_ah_from_wc", Errno: syscall.ENOSYS}
	}
	dg, _ := n.id.(rdma.DatagramID)
	port := uint8(1)
	if dg != nil {
		port = dg.PortNum()
	}
	got, ah, err := rp.PollReply(wc, true, n.pd, n.mr, port)
	if err != nil || got == 0 {
		return got, err
	}
	n.ah = ah
	n.remoteQPN = wc[0].Imm
	dq, ok := n.qp.(rdma.QKeyQP)
	if !ok {
		return 0, &rdma.Error{Op: "ibv_query_qp", Errno: syscall.ENOSYS}
	}
	if n.remoteKey, err = dq.QKey(); err != nil {
		return 0, err
	}
	return got, nil
}

func (t *nodeTest) closeNode(n *node) {
	if n.ah != nil {
		n.ah.Close()
		n.ah = nil
	}
	if n.qp != nil {
		n.qp.Close()
		n.qp = nil
	}
	if n.sendCQ != nil {
		n.sendCQ.Close()
	}
	if n.recvCQ != nil && n.recvCQ != n.sendCQ {
		n.recvCQ.Close()
	}
	n.sendCQ, n.recvCQ = nil, nil
	if n.mr != nil {
		n.mr.Close()
		n.mr = nil
	}
	if n.pd != nil {
		n.pd.Close()
		n.pd = nil
	}
}

func (t *nodeTest) closeNodes() {
	for _, n := range t.nodes {
		if n == nil || n.id == nil {
			continue
		}
		t.closeNode(n)
		n.id.Close()
		n.id = nil
	}
}

// addresses resolves -b and -s (get_rdma_addr); it prints the error.
func (t *nodeTest) addresses(port string) int {
	p, err := portOf(port)
	if err == nil && t.o.Bind != "" {
		t.src, err = lookup(t.o.CM, t.o.Bind)
	}
	if err == nil && t.o.Server != "" {
		var a netip.Addr
		a, err = lookup(t.o.CM, t.o.Server)
		t.dst = netip.AddrPortFrom(a, p)
	}
	if err != nil {
		t.fail.noteCall(err)
		t.out.printf("rdma_getaddrinfo error: %s\n", gaiText(err))
		return -1
	}
	if t.o.Server == "" {
		t.dst = netip.AddrPortFrom(t.src, p)
		if !t.src.IsValid() {
			t.dst = netip.AddrPortFrom(netip.IPv4Unspecified(), p)
		}
	}
	return 0
}

func (t *nodeTest) server() int {
	t.out.printf("%s: starting server\n", t.name)
	listen, err := t.createID()
	if err != nil {
		t.fail.noteCall(err)
		t.out.perror(t.name+": listen request failed", err)
		return -1
	}
	defer listen.Close()
	if ret := t.addresses(t.port()); ret != 0 {
		return ret
	}
	if err := listen.Bind(t.dst); err != nil {
		t.fail.noteCall(err)
		t.out.perror(t.name+": bind address failed", err)
		return -1
	}
	if err := listen.Listen(0); err != nil {
		t.fail.noteCall(err)
		t.out.perror(t.name+": failure trying to listen", err)
		return -1
	}
	return t.exchange(listen)
}

// exchange is the server from its first connect request on: accept the
// connections, swap the messages, disconnect.
func (t *nodeTest) exchange(listen rdma.CMID) int {
	if t.ud {
		return t.udServer()
	}
	ret := t.connectEvents()
	if ret != 0 || t.timedOut {
		return ret
	}
	if t.answersAny {
		if err := t.answerRC(t.nodes[0]); err != nil {
			t.fail.noteCall(err)
			return -1
		}
		// The send that waits for a receive after the client's last
		// ends with the connection: the QP is the program's own.
		_ = t.nodes[0].qp.ToError()
	} else if t.count > 0 {
		t.out.printf("initiating data transfers\n")
		for _, n := range t.nodes {
			if ret = t.postSends(n, false); ret != 0 {
				return ret
			}
		}
		t.out.printf("completing sends\n")
		if ret = t.pollCQs(false); ret != 0 || t.timedOut {
			return ret
		}
		t.out.printf("receiving data transfers\n")
		if ret = t.pollCQs(true); ret != 0 || t.timedOut {
			return ret
		}
		t.out.printf("data transfers complete\n")
		t.messages = 2 * t.count * t.connectedCount()
	}
	if t.o.Migrate {
		if ret = t.migrate(listen); ret != 0 {
			return ret
		}
	}
	t.out.printf("cmatose: disconnecting\n")
	for _, n := range t.nodes {
		if !n.connected {
			continue
		}
		n.connected = false
		_ = n.id.Disconnect()
	}
	ret = t.disconnectEvents()
	if t.timedOut {
		return ret
	}
	t.out.printf("disconnected\n")
	return ret
}

func (t *nodeTest) udServer() int {
	// As udaddy, a failed wait for events goes on to the transfers; a
	// run whose context ended does not.
	t.connectEvents()
	if t.timedOut || t.o.stopped() {
		return 1
	}
	if t.answersAny {
		if err := t.answerUD(t.nodes[0]); err != nil {
			t.fail.noteCall(err)
			return -1
		}
		return 0
	}
	if t.count == 0 {
		return 0
	}
	t.out.printf("receiving data transfers\n")
	if ret := t.pollCQs(true); ret != 0 || t.timedOut {
		return ret
	}
	t.out.printf("sending replies\n")
	for _, n := range t.nodes {
		if ret := t.postSends(n, true); ret != 0 {
			return ret
		}
	}
	if ret := t.pollCQs(true); ret != 0 || t.timedOut {
		return ret
	}
	t.out.printf("data transfers complete\n")
	t.messages = 2 * t.count * t.connectedCount()
	return 0
}

func (t *nodeTest) port() string {
	if t.ud && t.o.UDPort != "" {
		return t.o.UDPort
	}
	if t.ud {
		return "7174"
	}
	return t.o.Port
}

func (t *nodeTest) client() int {
	t.out.printf("%s: starting client\n", t.name)
	if ret := t.addresses(t.port()); ret != 0 {
		return ret
	}
	t.out.printf("%s: connecting\n", t.name)
	for _, n := range t.nodes {
		if err := n.id.ResolveAddr(t.src, t.dst, 2000*time.Millisecond); err != nil {
			t.fail.noteCall(err)
			t.out.perror(t.name+": failure getting addr", err)
			t.connectError()
			return -1
		}
	}
	ret := t.connectEvents()
	if t.timedOut {
		return ret
	}
	if t.ud {
		if ret != 0 || t.count == 0 {
			return ret
		}
		t.out.printf("initiating data transfers\n")
		for _, n := range t.nodes {
			if ret = t.postSends(n, false); ret != 0 {
				return ret
			}
		}
		t.out.printf("receiving data transfers\n")
		if ret = t.pollCQs(true); ret != 0 || t.timedOut {
			return ret
		}
		t.out.printf("data transfers complete\n")
		t.messages = 2 * t.count * t.connectedCount()
		return 0
	}
	if ret == 0 && t.count > 0 {
		t.out.printf("receiving data transfers\n")
		if ret = t.pollCQs(true); t.timedOut {
			return ret
		}
		if ret == 0 {
			t.out.printf("sending replies\n")
			for _, n := range t.nodes {
				if ret = t.postSends(n, false); ret != 0 {
					break
				}
			}
		}
		if ret == 0 {
			t.out.printf("data transfers complete\n")
			t.messages = 2 * t.count * t.connectedCount()
		}
	}
	if ret == 0 && t.o.Migrate {
		if ret = t.migrate(nil); ret != 0 {
			return ret
		}
	}
	if ret2 := t.disconnectEvents(); ret2 != 0 {
		ret = ret2
	}
	return ret
}

// migrate moves every id to a new event channel (ucmatose -m).
func (t *nodeTest) migrate(listen rdma.CMID) int {
	t.out.printf("migrating to new event channel\n")
	ch, err := t.o.CM.CreateEventChannel()
	if err != nil {
		t.out.perror("failed to create RDMA CM event channel", err)
		return -1
	}
	if listen != nil {
		err = listen.Migrate(ch)
	}
	for _, n := range t.nodes {
		if err != nil {
			break
		}
		if n.id != nil {
			err = n.id.Migrate(ch)
		}
	}
	if err != nil {
		t.fail.noteCall(err)
		t.out.perror("cmatose: failure migrating to channel", err)
		return -1
	}
	t.ec.Close()
	t.ec = ch
	return 0
}
