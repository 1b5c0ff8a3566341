package perf

import (
	"context"
	"io"
	"net"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// ServeConn runs the server side of o.Test on conn, a client's
// out-of-band connection that a long-running responder (rdmactl serve)
// has already accepted; it prints nothing and returns the result (for
// write_bw and read_bw, the client's report). The caller closes conn.
func ServeConn(o Options, v rdma.Verbs, conn net.Conn) (*Result, error) {
	o.Server, o.JSON, o.Verbs = "", true, v
	return execute(context.Background(), o, conn, io.Discard, io.Discard)
}

// Measure runs the client side of o.Test against o.Server and returns the
// result instead of printing it (rdmactl smoke --bw).
func Measure(o Options, v rdma.Verbs) (*Result, error) {
	o.JSON, o.Verbs = true, v
	return execute(context.Background(), o, nil, io.Discard, io.Discard)
}
