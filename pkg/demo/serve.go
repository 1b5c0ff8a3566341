package demo

import (
	"io"
	"net"
	"time"
)

// ServeConn runs the server side of the demo over conn, a TCP connection
// the caller accepted (rdmactl serve accepts them in a loop), and closes
// it. It prints nothing; the summary says how it went (Result 0: the
// client's SEND, READ and WRITE all completed). opts.RDMA is the verbs.
func ServeConn(opts Options, conn net.Conn) Summary {
	opts.Server = ""
	r := &runner{opts: opts, out: io.Discard, errOut: io.Discard, start: time.Now(), conn: conn}
	r.sum.Result = r.run()
	r.sum.ElapsedMS = float64(time.Since(r.start).Microseconds()) / 1000
	return r.sum
}
