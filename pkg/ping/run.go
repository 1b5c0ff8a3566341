// Package ping is rping (rdma-core's librdmacm/examples/rping) in Go: the
// same protocol on the wire, the same output byte for byte and the same
// exit codes, plus round-trip statistics, JSON, timeouts and hints.
//
// The protocol, per ping: the client advertises its source buffer (a
// 16-byte address/rkey/size message), the server RDMA-reads it and sends a
// go-ahead, the client advertises its sink, the server RDMA-writes the
// data back and sends another go-ahead.
package ping

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

const (
	exitUsage     = int(syscall.EINVAL) // rping's exit code for a bad option value
	listenBacklog = 3                   // rping's
)

// Run pings as o says. Its error carries rping's exit code; rping's own
// messages are already printed, so the error is silent unless rdmactl
// adds its own (timeouts). Where o.EndsOnInterrupt, the end of ctx stops
// the pings as SIGINT stops ping(8)'s.
func Run(ctx context.Context, o *Options) error {
	r := &runner{ctx: ctx, o: o}
	r.served.enabled = o.JSON && o.Mode == ModeServer
	stdoutW := o.IO.Out
	if o.JSON {
		stdoutW = o.IO.ErrOut // stdout carries the JSON document alone
	}
	r.out = newStdout(stdoutW)
	defer r.out.Flush()
	if o.Mode == ModeClient && (o.Stats || o.JSON || o.probe != nil) {
		r.stats = newStats(o.Count)
		r.counters = counters.Begin(o.Counters)
	}
	o.trace = pollwait.TraceFromEnv(fmt.Sprintf("rdmactl ping server=%v cpus=%d wait=%s size=%d",
		o.Mode == ModeServer, pollwait.AvailableCPUs(), o.Wait, o.Size))
	defer func() { _ = o.trace.Close() }()
	pollwait.ReserveSpareP()
	if o.Mode == ModeServer {
		cli.TuneResponderMemory()
	}

	code := r.run()
	return r.finish(code)
}

type runner struct {
	ctx  context.Context // its end interrupts the runs that catch SIGINT
	o    *Options
	out  *stdout
	peer string // "addr port" for hints

	dst, src netip.Addr
	failure  failure
	fatal    atomic.Int32 // exit code a CM error event forces (rping's exit(-1))
	stats    *stats
	counters *counters.Watch // with stats: the port counters around the run
	served   servedClients   // the server's clients, for its JSON document

	// The client's outcome, for the verdict of rdmactl's own modes.
	completed, mismatch int
	interrupted         bool
	peerLeft            bool // the server disconnected first
	connected           bool // the client got as far as pinging
}

func (r *runner) errorf(format string, args ...any) { fmt.Fprintf(r.o.IO.ErrOut, format, args...) }

// run returns rping's main() return value.
func (r *runner) run() int {
	o := r.o
	if o.Size < MinSize || o.Size > MaxSize {
		r.errorf("Invalid size %d (valid range is %d to %d)\n", o.Size, MinSize, MaxSize+1)
		return exitUsage
	}
	if o.Count < 0 {
		r.errorf("Invalid count %d\n", o.Count)
		return exitUsage
	}
	r.dst = netip.IPv4Unspecified()
	if o.Mode == ModeClient && o.Addr == "" {
		// rping goes on (and fails at route resolution, or at getaddrinfo
		// for -a ''); the hint is about -a, not the device it then blames.
		r.failure.note(failure{noAddress: map[bool]string{false: "missing", true: "empty"}[o.AddrGiven]})
	}
	for _, a := range []struct {
		text  string
		given bool
		into  *netip.Addr
	}{{o.Addr, o.AddrGiven, &r.dst}, {o.Source, false, &r.src}} {
		if a.text == "" && !a.given {
			continue
		}
		ip, err := o.CM.LookupHost(a.text)
		if err != nil {
			var le *rdma.LookupError
			r.failure.note(failure{call: err})
			if errors.As(err, &le) {
				fmt.Fprintf(r.out, "getaddrinfo failed (%s) - invalid hostname or IP address\n", le.Msg)
				return le.Code
			}
			return -1
		}
		*a.into = ip
	}
	r.peer = fmt.Sprintf("%s port %d", r.dst.WithZone(""), uint16(o.Port))

	ec, err := o.CM.CreateEventChannel()
	if err != nil {
		r.failure.note(failure{call: err})
		if errors.Is(err, syscall.ENODEV) {
			r.errorf("No RDMA devices were detected\n")
			return rdma.ErrnoOf(err)
		}
		// rping exits with EINVAL here whatever the errno (seen in the lab
		// with /dev/infiniband/rdma_cm missing: ENOENT, exit 22).
		r.errorf("failed to create RDMA CM event channel: %s\n", rdma.Strerror(syscall.Errno(rdma.ErrnoOf(err))))
		return int(syscall.EINVAL)
	}
	defer func() { _ = ec.Close() }()
	id, err := ec.CreateID()
	if err != nil {
		r.errorf("%v\n", err)
		return -1
	}
	defer id.Close()
	r.debugf("created cm_id\n")

	switch {
	case o.Mode == ModeClient:
		return r.client(ec, id)
	case o.Persistent:
		return r.persistentServer(ec, id)
	default:
		return r.server(ec, id)
	}
}

func (r *runner) debugf(format string, args ...any) {
	if r.o.Debug {
		fmt.Fprintf(r.out, format, args...)
	}
}

// keep records a finished connection's outcome in the run's.
func (r *runner) keep(c *conn) {
	r.failure.note(c.failure)
	if !c.server {
		r.completed, r.mismatch = c.completed, c.mismatch
		r.interrupted = c.interrupted != nil && c.interrupted.Load()
		r.peerLeft = c.peerLeft
		r.connected = c.pinging
	}
	if c.exitCode != 0 {
		r.fatal.CompareAndSwap(0, int32(c.exitCode))
	}
}

// catchInterrupt makes the end of the run's context (SIGINT, SIGTERM)
// end the pings cleanly so that the statistics get printed; without
// --stats/--json the run does not look at it.
func (r *runner) catchInterrupt(c *conn) func() {
	if r.stats == nil {
		return func() {}
	}
	c.interrupted = new(atomic.Bool)
	return r.flagOnInterrupt(c.interrupted)
}

// prepare creates the connection's QP and buffers and posts the first
// receive, reporting failures in rping's words; both sides do it before
// connecting.
func (r *runner) prepare(c *conn) int {
	if ret := c.setupQP(); ret != 0 {
		r.errorf("setup_qp failed: %d\n", ret)
		return ret
	}
	if ret := c.setupBuffers(); ret != 0 {
		r.errorf("rping_setup_buffers failed: %d\n", ret)
		return ret
	}
	if err := c.postRecv(); err != nil {
		r.errorf("ibv_post_recv failed: %d\n", rdma.ErrnoOf(err))
		return rdma.ErrnoOf(err)
	}
	return 0
}
