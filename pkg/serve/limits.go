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

// busyLog writes a port's busy lines, at most one a second per peer: a
// flood of connections must not become a flood of log lines. A line
// counts the clients turned away since the previous one.
type busyLog struct {
	mu   sync.Mutex
	test string
	log  func(Entry)
	last map[string]time.Time
	held map[string]int // turned away and not yet logged
}

func newBusyLog(test string, log func(Entry)) *busyLog {
	return &busyLog{test: test, log: log, last: map[string]time.Time{}, held: map[string]int{}}
}

// note records that peer was turned away for why.
func (b *busyLog) note(peer string, why error) {
	now := time.Now()
	b.mu.Lock()
	n := b.held[peer] + 1
	if now.Sub(b.last[peer]) < time.Second {
		b.held[peer] = n
		b.mu.Unlock()
		return
	}
	if len(b.last) >= 4096 { // many peers: forget the quiet ones
		for p, t := range b.last {
			if now.Sub(t) >= time.Second && b.held[p] == 0 {
				delete(b.last, p)
			}
		}
	}
	b.last[peer] = now
	delete(b.held, peer)
	b.mu.Unlock()
	b.write(now, peer, why.Error(), n)
}

// flush logs the clients turned away since each peer's last line.
func (b *busyLog) flush() {
	b.mu.Lock()
	held := b.held
	b.held = map[string]int{}
	b.mu.Unlock()
	for peer, n := range held {
		b.write(time.Now(), peer, "busy", n)
	}
}

func (b *busyLog) write(at time.Time, peer, msg string, n int) {
	if n > 1 {
		msg += fmt.Sprintf(" (%d clients of %s turned away since the last line)", n, peer)
	}
	b.log(Entry{Time: at, Peer: peer, Test: b.test, Error: msg, Hint: busyHint})
}
