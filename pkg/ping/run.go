// Package ping is rping (rdma-core's librdmacm/examples/rping) in Go: the
// same protocol on the wire, the same output byte for byte and the same
// exit codes, plus round-trip statistics, JSON, timeouts and hints.
//
// The protocol, per ping: the client advertises its source buffer (a
// 16-byte address/rkey/size message), the server RDMA-reads it and sends a
// go-ahead, the client advertises its sink, the server RDMA-writes the
// data back and sends another go-ahead.
package ping

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

const (
	exitUsage     = int(syscall.EINVAL) // rping's exit code for a bad option value
	listenBacklog = 3                   // rping's
)

// Run pings as o says. Its error carries rping's exit code; rping's own
// messages are already printed, so the error is silent unless rdmactl
// adds its own (timeouts).
func Run(o *Options) error {
	r := &runner{o: o}
	stdoutW := o.Out
	if o.JSON && o.Mode == ModeClient {
		stdoutW = o.ErrOut // stdout carries the JSON document alone
	}
	r.out = newStdout(stdoutW)
	defer r.out.Flush()
	if o.Mode == ModeClient && (o.Stats || o.JSON) {
		r.stats = newStats(o.Count)
	}

	code := r.run()
	return r.finish(code)
}

type runner struct {
	o    *Options
	out  *stdout
	peer string // "addr port" for hints

	dst, src netip.Addr
	failure  failure
	fatal    atomic.Int32 // exit code a CM error event forces (rping's exit(-1))
	stats    *stats

	// The client's outcome, for the verdict of rdmactl's own modes.
	completed, mismatch int
	interrupted         bool
	peerLeft            bool // the server disconnected first
}

// verdictModes reports whether rdmactl's own modes are on (--json,
// --stats, --timeout): then a run that rping would call a success but
// that did not do every requested ping, validated, fails.
func (o *Options) verdictModes() bool {
	return o.Mode == ModeClient && (o.JSON || o.Stats || o.Timeout > 0)
}

// shortfall says how a client run that rping counts as a success fell
// short of what was asked, or "" when it did not.
func (r *runner) shortfall() string {
	n, want := r.completed, r.o.Count
	switch {
	case r.mismatch > 0:
		return fmt.Sprintf("ping %d came back different from what was sent", r.mismatch-1)
	case want > 0 && n < want && r.interrupted:
		return fmt.Sprintf("interrupted after %d of %d pings", n, want)
	case want > 0 && n < want && r.peerLeft:
		return fmt.Sprintf("the server disconnected after %d of %d pings", n, want)
	case want > 0 && n < want:
		return fmt.Sprintf("only %d of %d pings completed", n, want)
	case want == 0 && !r.interrupted:
		return fmt.Sprintf("the server disconnected after %d pings", n)
	}
	return ""
}

func (r *runner) errorf(format string, args ...any) { fmt.Fprintf(r.o.ErrOut, format, args...) }

