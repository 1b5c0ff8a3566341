package serve

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Defaults of the bounds on what one port takes at once. A smoke run holds
// one session per port; the per-peer bound leaves room for a host running
// several, the per-port one for a fleet's worth of hosts.
const (
	DefaultMaxSessions = 64
	DefaultMaxPerPeer  = 16
	DefaultFirstByte   = 5 * time.Second
)

// gate counts the sessions one port runs, in all and per peer address.
type gate struct {
	mu           sync.Mutex
	max, perPeer int
	open         int
	byPeer       map[string]int
}

func newGate(max, perPeer int) *gate {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	if perPeer <= 0 {
		perPeer = DefaultMaxPerPeer
	}
	return &gate{max: max, perPeer: perPeer, byPeer: map[string]int{}}
}

// enter admits a session of peer, or says why it is turned away.
func (g *gate) enter(peer string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.open >= g.max:
		return fmt.Errorf("busy: %d sessions already run on this port (--max-sessions)", g.open)
	case g.byPeer[peer] >= g.perPeer:
		return fmt.Errorf("busy: %d sessions of %s already run on this port (--max-per-peer)", g.byPeer[peer], peer)
	}
	g.open++
	g.byPeer[peer]++
	return nil
}

func (g *gate) leave(peer string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open--
	if g.byPeer[peer]--; g.byPeer[peer] <= 0 {
		delete(g.byPeer, peer)
	}
}

// boundedConn holds a whole session to one deadline: a deadline the
// session sets for a step never reaches past it, so a client that sends
// one step just inside each step's timeout still ends there.
type boundedConn struct {
	net.Conn
	end time.Time
}

func bound(c net.Conn, d time.Duration) *boundedConn {
	b := &boundedConn{Conn: c, end: time.Now().Add(d)}
	_ = c.SetDeadline(b.end)
	return b
}

func (b *boundedConn) clamp(t time.Time) time.Time {
	if t.IsZero() || t.After(b.end) {
		return b.end
	}
	return t
}

func (b *boundedConn) SetDeadline(t time.Time) error { return b.Conn.SetDeadline(b.clamp(t)) }
func (b *boundedConn) SetReadDeadline(t time.Time) error {
	return b.Conn.SetReadDeadline(b.clamp(t))
}
func (b *boundedConn) SetWriteDeadline(t time.Time) error {
	return b.Conn.SetWriteDeadline(b.clamp(t))
}
