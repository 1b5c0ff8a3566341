package ping

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Queue sizes as rping uses them: the peer may rely on none of them, but
// keeping them keeps the resource footprint the same.
const (
	sqDepth = 16
	rqDepth = 2
	cqDepth = 2 * sqDepth

	// Sends are unsignalled except every signalEvery-th, which lets the
	// provider reclaim send-queue slots. Skipping the other completions
	// saves a wake-up per message; rping's peer cannot tell the difference.
	signalEvery = sqDepth / 2

	// disconnectWait bounds the wait for our own DISCONNECTED event after
	// rdma_disconnect (rping prints it before it exits). It comes with the
	// peer's answer to the disconnect request, whose loss the CM repairs
	// by sending the request again after its response timeout, but only
	// while the id lives: an id destroyed sooner leaves the peer waiting
	// for a next message that never comes. The bound lets two resends
	// through.
	disconnectWait             = 15 * time.Second
	disconnectWaitAfterTimeout = 200 * time.Millisecond

	// interruptPoll is how often a wait looks at the interrupt flag when
	// --stats or --json catch SIGINT.
	interruptPoll = 100 * time.Millisecond
)

// Work request ids. rping tells completions apart by opcode; the ids
// only make completions easier to read in a debugger.
const (
	wrRecv = iota + 1
	wrSend
	wrRDMA
)

var (
	errInterrupted    = errors.New("interrupted")
	errServerStopping = errors.New("server shutting down")
)

// waitStep names what a wait is for, in timeout messages.
type waitStep int

const (
	stepResolve waitStep = iota
	stepConnect
	stepRead
	stepEcho
	stepNextPing
	stepReadDone
	stepSinkAdv
	stepWriteDone
)

func (s waitStep) describe(seq int) string {
	switch s {
	case stepResolve:
		return "address and route resolution"
	case stepConnect:
		return "the connection to be established"
	case stepRead:
		return fmt.Sprintf("the server to read ping %d", seq)
	case stepEcho:
		return fmt.Sprintf("the server to echo ping %d", seq)
	case stepNextPing:
		return "the client's next ping"
	case stepReadDone:
		return "the RDMA read to complete"
	case stepSinkAdv:
		return "the client's sink advertisement"
	}
	return "the RDMA write to complete"
}

// conn is one RDMA connection with rping's resources: a receive and a
// send buffer for the 16-byte messages, the RDMA buffer (sink on the
// client, bounce buffer on the server) and, on the client, the source.
type conn struct {
	machine
	o   *Options
	out *stdout

	id rdma.CMID
	ec rdma.EventChannel // where the id's events arrive

	pd rdma.PD
	ch rdma.CompChannel
	cq rdma.CQ
	qp rdma.QP

	// The 16-byte message buffers, the RDMA buffer and the client's source.
	recvMR, sendMR, rdmaMR, startMR rdma.MR

	wc            [16]rdma.WC
	sends         uint
	seq           int  // the ping in progress (client), for messages
	sawDisconnect bool // DISCONNECTED was handled
	disconnecting bool // this side called rdma_disconnect
	peerLeft      bool // the peer disconnected first
	pinging       bool // the client connected and started its pings

	// What the client's pings achieved, for rdmactl's verdict.
	completed int // pings echoed back
	mismatch  int // 1 + the first ping whose echo differed; 0 none

	interrupted *atomic.Bool // set by the SIGINT handler under --stats/--json
	waiter      *waiter      // poll or sleep, per wait step (wait.go)
	checkEcho   bool         // compare every echo (-V, or rdmactl's verdict)
	stats       *stats
}

func newConn(o *Options, out *stdout, server bool, id rdma.CMID, ec rdma.EventChannel) *conn {
	// Raw waits only on one CPU, where the lab measured their gain; at two
	// vCPUs two loaded boots showed -S 64 slower with them (unconfirmed).
	rawWaits := !o.Persistent && pollwait.AvailableCPUs() == 1
	c := &conn{o: o, out: out, id: id, ec: ec, waiter: newWaiter(o.Wait, o.trace, rawWaits)}
	c.machine = machine{server: server, state: Idle, errOut: o.IO.ErrOut}
	if o.Debug {
		c.debug = func(s string) { _, _ = out.Write([]byte(s)) }
	}
	c.resolveRoute = func() error { return id.ResolveRoute(rdmaRouteTimeoutMs * time.Millisecond) }
	c.repostRecv = c.postRecv
	return c
}