// run returns rping's main() return value.
func (r *runner) run() int {
	o := r.o
	if o.Size < MinSize || o.Size > MaxSize {
		r.errorf("Invalid size %d (valid range is %d to %d)\n", o.Size, MinSize, MaxSize+1)
		return exitUsage
	}
	if o.Count < 0 {
		r.errorf("Invalid count %d\n", o.Count)
		return exitUsage
	}
	r.dst = netip.IPv4Unspecified()
	for _, a := range []struct {
		text string
		into *netip.Addr
	}{{o.Addr, &r.dst}, {o.Source, &r.src}} {
		if a.text == "" {
			continue
		}
		ip, err := o.CM.LookupHost(a.text)
		if err != nil {
			var le *rdma.LookupError
			r.failure.note(failure{call: err})
			if errors.As(err, &le) {
				fmt.Fprintf(r.out, "getaddrinfo failed (%s) - invalid hostname or IP address\n", le.Msg)
				return le.Code
			}
			return -1
		}
		*a.into = ip
	}
	r.peer = fmt.Sprintf("%s port %d", r.dst.WithZone(""), uint16(o.Port))

	ec, err := o.CM.CreateEventChannel()
	if err != nil {
		r.failure.note(failure{call: err})
		if errors.Is(err, syscall.ENODEV) {
			r.errorf("No RDMA devices were detected\n")
			return rdma.ErrnoOf(err)
		}
		// rping exits with EINVAL here whatever the errno (seen in the lab
		// with /dev/infiniband/rdma_cm missing: ENOENT, exit 22).
		r.errorf("failed to create RDMA CM event channel: %s\n", rdma.Strerror(syscall.Errno(rdma.ErrnoOf(err))))
		return int(syscall.EINVAL)
	}
	defer func() { _ = ec.Close() }()
	id, err := ec.CreateID()
	if err != nil {
		r.errorf("%v\n", err)
		return -1
	}
	defer id.Close()
	r.debugf("created cm_id\n")

	switch {
	case o.Mode == ModeClient:
		return r.client(ec, id)
	case o.Persistent:
		return r.persistentServer(ec, id)
	default:
		return r.server(ec, id)
	}
}

func (r *runner) debugf(format string, args ...any) {
	if r.o.Debug {
		fmt.Fprintf(r.out, format, args...)
	}
}

// finish turns rping's return value into the process outcome, adding the
// summary, JSON document and hint.
func (r *runner) finish(code int) error {
	if f := r.fatal.Load(); f != 0 {
		code = int(f)
	}
	o := r.o
	hint := ""
	if code != 0 {
		hint = hintFor(r.failure, r.peer, r.dst.WithZone("").String(), o.Mode == ModeServer)
	}
	short := ""
	if code == 0 && o.verdictModes() {
		if short = r.shortfall(); short != "" {
			r.errorf("rdmactl ping: %s\n", short)
			if r.peerLeft {
				hint = "the server ended the connection early; its own output says why (a smaller -S there is one cause)"
			}
		}
	}
	if r.stats != nil {
		rtts, elapsed := r.stats.snapshot()
		r.out.Flush()
		if o.JSON {
			rep := newReport(o, rtts, elapsed)
			rep.OK = code == 0 && short == ""
			switch {
			case code != 0:
				rep.Error = r.failureText()
			case short != "":
				rep.Error = short
			}
			if !rep.OK {
				rep.Hint = hint
			}
			_ = cli.WriteJSON(o.Out, rep)
		} else {
			writeSummary(r.out, r.dst.WithZone("").String(), rtts, elapsed)
		}
	}
	if hint != "" {
		r.errorf("hint: %s\n", hint)
	}
	if short != "" {
		return cli.SilentExit(cli.ExitFailed)
	}
	if code == 0 {
		return nil
	}
	if r.failure.timeout != nil {
		code = cli.ExitFailed
	}
	return cli.SilentExit(code & 0xff)
}

// failureText describes the failure for the JSON document.
func (r *runner) failureText() string {
	f := r.failure
	switch {
	case f.timeout != nil:
		return f.timeout.Error()
	case f.event != 0:
		return fmt.Sprintf("cma event %s, error %d", f.event, f.status)
	case f.wc != 0:
		return fmt.Sprintf("%s completion failed: %s", f.wcOp, f.wc)
	case f.call != nil:
		return f.call.Error()
	}
	return "ping failed"
}

// keep records a finished connection's outcome in the run's.
func (r *runner) keep(c *conn) {
	r.failure.note(c.failure)
	if !c.server {
		r.completed, r.mismatch = c.completed, c.mismatch
		r.interrupted = c.interrupted != nil && c.interrupted.Load()
		r.peerLeft = c.peerLeft
	}
	if c.exitCode != 0 {
		r.fatal.CompareAndSwap(0, int32(c.exitCode))
	}
}

