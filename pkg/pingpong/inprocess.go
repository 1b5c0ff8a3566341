package pingpong

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
)

// Answer runs the server side of one test on conn, a client's connection
// that another listener accepted (rdmactl serve answers on perftest's
// port), from its exchange on: Run's server flow, printing nothing. With
// GIDAuto the GID is the one of the address the client reached. The
// tools' exchange carries no -n or -s: the client must run with o's.
// The document says how it went, as --json would. conn is closed after
// the exchange, as the tool closes its socket.
func Answer(ctx context.Context, o *Options, conn net.Conn) Document {
	return quiet(ctx, o, conn)
}

// Probe runs the client side of one test, printing nothing (rdmactl
// smoke's check): Run's client flow, its outcome as --json's document.
func Probe(ctx context.Context, o *Options) Document {
	return quiet(ctx, o, nil)
}

func quiet(ctx context.Context, o *Options, conn net.Conn) Document {
	r := &run{o: o, out: io.Discard, errOut: io.Discard, conn: conn, rawWaits: pollwait.AvailableCPUs() == 1}
	err := r.run(ctx)
	r.close()
	var te *toolError
	if errors.As(err, &te) {
		// The tool's own lines, which Run prints on stderr.
		err = cli.Failf("%s", strings.Join(te.lines, ": "))
	}
	return r.document(err)
}
