package rdmatest

import (
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

var _ rdma.CMTimer = (*Fabric)(nil)

// cmTiming is cmtime's client over the fabric's CM: a goroutine takes
// the events as they come, as cgoverbs's thread does.
type cmTiming struct {
	ec      rdma.EventChannel
	mu      sync.Mutex
	changed *sync.Cond
	conns   []timedConn
	verbs   struct {
		pd         rdma.PD
		send, recv rdma.CQ
	}
	// the step under way: its arguments, what it started, what came
	step          rdma.CMStep
	args          rdma.CMStepArgs
	started, done int
	failures      []rdma.CMFailure
	readErr       error
	stop          bool
	reader        chan struct{}
}

type timedConn struct {
	id      rdma.CMID
	qp      rdma.QP
	failed  bool
	retries int
	// the peer ended the connection before our disconnect
	disconnected bool
	span         rdma.CMSpan
}

// OpenCMTiming makes the channel, n connection slots and the reader.
func (f *Fabric) OpenCMTiming(n int) (rdma.CMTiming, error) {
	ec, err := f.CreateEventChannel()
	if err != nil {
		return nil, err
	}
	t := &cmTiming{ec: ec, conns: make([]timedConn, n), reader: make(chan struct{})}
	t.changed = sync.NewCond(&t.mu)
	go t.read()
	return t, nil
}

func (t *cmTiming) read() {
	defer close(t.reader)
	for {
		t.mu.Lock()
		stop := t.stop
		t.mu.Unlock()
		if stop {
			return
		}
		ev, err := t.ec.GetEvent(10 * time.Millisecond)
		if err == rdma.ErrTimeout {
			continue
		}
		t.mu.Lock()
		if err != nil {
			t.readErr = err
			t.changed.Broadcast()
			t.mu.Unlock()
			return
		}
		t.handle(ev)
		t.mu.Unlock()
	}
}

// handle is cmtime's cma_handler; t.mu held.
func (t *cmTiming) handle(ev rdma.CMEvent) {
	i := -1
	for k := range t.conns {
		if t.conns[k].id == ev.ID {
			i = k
		}
	}
	if i < 0 {
		return
	}
	c := &t.conns[i]
	fail := func(step rdma.CMStep) {
		t.failures = append(t.failures, rdma.CMFailure{Conn: i, Event: &rdma.CMEvent{Type: ev.Type, Status: ev.Status}})
		t.end(c, step)
		c.failed = true
	}
	switch ev.Type {
	case rdma.CMEventAddrResolved:
		t.end(c, rdma.CMStepResolveAddr)
	case rdma.CMEventRouteResolved:
		t.end(c, rdma.CMStepResolveRoute)
	case rdma.CMEventEstablished:
		t.end(c, rdma.CMStepConnect)
	case rdma.CMEventAddrError:
		if c.retries > 0 {
			c.retries--
			if c.id.ResolveAddr(t.args.Src, t.args.Dst, t.args.ResolveTimeout) == nil {
				return
			}
		}
		fail(rdma.CMStepResolveAddr)
	case rdma.CMEventRouteError:
		if c.retries > 0 {
			c.retries--
			if c.id.ResolveRoute(t.args.ResolveTimeout) == nil {
				return
			}
		}
		fail(rdma.CMStepResolveRoute)
	case rdma.CMEventConnectError, rdma.CMEventUnreachable, rdma.CMEventRejected:
		fail(rdma.CMStepConnect)
	case rdma.CMEventDisconnected:
		// the peer's, before ours: our Disconnect will raise none
		if !t.end(c, rdma.CMStepDisconnect) {
			c.disconnected = true
		}
	}
}

// end stamps the end of c's operation of the step under way, once, and
// says whether it did.
func (t *cmTiming) end(c *timedConn, step rdma.CMStep) bool {
	if step != t.step || c.span.Start.IsZero() || !c.span.End.IsZero() {
		return false
	}
	c.span.End = time.Now()
	t.done++
	t.changed.Broadcast()
	return true
}

func (t *cmTiming) Step(s rdma.CMStep, a rdma.CMStepArgs) (rdma.CMStepResult, error) {
	async := s == rdma.CMStepResolveAddr || s == rdma.CMStepResolveRoute || s == rdma.CMStepConnect || s == rdma.CMStepDisconnect
	t.mu.Lock()
	t.step, t.args, t.started, t.done, t.failures = s, a, 0, 0, nil
	for i := range t.conns {
		t.conns[i].span = rdma.CMSpan{}
	}
	t.mu.Unlock()
	res := rdma.CMStepResult{Start: time.Now()}
	for i := range t.conns {
		c := &t.conns[i]
		if s != rdma.CMStepCreateID && s != rdma.CMStepDestroy && (c.failed || c.id == nil) {
			continue
		}
		t.mu.Lock()
		c.span.Start = time.Now()
		awaits := async && !(s == rdma.CMStepDisconnect && c.disconnected)
		if awaits {
			t.started++
		}
		t.mu.Unlock()
		err := t.op(s, c)
		if err == nil && awaits {
			continue
		}
		t.mu.Lock()
		if err == nil {
			c.span.End = time.Now()
		} else {
			t.failures = append(t.failures, rdma.CMFailure{Conn: i, Err: err})
			c.failed = true
			if awaits {
				t.started--
			}
		}
		t.mu.Unlock()
		if err != nil && s == rdma.CMStepCreateID {
			for j := 0; j < i; j++ {
				t.conns[j].id.Close()
				t.conns[j].id = nil
			}
			return t.result(res), nil
		}
	}
	var err error
	if async {
		err = t.wait(a.Idle)
	}
	if err == nil {
		res.End = time.Now()
	}
	return t.result(res), err
}

func (t *cmTiming) result(res rdma.CMStepResult) rdma.CMStepResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.conns {
		res.Conns = append(res.Conns, c.span)
	}
	res.Failures = append([]rdma.CMFailure(nil), t.failures...)
	return res
}