// catchInterrupt makes SIGINT/SIGTERM end the pings cleanly so that the
// statistics get printed; without --stats/--json the signals keep their
// default effect, as in rping.
func (r *runner) catchInterrupt(c *conn) func() {
	if r.stats == nil {
		return func() {}
	}
	flag := new(atomic.Bool)
	c.interrupted = flag
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			flag.Store(true)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

func (r *runner) client(ec rdma.EventChannel, id rdma.CMID) int {
	o := r.o
	c := newConn(o, r.out, false, id, ec)
	defer r.keep(c)
	c.stats = r.stats
	c.checkEcho = o.Validate || o.verdictModes()
	defer r.catchInterrupt(c)()

	// rping_bind_client
	dst := netip.AddrPortFrom(r.dst, uint16(o.Port))
	if err := id.ResolveAddr(r.src, dst, rdmaRouteTimeoutMs*time.Millisecond); err != nil {
		r.errorf("%v\n", err)
		c.failure.note(failure{call: err})
		return -1
	}
	if err := c.waitPost(c.deadline(), stepResolve); err != nil {
		return -1
	}
	if !c.take(RouteResolved, "waiting for addr/route resolution") {
		return -1
	}
	c.debugf("rdma_resolve_addr - rdma_resolve_route successful\n")

	defer c.close()
	if ret := r.prepare(c); ret != 0 {
		return ret
	}

	if ret := r.connect(c); ret != 0 {
		r.errorf("connect error %d\n", ret)
		return ret
	}
	ret := c.testClient()
	interrupted := c.interrupted != nil && c.interrupted.Load()
	if interrupted {
		ret = 0 // ^C under --stats ends the run as it ends ping's
	}
	if ret != 0 && c.failure.timeout == nil {
		r.errorf("rping client failed: %d\n", ret)
	}
	c.disconnect()
	return ret
}

// connect is rping_connect_client.
func (r *runner) connect(c *conn) int {
	if err := c.id.Connect(c.connParam()); err != nil {
		r.errorf("%v\n", err)
		c.failure.note(failure{call: err})
		return -1
	}
	if err := c.waitPost(c.deadline(), stepConnect); err != nil {
		return -1
	}
	if !c.take(Connected, "wait for CONNECTED") {
		return -1
	}
	if r.o.SelfQP {
		if err := c.id.ReadyOwnQP(c.qp); err != nil {
			r.errorf("rping_modify_qp: %s\n", rdma.Strerror(syscall.Errno(rdma.ErrnoOf(err))))
			return rdma.ErrnoOf(err)
		}
		if err := c.id.Establish(); err != nil {
			r.errorf("%v\n", err)
			return -1
		}
	}
	c.debugf("rdma_connect successful\n")
	return 0
}

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
	l.machine = machine{server: true, state: Idle, errOut: r.o.ErrOut}
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

// prepare creates the connection's QP and buffers and posts the first
// receive, reporting failures in rping's words; both sides do it before
// connecting.
func (r *runner) prepare(c *conn) int {
	if ret := c.setupQP(); ret != 0 {
		r.errorf("setup_qp failed: %d\n", ret)
		return ret
	}
	if ret := c.setupBuffers(); ret != 0 {
		r.errorf("rping_setup_buffers failed: %d\n", ret)
		return ret
	}
	if err := c.postRecv(); err != nil {
		r.errorf("ibv_post_recv failed: %d\n", rdma.ErrnoOf(err))
		return rdma.ErrnoOf(err)
	}
	return 0
}

// serve runs one accepted connection: rping_run_server from the QP
// setup on, or (persistent) rping_persistent_server_thread, which reports
// less.
func (r *runner) serve(c *conn, persistent bool) int {
	if ret := r.prepare(c); ret != 0 {
		return ret
	}
	if ret := r.accept(c); ret != 0 {
		r.errorf("connect error %d\n", ret)
		return ret
	}
	ret := c.testServer()
	if ret != 0 && !persistent && c.failure.timeout == nil {
		r.errorf("rping server failed: %d\n", ret)
	}
	c.disconnect()
	if persistent {
		return 0
	}
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
	// Like rping, returning ends the process: connections still running
	// are not waited for.
	for r.fatal.Load() == 0 {
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
