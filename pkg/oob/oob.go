// Package oob is the out-of-band TCP connection over which the RC example,
// perftest and the ibv_*_pingpong tools swap what their QPs need: their C
// servers accept one client and stop listening, their clients dial once.
// Both are bounded here, in time and by a context; what travels over the
// connection is each tool's own protocol.
package oob

import (
	"context"
	"errors"
	"net"
	"os"
	"time"
)

// AcceptOne listens on addr, waits for one client and stops listening.
// wait bounds the wait (≤ 0: no bound); when ctx ends first, the error
// is ctx's.
func AcceptOne(ctx context.Context, network, addr string, wait time.Duration) (net.Conn, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	if tl, ok := ln.(*net.TCPListener); ok && wait > 0 {
		if err := tl.SetDeadline(time.Now().Add(wait)); err != nil {
			return nil, err
		}
	}
	conn, err := ln.Accept()
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return conn, err
}

// Dial connects to addr within wait (≤ 0: the system's own bound); when
// ctx ends first, the error is ctx's.
func Dial(ctx context.Context, network, addr string, wait time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: max(wait, 0)}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return conn, err
}

// IsTimeout tells whether err is a wait that ran out (a deadline or a
// dial's timeout).
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}
