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
	o       *Options
	out     *output
	ec      rdma.EventChannel
	ids     []rdma.CMID
	byID    map[rdma.CMID]int
	failed  []bool
	retries []int
	tm      timings
	started [stepCount]int
	done    [stepCount]int
	src     netip.Addr
	dst     netip.AddrPort
	fail    failure
	timed   bool
	began   time.Time
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
	c := &cmtime{o: o, out: newOutput(o), byID: map[rdma.CMID]int{}, began: time.Now()}
	ec, err := o.CM.CreateEventChannel()
	if err != nil {
		c.fail.noteCall(err)
		if errnoOf(err) == syscall.ENODEV {
			c.out.errorf("No RDMA devices were detected\n")
		} else {
			c.out.perror("failed to create RDMA CM event channel", err)
		}
		return c.finish(1)
	}
	c.ec = ec
	defer ec.Close()
	if o.Server == "" {
		return c.finish(c.server())
	}
	ret := c.allocNodes()
	if ret == 0 {
		ret = c.client()
	}
	if !c.timed {
		c.cleanup()
	}
	return c.finish(ret)
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
			Connections: len(c.ids), Steps: rows, ConnPerSecond: c.tm.perSecond(),
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

func (c *cmtime) allocNodes() int {
	n := max(c.o.Connections, 0)
	c.ids = make([]rdma.CMID, n)
	c.failed = make([]bool, n)
	c.retries = make([]int, n)
	c.tm.conns = make([][stepCount]span, n)
	c.out.printf("creating id\n")
	c.tm.total[stepCreateID].start = time.Now()
	for i := range c.ids {
		c.tm.conns[i][stepCreateID].start = time.Now()
		id, err := c.ec.CreateID()
		if err != nil {
			c.fail.noteCall(err)
			for j := 0; j < i; j++ {
				c.ids[j].Close()
				c.ids[j] = nil
			}
			return -int(errnoOf(err))
		}
		c.ids[i] = id
		c.byID[id] = i
		c.tm.conns[i][stepCreateID].end = time.Now()
	}
	c.tm.total[stepCreateID].end = time.Now()
	return 0
}

func (c *cmtime) cleanup() {
	c.out.printf("destroying id\n")
	c.tm.total[stepDestroy].start = time.Now()
	for i, id := range c.ids {
		c.tm.conns[i][stepDestroy].start = time.Now()
		if id != nil {
			id.Close()
		}
		c.tm.conns[i][stepDestroy].end = time.Now()
	}
	c.tm.total[stepDestroy].end = time.Now()
}

func (c *cmtime) timeout() time.Duration {
	return time.Duration(c.o.TimeoutMs) * time.Millisecond
}

// wait handles events until step's started operations all completed.
func (c *cmtime) wait(step int) bool {
	for c.done[step] < c.started[step] {
		t := time.Duration(-1)
		if c.o.Timeout > 0 {
			t = c.o.Timeout
		}
		ev, err := c.ec.GetEvent(t)
		if err == rdma.ErrTimeout {
			c.timed = true
			c.fail.noteTimeout(c.o.Timeout, "the "+stepNames[step]+" events")
			return false
		}
		if err != nil {
			c.out.perror("failure in rdma_get_cm_event in process_server_events", err)
			return false
		}
		c.handle(ev)
	}
	return true
}

func (c *cmtime) end(i, step int) {
	c.tm.conns[i][step].end = time.Now()
	c.done[step]++
}

