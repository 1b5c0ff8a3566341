// Package serve is `rdmactl serve`: one long-running responder that
// answers rping clients (rdma_cm, rping's server side), RC demo clients
// (TCP, the server side of RDMA_RC_example), perftest write_bw clients
// (ib_write_bw's server side) and ibv_rc_pingpong clients on the same
// port, the udaddy, ucmatose and rdma_client clients (pkg/cm's server
// sides) and therefore `rdmactl smoke`,
// logging one line per client. It reuses the ping and demo server flows
// in-process; what it adds is the accept loops, the log and a shutdown
// that leaves no QP or cm_id behind.
package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/demo"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Defaults: the ports rping and the RC example use.
const (
	DefaultCMPort  = ping.DefaultPort
	DefaultTCPPort = 19875
	// DefaultPerfPort is perftest's, so that `ib_write_bw HOST` works.
	DefaultPerfPort = perf.DefaultTCPPort
	DefaultTimeout  = 30 * time.Second
)

// Tests a client can run against the responder.
const (
	TestPing    = "ping"
	TestDemo    = "demo"
	TestWriteBW = "write_bw"
	// TestPingpongRC is ibv_rc_pingpong, answered on the perftest port.
	TestPingpongRC = "pingpong_rc"
)

// Config is what the responder answers on.
type Config struct {
	// Addr is the address to answer on; empty answers on every address.
	Addr string
	// CMPort is the rdma_cm port for rping clients; TCPPort the RC demo's;
	// PerfPort perftest's (write_bw and ibv_rc_pingpong clients). A
	// TCPPort of 0 picks a free TCP port and uses the same number for
	// rdma_cm (the temporary responder of a loopback smoke run); a
	// PerfPort of 0 picks its own.
	CMPort, TCPPort, PerfPort int
	// ToolsPort is the rdma_cm port (TCP port space) for ucmatose and
	// rdma_client clients, UDPort the one (UDP port space) for udaddy
	// clients; 0 answers none there.
	ToolsPort, UDPort int
	// Timeout bounds each step of a client session: an idle or vanished
	// client releases its QP after this long. It bounds a write_bw,
	// pingpong or RC demo session as a whole too.
	Timeout time.Duration
	// FirstByte bounds the wait for a TCP client's first byte (RC demo,
	// perftest, pingpong), which arrives at once from a real client.
	FirstByte time.Duration
	// MaxSessions bounds the sessions each port runs at once, MaxPerPeer
	// those of one peer address; a client beyond them is turned away with
	// a busy log line. Zero takes the defaults.
	MaxSessions, MaxPerPeer int
	// RDMA is the verbs and connection manager the sessions run on.
	RDMA rdma.Stack
	// Devices finds the RDMA device and port that carry a local address
	// (the demo opens it); nil uses the first device, port 1.
	Devices func(ip netip.Addr) (device string, port int)
	// Log receives one entry per client, from that client's goroutine.
	Log func(Entry)
}

// Entry is the log record of one client session.
type Entry struct {
	Time    time.Time
	Peer    string
	Test    string
	OK      bool
	Seconds float64
	Error   string
	Hint    string
	// BW is a write_bw session's result: the client's report.
	BW *BW
	// RoundTrips is what a pingpong session answered.
	RoundTrips *RoundTrips
	// Messages is what an udaddy or ucmatose session exchanged.
	Messages *Messages
}

// Messages counts the client's messages an udaddy or ucmatose session
// took, as many as went back; Bytes is the largest's size.
type Messages struct {
	Count int `json:"count"`
	Bytes int `json:"bytes"`
}

// RoundTrips counts the messages a pingpong session answered, each with
// one of its size; Bytes is the largest's.
type RoundTrips struct {
	Count int `json:"count"`
	Bytes int `json:"bytes"`
}

// BW is a bandwidth result as perftest reports it: MB/sec is MiB per
// second (2^20 bytes).
type BW struct {
	Bytes      uint64  `json:"bytes"`
	Iterations uint64  `json:"iterations"`
	AvgMBps    float64 `json:"bw_average_mb_per_sec"`
}

