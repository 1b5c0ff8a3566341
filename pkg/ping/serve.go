package ping

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Session is what a long-running server saw of one rping client.
type Session struct {
	Peer     netip.AddrPort
	Duration time.Duration
	OK       bool
	Error    string // rping's first complaint, or rdmactl's timeout
	Hint     string
}

// Serve answers rping clients on o.Addr, port o.Port, as `rping -s -P`
// does (clients in a row and at once, each on its own goroutine) until
// ctx ends. ready, when set, is called once the id listens; done after
// each client, from that client's goroutine. When ctx ends Serve stops
// listening, ends the connections still open, and returns only after
// every QP and cm_id it made is destroyed. o.Timeout bounds each step of
// a connection, so a client that vanishes does not hold its QP forever.
// admit, when set, is asked before a connect request gets a QP: an error
// turns the client away (its request is dropped, which rejects it), and
// leave is called when an admitted session ends.
func Serve(ctx context.Context, o *Options, admit func(peer netip.Addr) (leave func(), err error), ready func(), done func(Session)) error {
	quiet := *o
	quiet.Mode, quiet.Persistent, quiet.Verbose, quiet.Debug, quiet.Stats, quiet.JSON = ModeServer, true, false, false, false, false
	quiet.IO = cli.Test(nil, io.Discard, io.Discard)
	r := &runner{ctx: ctx, o: &quiet, out: newStdout(io.Discard)}
	r.dst = netip.IPv4Unspecified()
	if o.Addr != "" {
		ip, err := o.CM.LookupHost(o.Addr)
		if err != nil {
			return fmt.Errorf("rping listener: %s: %w", o.Addr, err)
		}
		r.dst = ip
	}
	ec, err := o.CM.CreateEventChannel()
	if err != nil {
		return fmt.Errorf("rping listener: %w", err)
	}
	defer func() { _ = ec.Close() }()
	id, err := ec.CreateID()
	if err != nil {
		return fmt.Errorf("rping listener: %w", err)
	}
	defer id.Close()
	if r.listen(id) != 0 {
		return fmt.Errorf("rping listener on %s port %d: %w", r.dst, quiet.Port, r.failure.call)
	}
	if ready != nil {
		ready()
	}

	l := r.newListener(ec, id)
	stop := new(atomic.Bool)
	var wg sync.WaitGroup
	defer wg.Wait() // before the deferred closes of the listener
	defer stop.Store(true)
	for ctx.Err() == nil {
		child, ret := l.nextRequest(100 * time.Millisecond)
		if ret != 0 {
			return fmt.Errorf("rping listener: %s", l.failureText())
		}
		if child == nil {
			continue
		}
		leave := func() {}
		if admit != nil {
			var err error
			if leave, err = admit(child.PeerAddr().Addr()); err != nil {
				_ = child.Close()
				continue
			}
		}
		start := time.Now()
		var errBuf bytes.Buffer
		co := quiet
		co.IO = cli.Test(nil, io.Discard, &errBuf)
		cr := &runner{ctx: ctx, o: &co, out: r.out}
		c, err := cr.adopt(child)
		if err != nil {
			_ = child.Close()
			leave()
			if done != nil {
				done(Session{Peer: child.PeerAddr(), Error: err.Error(), Duration: time.Since(start)})
			}
			continue
		}
		c.interrupted = stop // waits poll it, so shutdown ends idle clients
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer leave()
			s := Session{Peer: child.PeerAddr()}
			ret := cr.serveOne(c)
			if stop.Load() && ret != 0 {
				c.failure.note(failure{call: errServerStopping})
			}
			c.close()
			_ = child.Close()
			_ = c.ec.Close()
			s.Duration, s.OK = time.Since(start), ret == 0
			if !s.OK {
				cr.failure = c.failure
				s.Error = firstLine(errBuf.String())
				if s.Error == "" || c.failure.timeout != nil || stop.Load() {
					s.Error = cr.failureText()
				}
				s.Hint = hintFor(c.failure, s.Peer.String(), s.Peer.Addr().String(), true)
			}
			if done != nil {
				done(s)
			}
			cli.SessionEnded()
		}()
	}
	return nil
}

// serveOne runs one accepted connection to its end and returns rping's
// value for it (0: the client pinged and disconnected).
func (r *runner) serveOne(c *conn) int {
	if ret := r.prepare(c); ret != 0 {
		return ret
	}
	if ret := r.accept(c); ret != 0 {
		return ret
	}
	ret := c.testServer()
	c.disconnect()
	return ret
}

// failureText of a listener: what ended it.
func (l *listener) failureText() string {
	r := runner{failure: l.failure}
	return r.failureText()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