func (c *cmtime) handle(ev rdma.CMEvent) {
	i, ok := c.byID[ev.ID]
	if !ok {
		return
	}
	switch ev.Type {
	case rdma.CMEventAddrResolved:
		c.end(i, stepResolveAddr)
	case rdma.CMEventRouteResolved:
		c.end(i, stepResolveRoute)
	case rdma.CMEventEstablished:
		c.end(i, stepConnect)
	case rdma.CMEventAddrError:
		if c.retries[i] > 0 {
			c.retries[i]--
			if c.ids[i].ResolveAddr(c.src, c.dst, c.timeout()) == nil {
				return
			}
		}
		c.fail.noteEvent(ev)
		c.out.printf("RDMA_CM_EVENT_ADDR_ERROR, error: %d\n", ev.Status)
		c.end(i, stepResolveAddr)
		c.failed[i] = true
	case rdma.CMEventRouteError:
		if c.retries[i] > 0 {
			c.retries[i]--
			if c.ids[i].ResolveRoute(c.timeout()) == nil {
				return
			}
		}
		c.fail.noteEvent(ev)
		c.out.printf("RDMA_CM_EVENT_ROUTE_ERROR, error: %d\n", ev.Status)
		c.end(i, stepResolveRoute)
		c.failed[i] = true
	case rdma.CMEventConnectError, rdma.CMEventUnreachable, rdma.CMEventRejected:
		c.fail.noteEvent(ev)
		c.out.printf("event: %s, error: %d\n", ev.Type, ev.Status)
		c.end(i, stepConnect)
		c.failed[i] = true
	case rdma.CMEventDisconnected:
		c.end(i, stepDisconnect)
	}
}

// each runs op on every connection that has not failed, timing it as
// step, and counts those that started.
func (c *cmtime) each(step int, what string, op func(i int) error, async bool) {
	c.tm.total[step].start = time.Now()
	for i, id := range c.ids {
		if c.failed[i] || id == nil {
			continue
		}
		c.tm.conns[i][step].start = time.Now()
		if err := op(i); err != nil {
			c.fail.noteCall(err)
			c.out.perror(what, err)
			c.failed[i] = true
			continue
		}
		if async {
			c.started[step]++
		} else {
			c.tm.conns[i][step].end = time.Now()
		}
	}
	if async && !c.wait(step) {
		return
	}
	c.tm.total[step].end = time.Now()
}

func (c *cmtime) client() int {
	p, err := portOf(c.o.Port)
	var a netip.Addr
	if err == nil && c.o.Bind != "" {
		c.src, err = lookup(c.o.CM, c.o.Bind)
	}
	if err == nil {
		a, err = lookup(c.o.CM, c.o.Server)
	}
	if err != nil {
		c.fail.noteCall(err)
		c.out.printf("getaddrinfo error: %s\n", gaiText(err))
		return lookupStatus(err)
	}
	c.dst = netip.AddrPortFrom(a, p)
	if c.o.Bind != "" {
		c.out.printf("binding source address\n")
		c.each(stepBind, "failure bind addr", func(i int) error {
			return c.ids[i].Bind(netip.AddrPortFrom(c.src, 0))
		}, false)
	}
	c.out.printf("resolving address\n")
	c.each(stepResolveAddr, "failure getting addr", func(i int) error {
		c.retries[i] = c.o.Retries
		return c.ids[i].ResolveAddr(c.src, c.dst, c.timeout())
	}, true)
	if c.timed {
		return 1
	}
	c.out.printf("resolving route\n")
	c.each(stepResolveRoute, "failure resolving route", func(i int) error {
		c.retries[i] = c.o.Retries
		return c.ids[i].ResolveRoute(c.timeout())
	}, true)
	if c.timed {
		return 1
	}
	c.out.printf("creating qp\n")
	qps := make([]rdma.QP, len(c.ids))
	var verbs cmtimeVerbs
	defer func() {
		for _, qp := range qps {
			if qp != nil {
				qp.Close()
			}
		}
		verbs.close()
	}()
	c.each(stepCreateQP, "failure creating qp", func(i int) error {
		var err error
		qps[i], err = verbs.createQP(c.ids[i])
		return err
	}, false)
	c.out.printf("connecting\n")
	param := &rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: uint8(c.o.Retries)}
	c.each(stepConnect, "failure rconnecting", func(i int) error { return c.ids[i].Connect(param) }, true)
	if c.timed {
		return 1
	}
	c.out.printf("disconnecting\n")
	c.each(stepDisconnect, "", func(i int) error {
		c.ids[i].Disconnect()
		if qps[i] != nil {
			qps[i].Close()
			qps[i] = nil
		}
		return nil
	}, true)
	if c.timed {
		return 1
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