// Bound is where a started responder listens.
type Bound struct {
	Addr     string
	CMPort   int
	TCPPort  int
	PerfPort int
	// ToolsPort and UDPort are 0 when not answered.
	ToolsPort, UDPort int
}

// Run answers clients until ctx ends, then stops listening, ends the
// sessions still running and returns once their resources are released.
// ready is called once every listener is up. An error means a listener
// could not start (or the rping listener died).
func Run(ctx context.Context, cfg Config, ready func(Bound)) error {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.FirstByte <= 0 {
		cfg.FirstByte = DefaultFirstByte
	}
	cli.TuneResponderMemory()
	host := cfg.Addr
	if host == "" {
		host = "0.0.0.0"
	}
	// The RC example speaks IPv4 only (see pkg/demo), so the TCP side does.
	ln, err := net.Listen("tcp4", net.JoinHostPort(host, strconv.Itoa(cfg.TCPPort)))
	if err != nil {
		return fmt.Errorf("RC demo listener: %w", err)
	}
	b := Bound{Addr: host, CMPort: cfg.CMPort, TCPPort: ln.Addr().(*net.TCPAddr).Port}
	if b.CMPort == 0 {
		b.CMPort = b.TCPPort
	}
	perfLn, err := net.Listen("tcp4", net.JoinHostPort(host, strconv.Itoa(cfg.PerfPort)))
	if err != nil {
		ln.Close()
		return fmt.Errorf("perftest write_bw listener: %w", err)
	}
	b.PerfPort = perfLn.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pingReady := make(chan struct{})
	pingErr := make(chan error, 1)
	go func() {
		// The largest buffer rping allows, so that a client's -S of any
		// size fits (the server reads what the client advertises).
		o := &ping.Options{CM: cfg.RDMA, Addr: cfg.Addr, Port: b.CMPort, Size: ping.MaxSize, Timeout: cfg.Timeout}
		g, busy := newGate(cfg.MaxSessions, cfg.MaxPerPeer), newBusyLog(TestPing, cfg.log)
		defer busy.flush()
		admit := func(peer netip.Addr) (func(), error) {
			p := peer.Unmap().String()
			if err := g.enter(p); err != nil {
				busy.note(p, err)
				return nil, err
			}
			return func() { g.leave(p) }, nil
		}
		pingErr <- ping.Serve(ctx, o, admit, func() { close(pingReady) }, func(s ping.Session) {
			cfg.log(Entry{Time: time.Now().Add(-s.Duration), Peer: s.Peer.Addr().String(), Test: TestPing,
				OK: s.OK, Seconds: s.Duration.Seconds(), Error: s.Error, Hint: s.Hint})
		})
	}()
	select {
	case <-pingReady:
	case err := <-pingErr:
		ln.Close()
		perfLn.Close()
		if err == nil {
			err = errors.New("rping listener stopped")
		}
		return err
	}
	// After rping's: a test that waits for rping's port (7174) in the
	// kernel's cm_id table must not find udaddy's, in the UDP port space.
	tools, err := cfg.listenTools()
	if err != nil {
		cancel()
		<-pingErr
		ln.Close()
		perfLn.Close()
		return err
	}
	b.ToolsPort, b.UDPort = cfg.ToolsPort, cfg.UDPort
	if ready != nil {
		ready(b)
	}

	var accepting sync.WaitGroup
	accepting.Add(3)
	go func() {
		defer accepting.Done()
		cfg.answerTools(ctx, tools)
	}()
	go func() {
		defer accepting.Done()
		cfg.accept(ctx, ln, TestDemo, cfg.demoSession)
	}()
	go func() {
		defer accepting.Done()
		slot := make(chan struct{}, 1)
		cfg.accept(ctx, perfLn, TestWriteBW, func(c net.Conn) Entry { return cfg.perfPortSession(ctx, c, slot) })
	}()
	var runErr error
	select {
	case <-ctx.Done():
		runErr = <-pingErr
	case runErr = <-pingErr:
	}
	cancel()
	accepting.Wait()
	return runErr
}

