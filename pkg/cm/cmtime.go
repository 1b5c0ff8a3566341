package cm

import (
	"math"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// cmtime times each step of setting up and tearing down -c connections
// (client), or accepts them for ever (server).
type cmtime struct {
	o      *Options
	out    *output
	ec     rdma.EventChannel // the server's
	run    rdma.CMTiming     // the client's
	failed []bool
	tm     timings
	fail   failure
	timed  bool
	began  time.Time
}

// CmtimeDocument is cmtime's --json document.
type CmtimeDocument struct {
	Tool          string         `json:"tool"`
	OK            bool           `json:"ok"`
	Role          string         `json:"role"`
	Connections   int            `json:"connections"`
	Steps         []StepRow      `json:"steps"`
	ConnPerSecond float64        `json:"connections_per_second"`
	Connect       Percentiles    `json:"connect"`
	Output        []string       `json:"output"`
	Error         *cli.ErrorBody `json:"error,omitempty"`
}

func runCmtime(o *Options) error {
	c := &cmtime{o: o, out: newOutput(o), began: time.Now()}
	if o.Server == "" {
		ec, err := o.CM.CreateEventChannel()
		if err != nil {
			return c.finish(c.noChannel(err))
		}
		defer ec.Close()
		c.ec = ec
		return c.finish(c.server())
	}
	timer, ok := o.CM.(rdma.CMTimer)
	if !ok {
		return c.finish(c.noChannel(&rdma.Error{Op: "rdma_create_event_channel", Errno: syscall.ENOSYS}))
	}
	run, err := timer.OpenCMTiming(max(o.Connections, 0))
	if err != nil {
		return c.finish(c.noChannel(err))
	}
	defer run.Close()
	c.run = run
	ret := c.allocNodes()
	if ret == 0 {
		ret = c.client()
	}
	if !c.timed {
		c.cleanup()
	}
	return c.finish(ret)
}

// noChannel reports an event channel that could not be had, as cmtime
// does.
func (c *cmtime) noChannel(err error) int {
	c.fail.noteCall(err)
	if errnoOf(err) == syscall.ENODEV {
		c.out.errorf("No RDMA devices were detected\n")
	} else {
		c.out.perror("failed to create RDMA CM event channel", err)
	}
	return 1
}

func (c *cmtime) finish(ret int) error {
	peer := c.o.Server
	anyFailed := false
	for _, f := range c.failed {
		anyFailed = anyFailed || f
	}
	hint := ""
	if ret != 0 || c.timed || anyFailed {
		hint = c.fail.hint("cmtime", peer)
	}
	if c.timed {
		c.out.errorf("rdmactl cm cmtime: %s\n", c.fail.message())
	}
	c.tm.bind = c.o.Bind != ""
	rows := c.tm.rows()
	if c.o.JSON {
		role := "client"
		if c.o.Server == "" {
			role = "server"
		}
		for i := range rows {
			if math.IsNaN(rows[i].UsConn) {
				rows[i].UsConn = 0
			}
		}
		doc := CmtimeDocument{Tool: "cmtime", OK: ret == 0 && !c.timed && !anyFailed, Role: role,
			Connections: len(c.tm.conns), Steps: rows, ConnPerSecond: c.tm.perSecond(),
			Connect: c.tm.connectPercentiles(), Output: c.out.lines}
		if !doc.OK {
			code := ret & 0xff
			if c.timed {
				code = cli.ExitFailed
			}
			doc.Error = &cli.ErrorBody{Message: c.fail.message(), Hint: hint, Code: code}
		}
		_ = cli.WriteJSON(c.o.IO.Out, doc)
	} else {
		if !c.timed && c.o.Server != "" {
			var b strings.Builder
			writeTable(&b, rows)
			c.out.printf("%s", b.String())
		}
		if hint != "" {
			c.out.errorf("hint: %s\n", hint)
		}
	}
	if c.timed {
		return cli.SilentExit(cli.ExitFailed)
	}
	return exitFor(ret)
}

// step runs one step of the client over every connection, keeps its
// figures and prints each failure as cmtime does.
func (c *cmtime) step(s rdma.CMStep, a rdma.CMStepArgs) rdma.CMStepResult {
	if c.o.Timeout > 0 {
		a.Idle = c.o.Timeout
	} else {
		a.Idle = -1
	}
	res, err := c.run.Step(s, a)
	for i, sp := range res.Conns {
		if i < len(c.tm.conns) {
			c.tm.conns[i][s] = span{sp.Start, sp.End}
		}
	}
	c.tm.total[s] = span{res.Start, res.End}
	for _, f := range res.Failures {
		if f.Conn < len(c.failed) {
			c.failed[f.Conn] = true
		}
		if f.Err != nil {
			c.fail.noteCall(f.Err)
			if what := cmtimeCallFailure[s]; what != "" {
				c.out.perror(what, f.Err)
			}
			continue
		}
		c.fail.noteEvent(*f.Event)
		switch f.Event.Type {
		case rdma.CMEventAddrError, rdma.CMEventRouteError:
			c.out.printf("%s, error: %d\n", f.Event.Type, f.Event.Status)
		default:
			c.out.printf("event: %s, error: %d\n", f.Event.Type, f.Event.Status)
		}
	}
	switch {
	case err == rdma.ErrTimeout:
		c.timed = true
		c.fail.noteTimeout(c.o.Timeout, "the "+stepNames[s]+" events")
	case err != nil:
		c.out.perror("failure in rdma_get_cm_event in process_server_events", err)
	}
	return res
}

// What cmtime prints when a step's call fails (perror's prefix); create
// id prints nothing, and disconnect and destroy do not fail.
var cmtimeCallFailure = [rdma.CMSteps]string{
	rdma.CMStepBind:         "failure bind addr",
	rdma.CMStepResolveAddr:  "failure getting addr",
	rdma.CMStepResolveRoute: "failure resolving route",
	rdma.CMStepCreateQP:     "failure creating qp",
	rdma.CMStepConnect:      "failure rconnecting",
}

func (c *cmtime) allocNodes() int {
	n := max(c.o.Connections, 0)
	c.failed = make([]bool, n)
	c.tm.conns = make([][stepCount]span, n)
	c.out.printf("creating id\n")
	for _, f := range c.step(rdma.CMStepCreateID, rdma.CMStepArgs{}).Failures {
		return -int(errnoOf(f.Err))
	}
	return 0
}

func (c *cmtime) cleanup() {
	c.out.printf("destroying id\n")
	c.step(rdma.CMStepDestroy, rdma.CMStepArgs{})
}

func (c *cmtime) client() int {
	p, err := portOf(c.o.Port)
	var src, dst netip.Addr
	if err == nil && c.o.Bind != "" {
		src, err = lookup(c.o.CM, c.o.Bind)
	}
	if err == nil {
		dst, err = lookup(c.o.CM, c.o.Server)
	}
	if err != nil {
		c.fail.noteCall(err)
		c.out.printf("getaddrinfo error: %s\n", gaiText(err))
		return lookupStatus(err)
	}
	a := rdma.CMStepArgs{Src: src, Dst: netip.AddrPortFrom(dst, p), Retries: c.o.Retries,
		ResolveTimeout: time.Duration(c.o.TimeoutMs) * time.Millisecond, RetryCount: uint8(c.o.Retries)}
	if c.o.Bind != "" {
		c.out.printf("binding source address\n")
		c.step(rdma.CMStepBind, a)
	}
	steps := []struct {
		line string
		step rdma.CMStep
	}{
		{"resolving address", rdma.CMStepResolveAddr},
		{"resolving route", rdma.CMStepResolveRoute},
		{"creating qp", rdma.CMStepCreateQP},
		{"connecting", rdma.CMStepConnect},
		{"disconnecting", rdma.CMStepDisconnect},
	}
	for _, st := range steps {
		c.out.printf("%s\n", st.line)
		c.step(st.step, a)
		if c.timed {
			return 1
		}
	}
	return 0
}

// server accepts connections until killed (or, with --timeout, until none
// came for that long), as cmtime's server does.
func (c *cmtime) server() int {
	listen, err := c.ec.CreateID()
	if err != nil {
		c.fail.noteCall(err)
		c.out.perror("listen request failed", err)
		return -1
	}
	defer listen.Close()
	addr, err := passiveAddr(c.o.CM, c.o.Bind, c.o.Port)
	if err != nil {
		c.fail.noteCall(err)
		c.out.printf("getrdmaaddr error: %s\n", gaiText(err))
		return lookupStatus(err)
	}
	if err := listen.Bind(addr); err != nil {
		c.fail.noteCall(err)
		c.out.perror("bind address failed", err)
		return -1
	}
	if err := listen.Listen(0); err != nil {
		c.fail.noteCall(err)
		c.out.perror("failure trying to listen", err)
		return -1
	}
	qps := map[rdma.CMID]rdma.QP{}
	var verbs cmtimeVerbs
	defer verbs.close()
	wait := time.Duration(-1)
	if c.o.Timeout > 0 {
		wait = c.o.Timeout
	}
	for {
		ev, err := c.ec.GetEvent(wait)
		if err == rdma.ErrTimeout {
			c.out.errorf("rdmactl cm cmtime: no rdma_cm event for %v (--timeout): server ends\n", c.o.Timeout)
			break
		}
		if err != nil {
			c.out.perror("failure in rdma_get_cm_event in process_server_events", err)
			break
		}
		switch ev.Type {
		case rdma.CMEventConnectRequest:
			qp, cerr := verbs.createQP(ev.ID)
			if cerr != nil {
				c.out.perror("failure creating qp", cerr)
			} else if cerr = ev.ID.Accept(nil); cerr != nil {
				c.out.perror("failure accepting", cerr)
				qp.Close()
			}
			if cerr != nil {
				c.out.printf("failing connection request\n")
				if dg, ok := ev.ID.(rdma.DatagramID); ok {
					dg.Reject()
				}
				ev.ID.Close()
				continue
			}
			qps[ev.ID] = qp
		case rdma.CMEventDisconnected:
			ev.ID.Disconnect()
			if qp := qps[ev.ID]; qp != nil {
				qp.Close()
			}
			delete(qps, ev.ID)
			ev.ID.Close()
		}
	}
	for id, qp := range qps {
		qp.Close()
		id.Close()
	}
	return 0
}
