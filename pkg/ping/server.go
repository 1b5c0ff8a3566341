package ping

import (
	"errors"
	"net/netip"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// rping's server flow: bind, listen, accept, then the echo loop; -P
// serves every client that connects.

// listen is rping_bind_server.
func (r *runner) listen(id rdma.CMID) int {
	if err := id.Bind(netip.AddrPortFrom(r.dst, uint16(r.o.Port))); err != nil {
		r.errorf("%v\n", err)
		if errors.Is(err, syscall.ENODEV) {
			// rping's CM thread, still reading the channel that main
			// destroys on its way out, adds this line.
			r.errorf("rdma_get_cm_event: %s\n", rdma.Strerror(syscall.EBADF))
		}
		r.failure.note(failure{call: err})
		return -1
	}
	r.debugf("rdma_bind_addr successful\n")
	r.debugf("rdma_listen\n")
	if err := id.Listen(listenBacklog); err != nil {
		r.errorf("%v\n", err)
		r.failure.note(failure{call: err})
		return -1
	}
	return 0
}

// listener waits for connect requests on the listening id.
type listener struct {
	machine
	id rdma.CMID
	ec rdma.EventChannel
}

func (r *runner) newListener(ec rdma.EventChannel, id rdma.CMID) *listener {
	l := &listener{id: id, ec: ec}
	l.machine = machine{server: true, state: Idle, errOut: r.o.IO.ErrOut}
	if r.o.Debug {
		l.debug = func(s string) { _, _ = r.out.Write([]byte(s)) }
	}
	return l
}

// nextRequest waits for a connect request; poll > 0 makes it give up
// (returning nil, 0) after that long so that the caller can look around.
func (l *listener) nextRequest(poll time.Duration) (rdma.CMID, int) {
	for l.posts == 0 {
		timeout := time.Duration(-1)
		if poll > 0 {
			timeout = poll
		}
		ev, err := l.ec.GetEvent(timeout)
		if errors.Is(err, rdma.ErrTimeout) {
			return nil, 0
		}
		if err != nil {
			l.errorf("%v\n", err)
			return nil, rdma.ErrnoOf(err)
		}
		l.handleCM(ev, ev.ID == l.id)
		if l.exitCode != 0 {
			return nil, l.exitCode
		}
	}
	if !l.take(ConnectRequest, "wait for CONNECT_REQUEST") {
		return nil, -1
	}
	return l.child, 0
}

// adopt gives a connect request its own event channel, so that its
// connection can wait on its CQ and its CM events together.
func (r *runner) adopt(child rdma.CMID) (*conn, error) {
	ec, err := r.o.CM.CreateEventChannel()
	if err != nil {
		return nil, err
	}
	if err := child.Migrate(ec); err != nil {
		_ = ec.Close()
		return nil, err
	}
	c := newConn(r.o, r.out, true, child, ec)
	c.state = ConnectRequest
	return c, nil
}

func (r *runner) server(ec rdma.EventChannel, id rdma.CMID) int {
	if ret := r.listen(id); ret != 0 {
		return ret
	}
	l := r.newListener(ec, id)
	child, ret := l.nextRequest(0)
	if child == nil {
		r.failure.note(l.failure)
		if l.exitCode != 0 {
			r.fatal.CompareAndSwap(0, int32(l.exitCode))
		}
		return ret
	}
	c, err := r.adopt(child)
	if err != nil {
		r.errorf("%v\n", err)
		_ = child.Close()
		return -1
	}
	defer func() { _ = c.ec.Close() }()
	defer child.Close()
	defer r.keep(c)
	defer c.close()
	return r.serve(c, false)
}

// serve runs one accepted connection: rping_run_server from the QP
// setup on, or (persistent) rping_persistent_server_thread, which reports
// less.
func (r *runner) serve(c *conn, persistent bool) int {
	if ret := r.prepare(c); ret != 0 {
		r.served.add(c, ret)
		return ret
	}
	if ret := r.accept(c); ret != 0 {
		r.errorf("connect error %d\n", ret)
		r.served.add(c, ret)
		return ret
	}
	ret := c.testServer()
	if ret != 0 && !persistent && c.failure.timeout == nil {
		r.errorf("rping server failed: %d\n", ret)
	}
	c.disconnect()
	r.served.add(c, ret)
	return ret
}

// accept is rping_accept.
func (r *runner) accept(c *conn) int {
	c.debugf("accepting client connection request\n")
	var err error
	if r.o.SelfQP {
		if err = c.id.ReadyOwnQP(c.qp); err != nil {
			return rdma.ErrnoOf(err)
		}
		err = c.id.Accept(c.connParam())
	} else {
		err = c.id.Accept(nil)
	}
	if err != nil {
		r.errorf("%v\n", err)
		c.failure.note(failure{call: err})
		return -1
	}
	if err := c.waitPost(c.deadline(), stepConnect); err != nil {
		return -1
	}
	c.posts--
	if c.state == Failed {
		r.errorf("wait for CONNECTED state %d\n", int(c.state))
		return -1
	}
	return 0
}

// persistentServer serves every client that connects, each on its own
// goroutine, until a CM error event ends the process as it ends rping.
func (r *runner) persistentServer(ec rdma.EventChannel, id rdma.CMID) int {
	if ret := r.listen(id); ret != 0 {
		return ret
	}
	l := r.newListener(ec, id)
	// With --json a -P server stops when the run's context ends (SIGINT,
	// SIGTERM) so that it ends with its document.
	stop := new(atomic.Bool)
	if r.o.EndsOnInterrupt() {
		defer r.flagOnInterrupt(stop)()
	}
	// Like rping, returning ends the process: connections still running
	// are not waited for.
	for r.fatal.Load() == 0 && !stop.Load() {
		child, ret := l.nextRequest(250 * time.Millisecond)
		if ret != 0 {
			if l.exitCode != 0 {
				r.fatal.CompareAndSwap(0, int32(l.exitCode))
			}
			return ret
		}
		if child == nil {
			continue
		}
		c, err := r.adopt(child)
		if err != nil {
			r.errorf("%v\n", err)
			_ = child.Close()
			continue
		}
		go func() {
			// Locked and never unlocked: the thread exits with the
			// goroutine, instead of joining the pool of idle threads
			// that grows with the most clients ever served at once.
			runtime.LockOSThread()
			defer cli.SessionEnded()
			defer func() { _ = c.ec.Close() }()
			defer child.Close()
			defer c.close()
			r.serve(c, true)
			if c.exitCode != 0 {
				r.fatal.CompareAndSwap(0, int32(c.exitCode))
			}
		}()
	}
	return 0
}

// testServer is rping's loop on the server (rping_test_server).
func (c *conn) testServer() int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	buf := c.rdmaMR.Bytes()
	ret := 0
	for {
		// The first wait has no deadline only in the sense rping has:
		// with --timeout an idle client ends the connection.
		deadline := c.deadline()
		if err := c.waitPost(deadline, stepNextPing); err != nil {
			return -1
		}
		if !c.take(ReadAdv, "wait for RDMA_READ_ADV") {
			ret = -1
			break
		}
		c.debugf("server received sink adv\n")

		if err := c.postRDMA(rdma.WRRDMARead, c.remote.Size); err != nil {
			c.errorf("post send error %d\n", rdma.ErrnoOf(err))
			ret = rdma.ErrnoOf(err)
			break
		}
		c.debugf("server posted rdma read req \n")
		if err := c.waitPost(deadline, stepReadDone); err != nil {
			return -1
		}
		if !c.take(ReadComplete, "wait for RDMA_READ_COMPLETE") {
			ret = -1
			break
		}
		c.debugf("server received read complete\n")
		if c.o.Verbose {
			c.out.line(serverPingDataPrefix, rdma.CString(buf))
		}

		if err := c.postInfo(nil); err != nil {
			c.errorf("post send error %d\n", rdma.ErrnoOf(err))
			ret = rdma.ErrnoOf(err)
			break
		}
		c.debugf("server posted go ahead\n")
		if err := c.waitPost(deadline, stepSinkAdv); err != nil {
			return -1
		}
		if !c.take(WriteAdv, "wait for RDMA_WRITE_ADV") {
			ret = -1
			break
		}
		c.debugf("server received sink adv\n")

		// rping echoes the C string it read, with its NUL.
		n := uint32(min(len(rdma.CString(buf))+1, len(buf)))
		if c.debug != nil {
			c.debugf("rdma write from lkey %x laddr %x len %d\n", c.rdmaMR.LKey(), c.rdmaMR.Addr(), n)
		}
		if err := c.postRDMA(rdma.WRRDMAWrite, n); err != nil {
			c.errorf("post send error %d\n", rdma.ErrnoOf(err))
			ret = rdma.ErrnoOf(err)
			break
		}
		if err := c.waitPost(deadline, stepWriteDone); err != nil {
			return -1
		}
		if !c.take(WriteComplete, "wait for RDMA_WRITE_COMPLETE") {
			ret = -1
			break
		}
		c.debugf("server rdma write complete \n")

		if err := c.postInfo(nil); err != nil {
			c.errorf("post send error %d\n", rdma.ErrnoOf(err))
			ret = rdma.ErrnoOf(err)
			break
		}
		c.debugf("server posted go ahead\n")
		c.completed++
	}
	if c.state == Disconnected {
		return 0
	}
	return ret
}
