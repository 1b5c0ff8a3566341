package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Run performs the demo over opts.RDMA, printing as the original does on
// opts.IO's stdout and stderr (or only a JSON summary on stdout with
// opts.JSON). It returns nil on "test result is 0", a silent exit-1 error
// on "test result is 1", and a one-line error when it refuses to start.
// ctx ending stops the wait for the peer's TCP connection.
func Run(ctx context.Context, opts *Options) error {
	if err := preflight(*opts); err != nil {
		return err
	}
	stdout, stderr := opts.IO.Out, opts.IO.ErrOut
	r := &runner{ctx: ctx, opts: *opts, out: stdout, errOut: stderr, start: time.Now()}
	if opts.JSON {
		r.out = io.Discard
	}
	rc, rose := r.runCounted()
	if l := counters.Line(rose, rc == 0); l != "" {
		fmt.Fprintf(stderr, "note: %s\n", l)
	}
	if r.advice != "" {
		fmt.Fprintf(stderr, "hint: %s\n", r.advice)
	}
	fmt.Fprintf(r.out, "\ntest result is %d\n", rc)
	if opts.JSON {
		if err := r.writeSummary(stdout, rc); err != nil {
			return err
		}
	}
	if rc != 0 {
		return cli.SilentExit(cli.ExitFailed)
	}
	return nil
}

// Probe runs the client side as a check of a peer does: nothing printed,
// the summary returned (its Error says why a run failed, a refusal
// before any connection included), and the error of the TCP connection
// to the server when there was none.
func Probe(opts Options) (Summary, error) {
	opts.JSON = true
	if err := preflight(opts); err != nil {
		return Summary{Role: "client", Server: opts.Server, Device: opts.Device, Error: cli.ErrorOf(err)}, nil
	}
	r := &runner{ctx: context.Background(), opts: opts, out: io.Discard, errOut: io.Discard, start: time.Now()}
	rc, _ := r.runCounted()
	r.conclude(rc)
	return r.sum, r.dialErr
}

// runCounted runs the demo between two reads of the port counters, which
// the summary's port_counters and the caller's note report.
func (r *runner) runCounted() (int, []counters.Rise) {
	watch := counters.Begin(r.opts.Counters)
	rc := r.run()
	rose := watch.End()
	r.sum.PortCounters = counters.Summarize(rose)
	return rc, rose
}

// runner is one run of the demo, either role. The steps both roles share
// are in connect.go, the role-specific ones in server.go and client.go.
type runner struct {
	ctx         context.Context
	opts        Options
	out, errOut io.Writer
	start       time.Time

	conn    net.Conn
	dev     rdma.Device
	res     resources
	port    rdma.PortAttr
	gid     rdma.GID
	remote  Record
	pending *byte   // a sync byte already read from the peer
	early   *Record // the client's record, read before any resource
	wc      rdma.WC // the last completion polled
	sum     Summary
	failure string // the first failure line, the summary's error
	dialErr error  // why the client could not reach the server's TCP port
	advice  string // rdmactl's one hint
}

func (r *runner) printf(format string, args ...any) { fmt.Fprintf(r.out, format, args...) }

// fail prints one of the original's stderr lines; the first is the
// summary's error.
func (r *runner) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.failure == "" {
		r.failure = msg
	}
	fmt.Fprintln(r.errOut, msg)
}

// hint keeps rdmactl's one advice line; Run prints it on stderr after the
// original's failure lines, which stay together and unchanged.
func (r *runner) hint(msg string) {
	if r.advice == "" {
		r.advice = msg
	}
}

func (r *runner) client() bool { return r.opts.client() }

func (r *runner) run() int {
	r.sum.Role, r.sum.Server = "server", r.opts.Server
	if r.client() {
		r.sum.Role = "client"
	}
	r.sum.IBPort, r.sum.TCPPort, r.sum.GIDAuto = r.opts.IBPort, r.opts.TCPPort, r.opts.GIDAuto
	r.printConfig()
	rc := 1
	switch {
	case !r.createResources():
		r.fail("failed to create resources")
	case !r.connectQP():
		r.fail("failed to connect QPs")
	case r.transfer():
		rc = 0
	}
	if err := r.destroy(); err != nil {
		r.fail("failed to destroy resources")
		rc = 1
	}
	r.sum.Device = r.opts.Device
	if r.opts.GRH {
		idx := r.opts.GIDIndex
		r.sum.GIDIndex = &idx
	}
	return rc
}

// transfer is the original's main after connect_qp, in the role's flow.
func (r *runner) transfer() bool {
	if r.client() {
		return r.clientTransfer()
	}
	return r.serverTransfer()
}

// destroy releases in the original's order: QP and memory, device, socket.
func (r *runner) destroy() error {
	var errs []error
	errs = append(errs, r.res.close())
	if r.dev != nil {
		errs = append(errs, r.dev.Close())
	}
	if r.conn != nil {
		errs = append(errs, r.conn.Close())
	}
	return errors.Join(errs...)
}

// putCString stores s and its terminating NUL at the start of buf, as
// strcpy does.
func putCString(buf []byte, s string) {
	copy(buf, s)
	buf[len(s)] = 0
}

// cString is what printf("%s") shows of buf.
func cString(buf []byte) string { return string(rdma.CString(buf)) }
