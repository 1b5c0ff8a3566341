package perf

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Latency tests with -D: perftest runs them for the duration and reports
// only an average. Its alarm walks a state machine from a start point
// (send_lat: the first message received; the others: the loop's start):
// a warm-up margin of D/4 whole seconds, the sample window, the same
// margin again, the end. Messages are counted only in the window.

// durState is where a duration run stands.
type durState int

const (
	durWarmUp durState = iota
	durSample
	durCoolDown
	durEnd
)

// durClock is one duration run's state machine, driven by the loop
// looking at the time between messages.
type durClock struct {
	margin, total time.Duration
	start         time.Time // zero until started
	state         durState
	iters         uint64
	from, to      time.Time // the sample window as observed
}

func newDurClock(d, margin time.Duration) *durClock {
	return &durClock{margin: margin, total: d}
}

func (c *durClock) begin(now time.Time) {
	if c.start.IsZero() {
		c.start = now
		c.tick(now)
	}
}

// tick advances the state to now's.
func (c *durClock) tick(now time.Time) durState {
	if c.start.IsZero() {
		return c.state
	}
	e := now.Sub(c.start)
	if c.state == durWarmUp && e >= c.margin {
		c.state, c.from = durSample, now
	}
	if c.state == durSample && e >= c.total-c.margin {
		c.state, c.to = durCoolDown, now
	}
	if c.state == durCoolDown && e >= c.total {
		c.state = durEnd
	}
	return c.state
}

// count adds one message if the window is open.
func (c *durClock) count(now time.Time) {
	if c.tick(now) == durSample {
		c.iters++
	}
}

// left is how long until the end, or limit before the run started.
func (c *durClock) left(now time.Time, limit time.Duration) time.Duration {
	if c.start.IsZero() {
		return limit
	}
	return min(limit, max(c.start.Add(c.total).Sub(now), 0))
}

// untilNext is how long from now until the state changes next; before
// the run started, notYet.
func (c *durClock) untilNext(now time.Time, notYet time.Duration) time.Duration {
	if c.start.IsZero() {
		return notYet
	}
	at := c.total
	switch c.state {
	case durWarmUp:
		at = c.margin
	case durSample:
		at = c.total - c.margin
	}
	return max(c.start.Add(at).Sub(now), 0)
}

// LatDurReport is perftest's duration latency result
// (print_report_lat_duration).
type LatDurReport struct {
	Size  uint64  `json:"bytes"`
	Iters uint64  `json:"iterations"`
	TAvg  float64 `json:"t_avg_usec"`
	TPS   float64 `json:"tps_average"`
}

// report is the run's numbers: the window's time per message and trip.
func (c *durClock) report(size uint64, rttFactor int) LatDurReport {
	r := LatDurReport{Size: size, Iters: c.iters}
	window := c.to.Sub(c.from)
	if c.iters == 0 || window <= 0 {
		return r
	}
	r.TAvg = float64(window.Microseconds()) / float64(rttFactor) / float64(c.iters)
	r.TPS = float64(c.iters) / window.Seconds()
	return r
}

// WriteLatDurRow prints one duration latency result (REPORT_FMT_LAT_DUR),
// ended by end: "\n", or --cpu_util's column.
func WriteLatDurRow(w io.Writer, r LatDurReport, end string) {
	fmt.Fprintf(w, " %-7d       %d            %-7.2f        %-7.2f%s", r.Size, r.Iters, r.TAvg, r.TPS, end)
}

// ended reports a wait that timed out because the run's time is up.
func (c *durClock) ended(err error) bool {
	return errors.Is(err, rdma.ErrTimeout) && c.tick(time.Now()) == durEnd
}

// runFor is a latency loop for d: run_iter_lat_send, _lat_write and _lat
// in duration mode, margin left out at each end. Waits end at the run's
// end at the latest.
func (g *pinger) runFor(p PingPong, d, margin time.Duration) (LatDurReport, error) {
	c := newDurClock(d, margin)
	var err error
	switch {
	case p.Test.IsSend():
		err = g.sendFor(p, c)
	case p.Test.IsWrite():
		err = g.writeFor(p, c)
	default:
		err = g.readFor(p, c)
	}
	if err != nil {
		return LatDurReport{}, err
	}
	if c.to.IsZero() {
		return LatDurReport{}, fmt.Errorf("-D %v: the run ended before its sample window closed", d)
	}
	return c.report(uint64(p.Size), p.Test.rttFactor()), nil
}

