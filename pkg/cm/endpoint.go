package cm

import (
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// msgLen is the one message rdma_server and rdma_client swap.
const msgLen = 16

// endpoint is rdma_create_ep's connected id: one RC QP with one receive
// and one send of 16 bytes, waited on as rdma_get_*_comp waits.
type endpoint struct {
	o      *Options
	out    *output
	name   string
	ec     rdma.EventChannel
	id     rdma.CMID
	pd     rdma.PD
	ch     rdma.CompChannel
	sendCQ rdma.CQ
	recvCQ rdma.CQ
	qp     rdma.QP
	recv   rdma.MR
	send   rdma.MR
	fail   failure
	timed  bool
	start  time.Time
}

func newEndpoint(o *Options, name string) *endpoint {
	return &endpoint{o: o, out: newOutput(o), name: name, start: time.Now()}
}

func (e *endpoint) timeout() time.Duration {
	if e.o.Timeout > 0 {
		return e.o.Timeout
	}
	return -1
}

// waitEvent waits for an event of type want on the endpoint's channel, as
// a synchronous id's call does; another error event fails the call with
// errno.
func (e *endpoint) waitEvent(want rdma.CMEventType, errno syscall.Errno) (rdma.CMEvent, error) {
	for {
		var ev rdma.CMEvent
		err := e.o.wait(e.timeout(), func(d time.Duration) (err error) {
			ev, err = e.ec.GetEvent(d)
			return err
		})
		if err == errStopped {
			e.fail.noteCall(err)
			return ev, err
		}
		if err == rdma.ErrTimeout {
			e.timed = true
			what := "an rdma_cm event"
			if want == rdma.CMEventConnectRequest {
				what = whatConnectRequest
			}
			e.fail.noteTimeout(e.o.Timeout, what)
			return ev, err
		}
		if err != nil {
			return ev, err
		}
		if ev.Type == want {
			return ev, nil
		}
		switch ev.Type {
		case rdma.CMEventAddrError, rdma.CMEventRouteError, rdma.CMEventConnectError,
			rdma.CMEventUnreachable, rdma.CMEventRejected:
			e.fail.noteEvent(ev)
			return ev, syncErrno(ev, errno)
		}
	}
}

// syncErrno is the errno librdmacm's synchronous calls fail with for an
// error event: ECONNREFUSED for a reject, else the event's status.
func syncErrno(ev rdma.CMEvent, fallback syscall.Errno) syscall.Errno {
	switch {
	case ev.Type == rdma.CMEventRejected:
		return syscall.ECONNREFUSED
	case ev.Status < 0:
		return syscall.Errno(-ev.Status)
	case ev.Status > 0:
		return syscall.Errno(ev.Status)
	}
	return fallback
}

// makeQP makes the verbs resources rdma_create_ep makes for its init_attr
// (one send and receive, 16 bytes inline, every send signalled).
func (e *endpoint) makeQP(id rdma.CMID) error {
	ctx := id.Context()
	if ctx == nil {
		return syscall.ENODEV
	}
	var err error
	if e.pd, err = ctx.AllocPD(); err != nil {
		return err
	}
	if e.ch, err = ctx.CreateCompChannel(); err != nil {
		return err
	}
	if e.sendCQ, err = ctx.CreateCQ(1, e.ch); err != nil {
		return err
	}
	if e.recvCQ, err = ctx.CreateCQ(1, e.ch); err != nil {
		return err
	}
	cap := rdma.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: msgLen, SigAll: true}
	e.qp, err = id.CreateQP(e.pd, e.sendCQ, e.recvCQ, cap)
	return err
}

func (e *endpoint) regMsgs() error {
	var err error
	if e.recv, err = e.pd.RegMR(msgLen, rdma.AccessLocalWrite); err != nil {
		e.out.perror("rdma_reg_msgs for recv_msg", err)
		return err
	}
	if e.send, err = e.pd.RegMR(msgLen, rdma.AccessLocalWrite); err != nil {
		e.out.perror("rdma_reg_msgs for send_msg", err)
	}
	return err
}