// setupQP creates the PD, completion channel, CQ and QP as rping's
// rping_setup_qp does. It returns rping's return value.
func (c *conn) setupQP() int {
	ctx := c.id.Context()
	if ctx == nil {
		c.errorf("ibv_alloc_pd failed\n")
		return int(syscall.ENODEV)
	}
	var err error
	if c.pd, err = ctx.AllocPD(); err != nil {
		c.errorf("ibv_alloc_pd failed\n")
		return rdma.ErrnoOf(err)
	}
	c.debugf("created pd\n")
	if c.ch, err = ctx.CreateCompChannel(); err != nil {
		c.errorf("ibv_create_comp_channel failed\n")
		return rdma.ErrnoOf(err)
	}
	c.debugf("created channel\n")
	if c.cq, err = ctx.CreateCQ(cqDepth, c.ch); err != nil {
		c.errorf("ibv_create_cq failed\n")
		return rdma.ErrnoOf(err)
	}
	c.debugf("created cq\n")
	prepareWait(c.cq)
	capacity := rdma.QPCap{MaxSendWR: sqDepth, MaxRecvWR: rqDepth, MaxSendSGE: 1, MaxRecvSGE: 1}
	if c.o.SelfQP {
		if c.qp, err = c.pd.CreateRCQP(c.cq, c.cq, capacity); err != nil {
			c.errorf("ibv_create_qp: %s\n", rdma.Strerror(syscall.Errno(rdma.ErrnoOf(err))))
			return -1
		}
		if err = c.id.InitOwnQP(c.qp); err != nil {
			c.errorf("%v\n", err)
			return -1
		}
	} else if c.qp, err = c.id.CreateQP(c.pd, c.cq, c.cq, capacity); err != nil {
		c.errorf("%v\n", err)
		return -1
	}
	c.debugf("created qp\n")
	return 0
}

// setupBuffers allocates and registers the buffers (rping_setup_buffers).
func (c *conn) setupBuffers() int {
	c.debugf("rping_setup_buffers called\n")
	type region struct {
		name   string
		size   int
		access rdma.Access
		mr     *rdma.MR
	}
	remote := rdma.AccessLocalWrite | rdma.AccessRemoteRead | rdma.AccessRemoteWrite
	regions := []region{
		{"recv_buf", InfoSize, rdma.AccessLocalWrite, &c.recvMR},
		{"send_buf", InfoSize, 0, &c.sendMR},
		{"rdma_buf", c.o.Size, remote, &c.rdmaMR},
	}
	if !c.server {
		regions = append(regions, region{"start_buf", c.o.Size, remote, &c.startMR})
	}
	for _, r := range regions {
		mr, err := c.pd.RegMR(r.size, r.access)
		var re *rdma.Error
		if errors.As(err, &re) && re.Op == "malloc" {
			c.errorf("%s malloc failed\n", r.name)
			return -int(syscall.ENOMEM)
		}
		if err != nil {
			c.errorf("%s reg_mr failed\n", r.name)
			return rdma.ErrnoOf(err)
		}
		*r.mr = mr
	}
	c.inbox = c.recvMR.Bytes()
	c.debugf("allocated & registered buffers...\n")
	return 0
}

func (c *conn) postRecv() error {
	return c.qp.PostRecv(wrRecv, rdma.SGEOf(c.recvMR, InfoSize))
}

// postInfo sends a 16-byte message: an advertisement of mr, or (nil) the
// server's go-ahead, whose content rping leaves zero.
func (c *conn) postInfo(mr rdma.MR) error {
	if mr != nil {
		info := BufferInfo{Addr: mr.Addr(), RKey: mr.RKey(), Size: uint32(c.o.Size)}
		info.Encode(c.sendMR.Bytes())
		if c.debug != nil {
			c.debugf("RDMA addr %x rkey %x len %d\n", info.Addr, info.RKey, int32(info.Size))
		}
	}
	c.sends++
	return c.qp.PostSend(rdma.SendWR{
		ID: wrSend, Op: rdma.WRSend, Local: rdma.SGEOf(c.sendMR, InfoSize),
		Signaled: c.sends%signalEvery == 0,
	})
}