func (g *pinger) sendFor(p PingPong, c *durClock) error {
	recvSGE := sgeAt(g.ep, 0, p.LocalOff, p.Size+p.RecvExtra)
	wr := rdma.SendWR{Op: rdma.WRSend, Local: sgeAt(g.ep, 0, 0, p.Size), Signaled: true, Inline: p.Inline}
	for scnt := 0; ; {
		if !(scnt < 1 && p.Client) {
			err := g.wait(g.ep.RecvCQ(), g.recvWait, c.left(time.Now(), p.Timeout))
			if c.ended(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("receive: %w", err)
			}
			now := time.Now()
			c.begin(now)
			c.count(now)
			if err := g.ep.PostRecvs(0, 1, recvSGE); err != nil {
				return err
			}
		}
		if c.tick(time.Now()) == durEnd {
			return nil
		}
		scnt++
		if err := g.ep.PostSend(wr); err != nil {
			return err
		}
		err := g.wait(g.ep.SendCQ(), g.sendWait, c.left(time.Now(), p.Timeout))
		if c.ended(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("send %d: %w", scnt, err)
		}
	}
}

// The end of a write_lat -D run: how long to wait for the peer's answer
// to the last write, and how long to keep the QP after it landed, for
// our acknowledgement of it to leave (see writeFor).
const (
	lastAnswerWait = time.Second
	lastAckGrace   = 100 * time.Millisecond
)

// writeLatLinger bounds the wait, at the end of write_lat over TCP, for the
// peer to end its side of the connection (OOB.Linger).
const writeLatLinger = 10 * time.Second

// writeFor is write_lat for the run's time. Whichever side ends first
// stops writing; the other, still running, answers its last write and
// waits for that answer's completion until its own end. ib_write_lat up
// to perftest 4.5+0.17 (Debian 12's) waits for a completion without
// looking at its clock, so if our QP is gone before its answer arrives it
// never completes and ib_write_lat spins forever (4 runs of 40 in the
// lab). So at the end this side waits for that answer, then lets the
// acknowledgement go, before the QP may be torn down.
func (g *pinger) writeFor(p PingPong, c *durClock) error {
	pollOff := p.LocalOff + p.Size - 1
	last, err := g.writeUntilEnd(p, c, pollOff)
	if err != nil || last == 0 {
		return err
	}
	// The server writes first: the peer's answer to a server's n-th
	// write is the client's n-th, to a client's n-th the server's n+1-th.
	answer := last
	if p.Client {
		answer++
	}
	if g.ep.WaitByte(pollOff, byte(answer), lastAnswerWait, !p.BusyPoll) == nil {
		time.Sleep(lastAckGrace)
	}
	return nil
}

// writeUntilEnd runs write_lat's loop until the run's end and returns the
// number of writes it posted.
func (g *pinger) writeUntilEnd(p PingPong, c *durClock, pollOff int) (int, error) {
	buf := g.ep.Buffer()
	postOff := p.Size - 1
	wr := rdma.SendWR{Op: rdma.WRRDMAWrite, Local: sgeAt(g.ep, 0, 0, p.Size), RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true, Inline: p.Inline}
	c.begin(time.Now())
	for scnt, rcnt := 0, 0; ; {
		if !(scnt < 1 && !p.Client) {
			rcnt++
			err := g.ep.WaitByte(pollOff, byte(rcnt), c.left(time.Now(), p.Timeout), !p.BusyPoll)
			if c.ended(err) {
				return scnt, nil
			}
			if err != nil {
				return scnt, fmt.Errorf("waiting for the peer's write %d: %w", rcnt, err)
			}
		}
		scnt++
		buf[postOff] = byte(scnt)
		if err := g.ep.PostSend(wr); err != nil {
			return scnt, err
		}
		if c.tick(time.Now()) == durEnd {
			return scnt, nil
		}
		err := g.wait(g.ep.SendCQ(), g.sendWait, c.left(time.Now(), p.Timeout))
		if c.ended(err) {
			return scnt, nil
		}
		if err != nil {
			return scnt, fmt.Errorf("write %d: %w", scnt, err)
		}
		c.count(time.Now())
	}
}

func (g *pinger) readFor(p PingPong, c *durClock) error {
	wr := rdma.SendWR{Op: opcodeOf(p.Test, p.Atomic), Local: sgeAt(g.ep, 0, 0, p.Size), RemoteAddr: p.RemoteAddr, RKey: p.RKey, Signaled: true}
	c.begin(time.Now())
	for i := 1; c.tick(time.Now()) != durEnd; i++ {
		if err := g.ep.PostSend(wr); err != nil {
			return err
		}
		err := g.wait(g.ep.SendCQ(), g.sendWait, c.left(time.Now(), p.Timeout))
		if c.ended(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %d: %w", i, err)
		}
		c.count(time.Now())
	}
	return nil
}