// comp waits for one completion on cq (rdma_get_*_comp); a failed
// completion is an error, as there.
func (e *endpoint) comp(cq rdma.CQ, what string) error {
	var wc [1]rdma.WC
	for {
		var n int
		err := e.o.wait(e.timeout(), func(d time.Duration) (err error) {
			n, _, err = cq.Await(wc[:], nil, d)
			return err
		})
		if err == errStopped {
			e.fail.noteCall(err)
			return err
		}
		if err == rdma.ErrTimeout {
			e.timed = true
			e.fail.noteTimeout(e.o.Timeout, what)
			return err
		}
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		if wc[0].Status != rdma.WCSuccess {
			return syscall.EIO
		}
		return nil
	}
}

func (e *endpoint) close() {
	if e.qp != nil {
		e.qp.Close()
	}
	for _, mr := range []rdma.MR{e.send, e.recv} {
		if mr != nil {
			mr.Close()
		}
	}
	for _, cq := range []rdma.CQ{e.sendCQ, e.recvCQ} {
		if cq != nil {
			cq.Close()
		}
	}
	if e.ch != nil {
		e.ch.Close()
	}
	if e.pd != nil {
		e.pd.Close()
	}
	if e.id != nil {
		e.id.Close()
	}
}

// finish prints the end line, the hint or the JSON document.
func (e *endpoint) finish(ret int, role string) error {
	if e.timed {
		e.out.errorf("rdmactl cm %s: %s\n", e.name, e.fail.message())
	} else {
		e.out.printf("%s: end %d\n", e.name, ret)
	}
	peer := ""
	if role == "client" {
		peer = e.o.Server
	}
	hint := ""
	if ret != 0 || e.timed {
		hint = e.fail.hint(e.name, peer)
	}
	if e.o.JSON {
		doc := runDocument{Tool: e.name, OK: ret == 0 && !e.timed, Role: role, Connections: 1,
			Size: msgLen, ElapsedMs: ms(time.Since(e.start)), Output: e.out.lines}
		if doc.OK {
			doc.Connected, doc.Messages = 1, 2
		} else {
			code := ret & 0xff
			if e.timed {
				code = cli.ExitFailed
			}
			doc.Error = &cli.ErrorBody{Message: e.fail.message(), Hint: hint, Code: code}
			if doc.Error.Message == "" {
				doc.Error.Message = "end " + strconv.Itoa(ret)
			}
		}
		_ = cli.WriteJSON(e.o.IO.Out, doc)
	} else if hint != "" {
		e.out.errorf("hint: %s\n", hint)
	}
	if e.timed {
		return cli.SilentExit(cli.ExitFailed)
	}
	return exitFor(ret)
}

func runRDMAServer(o *Options) error {
	e := newEndpoint(o, "rdma_server")
	e.out.printf("rdma_server: start\n")
	ret := e.serve()
	e.close()
	return e.finish(ret, "server")
}

func (e *endpoint) serve() int {
	server := e.o.Server
	if server == "" {
		server = "0.0.0.0"
	}
	addr, err := passiveAddr(e.o.CM, server, e.o.Port)
	if err != nil {
		e.fail.noteCall(err)
		e.out.printf("rdma_getaddrinfo: %s\n", gaiText(err))
		return -1
	}
	if e.ec, err = e.o.CM.CreateEventChannel(); err == nil {
		var l rdma.CMID
		if l, err = e.ec.CreateID(); err == nil {
			e.id = l
			err = l.Bind(addr)
		}
	}
	if err != nil {
		e.fail.noteCall(err)
		e.out.perror("rdma_create_ep", err)
		return -1
	}
	defer e.ec.Close()
	if err := e.id.Listen(0); err != nil {
		e.fail.noteCall(err)
		e.out.perror("rdma_listen", err)
		return -1
	}
	ev, err := e.waitEvent(rdma.CMEventConnectRequest, syscall.EINVAL)
	if err != nil {
		if !e.timed {
			e.out.perror("rdma_get_request", err)
		}
		return -1
	}
	listen := e.id
	e.id = ev.ID
	defer listen.Close()
	return e.answer()
}

