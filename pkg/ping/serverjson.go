package ping

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// ServerReport is the --json document of `ping -s`, printed when the
// server ends: every client it served and the verdict.
type ServerReport struct {
	Addr    string         `json:"addr"` // where it listened; 0.0.0.0 is every address
	CMPort  int            `json:"cm_port"`
	Clients []ServedClient `json:"clients"` // in the order they ended
	OK      bool           `json:"ok"`
	Error   *cli.ErrorBody `json:"error,omitempty"`
}

// ServedClient is one connection the server took.
type ServedClient struct {
	Peer      string         `json:"peer"`
	Completed int            `json:"completed"` // pings echoed back
	OK        bool           `json:"ok"`
	Error     *cli.ErrorBody `json:"error,omitempty"`
}

// servedClients collects the clients' outcomes for --json (only then: a
// -P server may run for months); -P serves them concurrently.
type servedClients struct {
	enabled bool
	mu      sync.Mutex
	list    []ServedClient
}

func (s *servedClients) add(c *conn, ret int) {
	if !s.enabled {
		return
	}
	sc := ServedClient{Peer: c.id.PeerAddr().Addr().WithZone("").String(), Completed: c.completed, OK: ret == 0}
	if ret != 0 {
		msg := c.failure.text()
		if c.failure.empty() {
			msg = "the connection failed"
		}
		sc.Error = &cli.ErrorBody{Message: msg}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, sc)
}

func (s *servedClients) snapshot() []ServedClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ServedClient{}, s.list...)
}

// writeServerReport prints the server's document: ok when the server
// ended without error and served every client in full. A -P server
// stopped by a signal has code 0; a client that failed there makes the
// run fail (exit 1), which writeServerReport reports as false.
func (r *runner) writeServerReport(code int, hint string) bool {
	rep := ServerReport{Addr: r.dst.WithZone("").String(), CMPort: r.o.Port, Clients: r.served.snapshot(), OK: code == 0}
	for _, c := range rep.Clients {
		rep.OK = rep.OK && c.OK
	}
	switch {
	case code != 0:
		rep.Error = &cli.ErrorBody{Message: r.failureText(), Hint: hint, Code: r.exitCode(code)}
	case !rep.OK:
		rep.Error = &cli.ErrorBody{Message: "a client's session failed (see clients)", Code: cli.ExitFailed}
	}
	_ = cli.WriteJSON(r.o.IO.Out, rep)
	return code != 0 || rep.OK
}

// flagOnInterrupt sets flag when the run's context ends (SIGINT or
// SIGTERM in rdmactl), until the returned function is called.
func (r *runner) flagOnInterrupt(flag *atomic.Bool) (release func()) {
	unregister := context.AfterFunc(r.ctx, func() { flag.Store(true) })
	return func() { unregister() }
}
