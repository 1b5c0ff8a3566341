package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cm"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The rdma_cm test tools' clients serve answers: udaddy in the UDP port
// space; ucmatose and rdma_client on one TCP port space port, told apart
// by their connect requests (cm.ToolOf). rping's port (7174 in the TCP
// port space) and udaddy's (7174 in the UDP one) do not collide.
const (
	TestUdaddy     = "udaddy"
	TestUcmatose   = "ucmatose"
	TestRDMAClient = "rdma_client"

	// DefaultToolsPort is ucmatose's and rdma_client's port, DefaultUDPort
	// udaddy's.
	DefaultToolsPort = 7471
	DefaultUDPort    = 7174
)

// toolListeners are the rdma_cm tools' listeners; nil where its port is 0.
type toolListeners struct{ tcp, udp *cm.Listener }

func (cfg Config) listenTools() (toolListeners, error) {
	var ls toolListeners
	var err error
	if cfg.ToolsPort != 0 {
		if ls.tcp, err = cm.Listen(cfg.RDMA, cfg.Addr, cfg.ToolsPort, rdma.PortSpaceTCP); err != nil {
			return ls, fmt.Errorf("ucmatose/rdma_client listener on rdma_cm port %d: %w", cfg.ToolsPort, err)
		}
	}
	if cfg.UDPort != 0 {
		if ls.udp, err = cm.Listen(cfg.RDMA, cfg.Addr, cfg.UDPort, rdma.PortSpaceUDP); err != nil {
			ls.close()
			return toolListeners{}, fmt.Errorf("udaddy listener on rdma_cm UDP port %d: %w", cfg.UDPort, err)
		}
	}
	return ls, nil
}

func (ls toolListeners) close() {
	for _, l := range []*cm.Listener{ls.tcp, ls.udp} {
		if l != nil {
			l.Close()
		}
	}
}

// answerTools answers the clients of each listener until ctx ends, then
// closes the listeners, stops the sessions still running and waits for
// them.
func (cfg Config) answerTools(ctx context.Context, ls toolListeners) {
	var wg sync.WaitGroup
	for l, test := range map[*cm.Listener]string{ls.tcp: TestUcmatose, ls.udp: TestUdaddy} {
		if l != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cfg.answerCM(ctx, l, test)
			}()
		}
	}
	wg.Wait()
}

// listenPoll is how often a listener looks whether serve is stopping.
const listenPoll = 100 * time.Millisecond

// answerCM hands each connect request of l to its own goroutine, within
// the port's session bounds, and logs each client's session. test names
// the listener in the line of an error that ends it.
func (cfg Config) answerCM(ctx context.Context, l *cm.Listener, test string) {
	g := newGate(cfg.MaxSessions, cfg.MaxPerPeer)
	busy := map[string]*busyLog{}
	defer func() {
		for _, b := range busy {
			b.flush()
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer l.Close()
	for ctx.Err() == nil {
		req, err := l.Next(listenPoll)
		if err != nil {
			cfg.log(Entry{Time: time.Now(), Test: test, Error: "rdma_cm listener: " + err.Error()})
			return
		}
		if req == nil {
			continue
		}
		peer := req.Peer.Addr().Unmap().String()
		if err := g.enter(peer); err != nil {
			req.Refuse()
			if busy[req.Tool] == nil {
				busy[req.Tool] = newBusyLog(req.Tool, cfg.log)
			}
			busy[req.Tool].note(peer, err)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.leave(peer)
			start := time.Now()
			res := req.Answer(ctx, cfg.Timeout)
			e := Entry{Time: start, Peer: peer, Test: req.Tool, OK: res.OK, Seconds: time.Since(start).Seconds(),
				Error: res.Error, Hint: res.Hint}
			if a := res.Answered; a != nil {
				e.Messages = &Messages{Count: a.Messages, Bytes: a.Bytes}
			}
			cfg.log(e)
			cli.SessionEnded()
		}()
	}
}