// answer is rdma_server from its connect request, e.id, on: accept, take
// the client's message, send the reply.
func (e *endpoint) answer() int {
	if err := e.makeQP(e.id); err != nil {
		e.fail.noteCall(err)
		if dg, ok := e.id.(rdma.DatagramID); ok {
			_ = dg.Reject()
		}
		e.out.perror("rdma_get_request", err)
		return -1
	}
	if err := e.regMsgs(); err != nil {
		e.fail.noteCall(err)
		return -1
	}
	if err := e.qp.PostRecv(0, rdma.SGEOf(e.recv, msgLen)); err != nil {
		e.fail.noteCall(err)
		e.out.perror("rdma_post_recv", err)
		return -1
	}
	if err := e.id.Accept(nil); err == nil {
		_, err = e.waitEvent(rdma.CMEventEstablished, syscall.ECONNREFUSED)
		if err != nil && !e.timed {
			e.fail.noteCall(err)
			e.out.perror("rdma_accept", err)
			return -1
		}
	} else {
		e.fail.noteCall(err)
		e.out.perror("rdma_accept", err)
		return -1
	}
	if e.timed {
		return -1
	}
	defer e.id.Disconnect()
	if err := e.comp(e.recvCQ, "the client's message"); err != nil {
		if !e.timed {
			e.out.perror("rdma_get_recv_comp", err)
		}
		return -1
	}
	if err := e.qp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(e.send, msgLen), Signaled: true}); err != nil {
		e.fail.noteCall(err)
		e.out.perror("rdma_post_send", err)
		return -1
	}
	if err := e.comp(e.sendCQ, "the reply's completion"); err != nil {
		if !e.timed {
			e.out.perror("rdma_get_send_comp", err)
		}
		return -1
	}
	return 0
}

func runRDMAClient(o *Options) error {
	e := newEndpoint(o, "rdma_client")
	e.out.printf("rdma_client: start\n")
	ret := e.connect()
	e.close()
	return e.finish(ret, "client")
}

func (e *endpoint) connect() int {
	server := e.o.Server
	if server == "" {
		server = "127.0.0.1"
	}
	p, err := portOf(e.o.Port)
	var a netip.Addr
	if err == nil {
		a, err = lookup(e.o.CM, server)
	}
	if err != nil {
		e.fail.noteCall(err)
		e.out.printf("rdma_getaddrinfo: %s\n", gaiText(err))
		return -1
	}
	if err := e.createEP(netip.AddrPortFrom(a, p)); err != nil {
		if !e.timed {
			e.fail.noteCall(err)
			e.out.perror("rdma_create_ep", err)
		}
		return -1
	}
	defer e.ec.Close()
	if err := e.regMsgs(); err != nil {
		e.fail.noteCall(err)
		return -1
	}
	if err := e.qp.PostRecv(0, rdma.SGEOf(e.recv, msgLen)); err != nil {
		e.fail.noteCall(err)
		e.out.perror("rdma_post_recv", err)
		return -1
	}
	if err := e.id.Connect(nil); err == nil {
		_, err = e.waitEvent(rdma.CMEventEstablished, syscall.ECONNREFUSED)
		if err != nil && !e.timed {
			e.out.perror("rdma_connect", err)
			return -1
		}
	} else {
		e.fail.noteCall(err)
		e.out.perror("rdma_connect", err)
		return -1
	}
	if e.timed {
		return -1
	}
	defer e.id.Disconnect()
	if err := e.qp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(e.send, msgLen), Signaled: true}); err != nil {
		e.fail.noteCall(err)
		e.out.perror("rdma_post_send", err)
		return -1
	}
	if err := e.comp(e.sendCQ, "the message's completion"); err != nil {
		if !e.timed {
			e.out.perror("rdma_get_send_comp", err)
		}
		return -1
	}
	if err := e.comp(e.recvCQ, "the server's reply"); err != nil {
		if !e.timed {
			e.out.perror("rdma_get_recv_comp", err)
		}
		return -1
	}
	return 0
}

// createEP is rdma_create_ep's active side: resolve the address and the
// route, then make the QP.
func (e *endpoint) createEP(dst netip.AddrPort) error {
	var err error
	if e.ec, err = e.o.CM.CreateEventChannel(); err != nil {
		return err
	}
	if e.id, err = e.ec.CreateID(); err != nil {
		return err
	}
	if err = e.id.ResolveAddr(netip.Addr{}, dst, 2000*time.Millisecond); err != nil {
		return err
	}
	if _, err = e.waitEvent(rdma.CMEventAddrResolved, syscall.EHOSTUNREACH); err != nil {
		return err
	}
	if err = e.id.ResolveRoute(2000 * time.Millisecond); err != nil {
		return err
	}
	if _, err = e.waitEvent(rdma.CMEventRouteResolved, syscall.EHOSTUNREACH); err != nil {
		return err
	}
	return e.makeQP(e.id)
}
