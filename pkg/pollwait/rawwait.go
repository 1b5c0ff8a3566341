package pollwait

import (
	"runtime"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// RawWaitSlice bounds how long a wait sleeps in a raw poll (holding its P,
// see RawPoll) before it falls back to Await's blocking cgo call for the
// rest: a side waiting that long is idle, and the scheduler may have the
// P back.
const RawWaitSlice = 20 * time.Millisecond

// yieldEvery is how many raw waits pass between two trips through the
// scheduler: a wait takes a few hundred microseconds where raw waits are
// used (one CPU), so a trip comes well within sysmon's 10 ms.
const yieldEvery = 8

// RawWaiter waits for completions the way a C program does on one CPU:
// in raw polls of the completion channel, for a goroutine that is the
// only one waiting (the others may not run meanwhile). The zero value is
// ready.
type RawWaiter struct {
	count uint // raw waits so far
}

// Await is cq.Await, sleeping in raw polls first (RawPoll):
// ReadyToSleep takes what is there or arms the
// CQ, the raw poll sleeps until the completion channel or the CM channel
// is readable, and Woken takes the event and the completions. An
// unbounded wait reads no clock on that path (on the lab's emulated
// clocksource each read is a system call); a raw sleep that ends without
// a completion hands the rest of the wait to Await.
func (w *RawWaiter) Await(cq rdma.CQ, ec rdma.EventChannel, wc []rdma.WC, timeout time.Duration) (int, bool, error) {
	fw, ok := cq.(rdma.WaitFds)
	if !ok || timeout == 0 {
		return cq.Await(wc, ec, timeout)
	}
	chFd, ecFd := fw.WaitFds(ec)
	if chFd < 0 {
		return cq.Await(wc, ec, timeout)
	}
	// Pass through the scheduler now and then: raw polls and cgo calls
	// never do, and a goroutine seen running for 10 ms is preempted by
	// sysmon, which, when that finds it in a cgo call, takes its P away
	// and then wakes every 20 µs for the next millisecond. Not at every
	// wait: each trip also wakes a thread for the spare P.
	if w.count++; w.count%yieldEvery == 0 {
		runtime.Gosched()
	}
	var start time.Time
	if timeout > 0 {
		start = time.Now()
	}
	slice := RawWaitSlice
	for {
		n, err := fw.ReadyToSleep(wc)
		if n > 0 || err != nil {
			return n, false, err
		}
		if timeout > 0 {
			if slice = min(slice, timeout-time.Since(start)); slice <= 0 {
				return 0, false, rdma.ErrTimeout
			}
		}
		chReady, cmReady, err := RawPoll(chFd, ecFd, slice)
		if err == nil && chReady && !cmReady {
			if n, err := fw.Woken(wc); n > 0 || err != nil {
				return n, false, err
			}
			continue // its completion was taken already: arm again
		}
		if err != nil || cmReady {
			// Await takes the CM event (and any completion), or
			// reports what broke.
			return cq.Await(wc, ec, 0)
		}
		// The slice passed, or a signal cut it short. A bounded wait
		// sleeps out its slice; then, or at once when unbounded (with
		// no clock read, a cut-short sleep cannot be told apart), the P
		// goes back.
		if timeout > 0 {
			slept := time.Since(start)
			if slept >= timeout {
				return 0, false, rdma.ErrTimeout
			}
			if slept < RawWaitSlice {
				slice = RawWaitSlice - slept
				continue
			}
			timeout -= slept
		}
		return cq.Await(wc, ec, timeout)
	}
}
