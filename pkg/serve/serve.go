// Package serve is `rdmactl serve`: one long-running responder that
// answers rping clients (rdma_cm, rping's server side), RC demo clients
// (TCP, the server side of RDMA_RC_example) and therefore `rdmactl smoke`,
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

	"github.com/rdmactl/rdmactl/pkg/demo"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Defaults: the ports rping and the RC example use.
const (
	DefaultCMPort  = ping.DefaultPort
	DefaultTCPPort = 19875
	DefaultTimeout = 30 * time.Second
)

// Tests a client can run against the responder.
const (
	TestPing = "ping"
	TestDemo = "demo"
)

// Config is what the responder answers on.
type Config struct {
	// Addr is the address to answer on; empty answers on every address.
	Addr string
	// CMPort is the rdma_cm port for rping clients; TCPPort the RC demo's.
	// 0 picks a free TCP port and uses the same number for rdma_cm (the
	// temporary responder of a loopback smoke run).
	CMPort, TCPPort int
	// Timeout bounds each step of a client session: an idle or vanished
	// client releases its QP after this long.
	Timeout time.Duration
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
	Time    time.Time `json:"time"`
	Peer    string    `json:"peer"`
	Test    string    `json:"test"`
	OK      bool      `json:"ok"`
	Seconds float64   `json:"duration_seconds"`
	Error   string    `json:"error,omitempty"`
	Hint    string    `json:"hint,omitempty"`
}

// Bound is where a started responder listens.
type Bound struct {
	Addr    string
	CMPort  int
	TCPPort int
}

// Run answers clients until ctx ends, then stops listening, ends the
// sessions still running and returns once their resources are released.
// ready is called once both listeners are up. An error means a listener
// could not start (or the rping listener died).
func Run(ctx context.Context, cfg Config, ready func(Bound)) error {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
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

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pingReady := make(chan struct{})
	pingErr := make(chan error, 1)
	go func() {
		// The largest buffer rping allows, so that a client's -S of any
		// size fits (the server reads what the client advertises).
		o := &ping.Options{CM: cfg.RDMA, Addr: cfg.Addr, Port: b.CMPort, Size: ping.MaxSize, Timeout: cfg.Timeout}
		pingErr <- ping.Serve(ctx, o, func() { close(pingReady) }, func(s ping.Session) {
			cfg.log(Entry{Time: time.Now().Add(-s.Duration), Peer: s.Peer.Addr().String(), Test: TestPing,
				OK: s.OK, Seconds: s.Duration.Seconds(), Error: s.Error, Hint: s.Hint})
		})
	}()
	select {
	case <-pingReady:
	case err := <-pingErr:
		ln.Close()
		if err == nil {
			err = errors.New("rping listener stopped")
		}
		return err
	}
	if ready != nil {
		ready(b)
	}

	demoDone := make(chan struct{})
	go func() {
		defer close(demoDone)
		cfg.acceptDemo(ctx, ln)
	}()
	var runErr error
	select {
	case <-ctx.Done():
		runErr = <-pingErr
	case runErr = <-pingErr:
	}
	cancel()
	<-demoDone
	return runErr
}

func (cfg Config) log(e Entry) {
	if cfg.Log != nil {
		cfg.Log(e)
	}
}

// acceptDemo serves RC demo clients until ctx ends; then it closes the
// connections still open, which ends their sessions, and waits for them.
func (cfg Config) acceptDemo(ctx context.Context, ln net.Listener) {
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
		mu.Lock()
		open[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			sum := cfg.demoSession(c)
			drop(c)
			e := Entry{Time: start, Peer: peerOf(c), Test: TestDemo, OK: sum.Result == 0,
				Seconds: time.Since(start).Seconds(), Error: sum.Error, Hint: sum.Hint}
			if ctx.Err() != nil && !e.OK {
				e.Error = "server shutting down: " + e.Error
			}
			cfg.log(e)
		}()
	}
	<-stopped
	wg.Wait()
}

// demoSession runs the RC example's server side on c with the device that
// carries the address the client reached, its GID chosen from that address.
func (cfg Config) demoSession(c net.Conn) demo.Summary {
	opts := demo.Options{RDMA: cfg.RDMA, IBPort: 1, GIDAuto: true, TCPPort: cfg.TCPPort, Timeout: cfg.Timeout}
	if cfg.Devices != nil {
		if ta, ok := c.LocalAddr().(*net.TCPAddr); ok {
			if ip, ok := netip.AddrFromSlice(ta.IP); ok {
				opts.Device, opts.IBPort = cfg.Devices(ip.Unmap())
			}
		}
	}
	return demo.ServeConn(opts, sessionConn{c})
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