func (c *conn) postRDMA(op rdma.WROpcode, n uint32) error {
	return c.qp.PostSend(rdma.SendWR{
		ID: wrRDMA, Op: op, Local: rdma.SGEOf(c.rdmaMR, n),
		RemoteAddr: c.remote.Addr, RKey: c.remote.RKey, Signaled: true,
	})
}

// deadline is when the current step gives up under --timeout; zero
// means never.
func (c *conn) deadline() time.Time {
	if c.o.Timeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(c.o.Timeout)
}

// waitPost blocks until the machine has a post (rping's sem_wait),
// handling completions and CM events as they come. A single OS thread
// does it all: no thread hops between a completion and its handling.
func (c *conn) waitPost(deadline time.Time, step waitStep) error {
	for {
		// Read on every pass, not only when a wait times out: a client
		// that pings without pause never lets one time out.
		if c.interrupted != nil && c.interrupted.Load() {
			if c.server {
				c.failure.note(failure{call: errServerStopping})
			}
			return errInterrupted
		}
		if c.posts > 0 {
			return nil
		}
		left := time.Duration(-1)
		if !deadline.IsZero() {
			left = max(time.Until(deadline), 0)
		}
		if c.interrupted != nil && (left < 0 || left > interruptPoll) {
			left = interruptPoll
		}
		cq := c.cq
		if c.cqStopped {
			cq = nil
		}
		n, ev, gotEvent, err := c.waiter.awaitWork(step, cq, c.ec, c.wc[:], left)
		if n > 0 {
			c.handleCompletions(c.wc[:n])
		}
		if gotEvent {
			c.handleEvent(ev)
		}
		switch {
		case err == nil:
		case errors.Is(err, rdma.ErrTimeout):
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				t := &timeoutError{cli.TimeoutError{After: c.o.Timeout, Doing: "waiting for " + step.describe(c.seq)}, step}
				c.errorf("rdmactl ping: %v\n", t)
				c.failure.note(failure{timeout: t})
				return t
			}
		default:
			c.failure.note(failure{call: err})
			return err
		}
	}
}

func (c *conn) handleEvent(ev rdma.CMEvent) {
	c.handleCM(ev, !c.server)
	if ev.Type == rdma.CMEventDisconnected {
		c.sawDisconnect = true
		c.peerLeft = !c.disconnecting
	}
}

func (c *conn) connParam() *rdma.ConnParam {
	p := &rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7}
	if c.o.SelfQP {
		p.QPNum = c.qp.Num()
	}
	return p
}

// disconnect ends the connection (rping_disconnect) and waits briefly
// for the DISCONNECTED event, which rping prints before it exits.
func (c *conn) disconnect() {
	if c.o.SelfQP && c.qp != nil {
		if c.qp.ToError() != nil {
			return
		}
	}
	c.disconnecting = true
	if c.id.Disconnect() != nil {
		return
	}
	wait := disconnectWait
	if c.failure.timeout != nil {
		wait = disconnectWaitAfterTimeout // the peer is likely gone
	}
	deadline := time.Now().Add(wait)
	for !c.sawDisconnect {
		left := time.Until(deadline)
		if left <= 0 || c.interrupted != nil && c.interrupted.Load() {
			return
		}
		if c.interrupted != nil {
			left = min(left, interruptPoll)
		}
		ev, err := c.ec.GetEvent(left)
		if errors.Is(err, rdma.ErrTimeout) {
			continue
		}
		if err != nil {
			return
		}
		c.handleEvent(ev)
	}
}

// close releases the verbs resources (not the id).
func (c *conn) close() {
	for _, r := range []interface{ Close() error }{c.qp, c.cq, c.ch, c.recvMR, c.sendMR, c.rdmaMR, c.startMR, c.pd} {
		if r != nil {
			_ = r.Close()
		}
	}
}