// wait waits until the step's operations all ended, at most idle
// between two.
func (t *cmTiming) wait(idle time.Duration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.done < t.started && t.readErr == nil {
		seen := t.done
		var timer *time.Timer
		expired := false
		if idle >= 0 {
			timer = time.AfterFunc(idle, func() {
				t.mu.Lock()
				expired = true
				t.changed.Broadcast()
				t.mu.Unlock()
			})
		}
		for t.done == seen && t.readErr == nil && !expired {
			t.changed.Wait()
		}
		if timer != nil {
			timer.Stop()
		}
		if expired && t.done == seen {
			return rdma.ErrTimeout
		}
	}
	return t.readErr
}

func (t *cmTiming) op(s rdma.CMStep, c *timedConn) error {
	a := t.args
	switch s {
	case rdma.CMStepCreateID:
		id, err := t.ec.CreateID()
		c.id = id
		return err
	case rdma.CMStepBind:
		return c.id.Bind(netip.AddrPortFrom(a.Src, 0))
	case rdma.CMStepResolveAddr:
		c.retries = a.Retries
		return c.id.ResolveAddr(a.Src, a.Dst, a.ResolveTimeout)
	case rdma.CMStepResolveRoute:
		c.retries = a.Retries
		return c.id.ResolveRoute(a.ResolveTimeout)
	case rdma.CMStepCreateQP:
		return t.createQP(c)
	case rdma.CMStepConnect:
		return c.id.Connect(&rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: a.RetryCount})
	case rdma.CMStepDisconnect:
		c.id.Disconnect()
		if c.qp != nil {
			c.qp.Close()
			c.qp = nil
		}
		return nil
	case rdma.CMStepDestroy:
		if c.qp != nil {
			c.qp.Close()
			c.qp = nil
		}
		if c.id != nil {
			c.id.Close()
			c.id = nil
		}
		return nil
	}
	return rdma.Errorf("cmtime step", syscall.EINVAL)
}

// createQP makes c's RC QP on the PD and CQs every QP shares, made from
// the first id's device, as cmtime's QPs share its first QP's.
func (t *cmTiming) createQP(c *timedConn) error {
	dg, ok := c.id.(rdma.DatagramID)
	ctx := c.id.Context()
	if !ok || ctx == nil {
		return rdma.Errorf("rdma_create_qp", syscall.EINVAL)
	}
	if t.verbs.pd == nil {
		pd, err := ctx.AllocPD()
		if err != nil {
			return err
		}
		t.verbs.pd = pd
	}
	for _, cq := range []*rdma.CQ{&t.verbs.send, &t.verbs.recv} {
		if *cq == nil {
			made, err := ctx.CreateCQ(1, nil)
			if err != nil {
				return err
			}
			*cq = made
		}
	}
	qp, err := dg.CreateTypedQP(t.verbs.pd, t.verbs.send, t.verbs.recv,
		rdma.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}, rdma.QPTypeRC, false)
	c.qp = qp
	return err
}

// Close stops the reader and destroys what is left.
func (t *cmTiming) Close() error {
	t.mu.Lock()
	t.stop = true
	t.mu.Unlock()
	<-t.reader
	for i := range t.conns {
		t.op(rdma.CMStepDestroy, &t.conns[i])
	}
	for _, c := range []rdma.CQ{t.verbs.recv, t.verbs.send} {
		if c != nil {
			c.Close()
		}
	}
	if t.verbs.pd != nil {
		t.verbs.pd.Close()
	}
	return t.ec.Close()
}
