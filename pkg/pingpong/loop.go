package pingpong

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/latency"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// pingpong is the measured loop of the tools: each side keeps one send
// and the receives in flight and sends again when a receive completed,
// and its last signaled send (the tools signal each). The verbs run the
// whole loop themselves (in C on a real device), ctx and --timeout
// included, so that a round trip costs what it costs the tools.
func (r *run) pingpong(ctx context.Context) error {
	if r.o.AnySizeAndCount {
		return r.answer(ctx)
	}
	o := r.o
	loop, ok := r.cq.(rdma.PingPonger)
	if !ok {
		return fmt.Errorf("device %s: this RDMA stack cannot run the ping-pong loop", r.deviceName)
	}
	if r.validates() {
		r.pageMarks(true)
	}
	p := &rdma.PingPong{
		QPs: r.qps, SRQ: r.srq, Inline: r.inline,
		Send:   rdma.SGE{Addr: r.mr.Addr() + r.offset(), Len: uint32(o.Size), LKey: r.mr.LKey()},
		Recv:   rdma.SGEOf(r.mr, uint32(r.bufferSize())+uint32(r.offset())),
		SendID: sendWRID, RecvID: recvWRID,
		Iters: o.Iters, RxDepth: o.RxDepth, Outstanding: o.RxDepth, SignalEvery: r.signalEvery(),
		Client: o.Server != "", Events: o.Events,
		YieldAfter: yieldAfter(pollwait.AvailableCPUs()),
	}
	if o.Kind == UD {
		p.UD = &rdma.UDDest{AH: r.ah, QPN: r.theirs[0].QPN, QKey: qkey}
	}
	measure := o.Stats || o.JSON
	if measure {
		p.Stamps = make([]int64, o.Iters+1)
	}
	cpu0 := latency.ProcessCPU()
	start := time.Now()
	if err := loop.PingPong(ctx, p, o.wait()); err != nil {
		if o.Events {
			return toolErr("Failed to get cq_event")
		}
		return toolErr(fmt.Sprintf("poll CQ failed %d", -1))
	}
	switch p.Stop {
	case rdma.PingPongDone:
	case rdma.PingPongCancelled:
		r.stopped = &progress{receives: p.Received, elapsed: time.Since(start)}
		return fmt.Errorf("%w after %d of %d receives and %d sends", ctx.Err(), p.Received, o.Iters, p.Posted)
	case rdma.PingPongIdle:
		te := &cli.TimeoutError{After: o.wait(), Doing: fmt.Sprintf("waiting for a completion after %d of %d receives and %d sends", p.Received, o.Iters, p.Posted)}
		return fmt.Errorf("%w: the peer stopped or the path broke", te)
	default:
		return r.loopFailure(p)
	}
	// The tools' clock: from their first sends to their last completion.
	res := &result{elapsed: time.Duration(p.Ended - p.Began), cpu: latency.ProcessCPU().Sub(cpu0)}
	if measure {
		res.hist = latency.New()
		for i := 1; i <= p.Received; i++ {
			res.hist.Record(time.Duration(p.Stamps[i] - p.Stamps[i-1]))
		}
	}
	// gettimeofday's microseconds, summed as the tools do into a float.
	res.usec = float32(res.elapsed.Microseconds())
	r.res = res
	r.report()
	return nil
}

// spinsBeforeYield is how many empty polls in a row a polling loop with
// more than one CPU makes, with no system call between two as the tools
// do, before it gives the CPU away between polls: far more than a round
// trip takes, unless the peer waits for this CPU. Yielding from the first
// empty poll slows every round trip; never yielding would hold a peer put
// on this CPU off for a whole time slice each round trip.
const spinsBeforeYield = 1 << 14

// yieldAfter is the loop's YieldAfter on cpus CPUs: on one, the peer and
// the kernel's RDMA work always wait for this CPU.
func yieldAfter(cpus int) int {
	if cpus <= 1 {
		return 0
	}
	return spinsBeforeYield
}

// loopFailure is the tools' message for why the loop stopped; rc's adds
// the batch size of the completion that stopped it.
func (r *run) loopFailure(p *rdma.PingPong) error {
	var line string
	switch p.Stop {
	case rdma.PingPongFailedStatus:
		line = fmt.Sprintf("Failed status %s (%d) for wr_id %d", p.WC.Status, uint32(p.WC.Status), int32(p.WC.WRID))
	case rdma.PingPongUnknownWRID:
		line = fmt.Sprintf("Completion for unknown wr_id %d", int32(p.WC.WRID))
	case rdma.PingPongUnknownQPN:
		return toolErr(fmt.Sprintf("Couldn't find QPN %06x", p.WC.QPNum))
	case rdma.PingPongRecvsShort:
		line = fmt.Sprintf("Couldn't post receive (%d)", p.Outstanding)
	case rdma.PingPongSendFailed:
		line = "Couldn't post send"
		if p.Polled == 0 {
			return toolErr(line) // the first sends, before any completion
		}
	default:
		return fmt.Errorf("ping-pong loop stopped for no known reason (%d)", p.Stop)
	}
	lines := []string{line}
	if r.o.Kind == RC {
		lines = append(lines, fmt.Sprintf("parse WC failed %d", p.Polled))
	}
	return toolErr(lines...)
}
