package demo

import (
	"io"
	"net"
	"time"
)

// ServeConn runs the server side of the demo over conn, a TCP connection
// the caller accepted (rdmactl serve accepts them in a loop), and closes
// it. It prints nothing; the summary says how it went (OK: the
// client's SEND, READ and WRITE all completed). opts.RDMA is the verbs.
func ServeConn(opts Options, conn net.Conn) Summary {
	opts.Server = ""
	r := &runner{opts: opts, out: io.Discard, errOut: io.Discard, start: time.Now(), conn: conn}
	r.conclude(r.run())
	return r.sum
}