func (cfg Config) log(e Entry) {
	if cfg.Log != nil {
		cfg.Log(e)
	}
}

// busyHint is the fix for a client turned away by the session bounds.
const busyHint = "retry later; if this load is expected, raise serve's --max-sessions or --max-per-peer"

// accept hands each client of ln to session, in its own goroutine, and
// logs what it returns with the client's address, start and duration
// (and test, unless the session named its own).
// A client beyond the port's bounds is closed at once with a busy line
// (busyLog).
// When ctx ends it closes the connections still open, which ends their
// sessions, and waits for them.
func (cfg Config) accept(ctx context.Context, ln net.Listener, test string, session func(net.Conn) Entry) {
	g, busy := newGate(cfg.MaxSessions, cfg.MaxPerPeer), newBusyLog(test, cfg.log)
	defer busy.flush()
	var (
		mu   sync.Mutex
		open = map[net.Conn]struct{}{}
		wg   sync.WaitGroup
		drop = func(c net.Conn) {
			mu.Lock()
			if _, ok := open[c]; ok {
				delete(open, c)
				_ = c.Close()
			}
			mu.Unlock()
		}
	)
	stopped := make(chan struct{})
	go func() {
		<-ctx.Done()
		_ = ln.Close()
		mu.Lock()
		for c := range open {
			_ = c.Close()
		}
		clear(open)
		mu.Unlock()
		close(stopped)
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(50 * time.Millisecond) // e.g. EMFILE: let sessions end
			continue
		}
		peer := peerOf(c)
		if err := g.enter(peer); err != nil {
			_ = c.Close()
			busy.note(peer, err)
			continue
		}
		mu.Lock()
		open[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.leave(peer)
			start := time.Now()
			e := session(c)
			drop(c)
			if e.Test == "" {
				e.Test = test
			}
			e.Time, e.Peer, e.Seconds = start, peer, time.Since(start).Seconds()
			if ctx.Err() != nil && !e.OK {
				e.Error = "server shutting down: " + e.Error
			}
			cfg.log(e)
			cli.SessionEnded()
		}()
	}
	<-stopped
	wg.Wait()
}

// demoSession runs the RC example's server side on c with the device that
// carries the address the client reached, its GID chosen from that address.
// A real client's whole session takes a few seconds at most: the step
// timeout bounds all of it.
func (cfg Config) demoSession(c net.Conn) Entry {
	opts := demo.Options{RDMA: cfg.RDMA, IBPort: 1, GIDAuto: true, TCPPort: cfg.TCPPort, Timeout: cfg.Timeout}
	opts.Device, opts.IBPort = cfg.deviceFor(c)
	sum := demo.ServeConn(opts, sessionConn{bound(c, cfg.Timeout)}, cfg.FirstByte)
	e := Entry{OK: sum.OK}
	if sum.Error != nil {
		e.Error, e.Hint = sum.Error.Message, sum.Error.Hint
	}
	return e
}

// deviceFor is the RDMA device and port that carry the address c reached
// ("" and 1, the first device, when unknown).
func (cfg Config) deviceFor(c net.Conn) (string, int) {
	if cfg.Devices != nil {
		if ta, ok := c.LocalAddr().(*net.TCPAddr); ok {
			if ip, ok := netip.AddrFromSlice(ta.IP); ok {
				return cfg.Devices(ip.Unmap())
			}
		}
	}
	return "", 1
}

// sessionConn leaves closing to the accept loop, which may already have
// closed it at shutdown: the session's own Close would then fail and read
// as a second error.
type sessionConn struct{ net.Conn }

func (sessionConn) Close() error { return nil }

func peerOf(c net.Conn) string {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap().String()
		}
	}
	return c.RemoteAddr().String()
}
