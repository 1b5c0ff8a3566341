package cgoverbs

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs/internal/cvfake"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The C helpers return 0 or -errno whatever convention the provider
// follows: these tests run them over a provider that fails (cvfake) and
// hold the error that reaches Go to the errno the provider meant.

// setC points a field holding a C pointer at p (a test file cannot name
// cgo's types).
func setC[T any](field *T, p unsafe.Pointer) { *(*unsafe.Pointer)(unsafe.Pointer(field)) = p }

// faked is the package's objects over a cvfake provider.
type faked struct {
	p   *cvfake.Provider
	qp  *QP
	cq  *CQ
	srq *SRQ
	ah  *AH
}

func newFaked(t *testing.T, postRC, pollRC, notifyRC, errno int) *faked {
	p := cvfake.New(postRC, pollRC, notifyRC, errno)
	t.Cleanup(p.Free)
	f := &faked{p: p, qp: &QP{}, cq: &CQ{ch: &CompChannel{}}, srq: &SRQ{}, ah: &AH{}}
	setC(&f.qp.qp, p.QP())
	setC(&f.cq.cq, p.CQ())
	setC(&f.cq.st, p.CQState())
	setC(&f.cq.ch.ch, p.Channel())
	setC(&f.srq.srq, p.SRQ())
	setC(&f.ah.ah, p.AH())
	return f
}

// The three ways providers report a failed post: the errno returned
// (ibv_post_send's documented way), -errno, or -1 with errno set.
var postFailures = []struct {
	name      string
	rc, errno int
	want      syscall.Errno
}{
	{"errno", int(syscall.EINVAL), 0, syscall.EINVAL},
	{"-errno", -int(syscall.ENOMEM), 0, syscall.ENOMEM},
	{"-1 and errno", -1, int(syscall.EAGAIN), syscall.EAGAIN},
}

// A failed poll is negative: -errno, or -1 with errno set.
var pollFailures = postFailures[1:]

// wantErr fails unless err is an *rdma.Error of op that errors.Is want.
func wantErr(t *testing.T, what string, err error, op string, want syscall.Errno) {
	t.Helper()
	var re *rdma.Error
	if !errors.As(err, &re) || !errors.Is(err, want) || (op != "" && re.Op != op) {
		t.Errorf("%s: %v (%#v), want %s's %v", what, err, err, op, want)
	}
}

func TestPostErrorsReachGoAsTheirErrno(t *testing.T) {
	buf := make([]SGE, 2)
	for _, c := range postFailures {
		f := newFaked(t, c.rc, 0, 0, c.errno)
		sge := SGE{Addr: 0x1000, Len: 16, LKey: 1}
		wantErr(t, c.name+" send", f.qp.PostSend(SendWR{Op: rdma.WRSend, Local: sge}), "ibv_post_send", c.want)
		buf[0], buf[1] = sge, sge
		wantErr(t, c.name+" send SGL", f.qp.PostSend(SendWR{Op: rdma.WRSend, SGL: buf}), "ibv_post_send", c.want)
		wantErr(t, c.name+" atomic", f.qp.PostSend(SendWR{Op: rdma.WRAtomicFetchAndAdd, Local: SGE{Addr: 0x1000, Len: 8, LKey: 1}, RemoteAddr: 0x2000, RKey: 2}),
			"ibv_post_send", c.want)
		wantErr(t, c.name+" UD send", f.qp.PostSend(SendWR{Op: rdma.WRSend, Local: sge, UD: &rdma.UDDest{AH: f.ah, QPN: 7, QKey: 9}}),
			"ibv_post_send", c.want)
		wantErr(t, c.name+" recv", f.qp.PostRecv(1, sge), "ibv_post_recv", c.want)
		wantErr(t, c.name+" recv SGL", f.qp.PostRecvSGL(1, buf), "ibv_post_recv", c.want)
		wantErr(t, c.name+" SRQ recv", f.srq.PostRecv(1, buf...), "ibv_post_srq_recv", c.want)
	}
}

func TestCQErrorsReachGoAsTheirErrno(t *testing.T) {
	var wc [4]rdma.WC
	for _, c := range pollFailures {
		f := newFaked(t, 0, c.rc, 0, c.errno)
		_, err := f.cq.Poll(wc[:])
		wantErr(t, c.name+" poll", err, "ibv_poll_cq", c.want)
		_, err = f.cq.ReadyToSleep(wc[:])
		wantErr(t, c.name+" poll before arming", err, "ibv_req_notify_cq", c.want)
		_, _, err = f.cq.Await(wc[:], -1, time.Second)
		wantErr(t, c.name+" poll in await", err, "", c.want)
	}
	// Arming returns the errno itself (ibv_req_notify_cq's convention) or
	// -errno (some providers').
	for _, rc := range []int{int(syscall.EINVAL), -int(syscall.EINVAL)} {
		f := newFaked(t, 0, 0, rc, 0)
		_, err := f.cq.ReadyToSleep(wc[:])
		wantErr(t, "arming", err, "ibv_req_notify_cq", syscall.EINVAL)
		f = newFaked(t, 0, 0, rc, 0)
		_, _, err = f.cq.Await(wc[:], -1, time.Second)
		wantErr(t, "arming in await", err, "", syscall.EINVAL)
	}
	// The channel's fd is -1: reading its event fails with EBADF, and a
	// wait on it only ends at its timeout.
	f := newFaked(t, 0, 0, 0, 0)
	_, err := f.cq.Woken(wc[:])
	wantErr(t, "reading the channel", err, "ibv_get_cq_event", syscall.EBADF)
	if _, _, err := f.cq.Await(wc[:], -1, time.Millisecond); err != rdma.ErrTimeout || !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("await: %v, want rdma.ErrTimeout", err)
	}
}

// fakedPerf is a perf endpoint of one QP over f.
func fakedPerf(t *testing.T, f *faked) *perfEndpoint {
	buf, err := AllocBuffer(64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(buf.Close)
	return &perfEndpoint{qps: []*QP{f.qp}, qp: f.qp, sendCQ: f.cq, recvCQ: f.cq, buf: buf}
}

func TestPerfLoopErrorsReachGoAsTheirErrno(t *testing.T) {
	sge := rdma.SGE{Addr: 0x1000, Len: 8, LKey: 1}
	for _, c := range postFailures {
		e := fakedPerf(t, newFaked(t, c.rc, 0, 0, c.errno))
		wantErr(t, c.name+" atomic", e.PostSend(rdma.SendWR{Op: rdma.WRAtomicCmpAndSwp, Local: sge, RemoteAddr: 0x2000, RKey: 2}), "ibv_post_send", c.want)
		wantErr(t, c.name+" receives", e.PostRecvs(0, 40, sge), "ibv_post_recv", c.want)
		stamps := make([]int64, 4)
		_, err := e.Stream(rdma.Stream{Op: rdma.WRRDMAWrite, Targets: []rdma.StreamTarget{{Local: sge, RemoteAddr: 0x2000, RKey: 2}},
			Iters: 4, TxDepth: 2, CQMod: 1, Posted: stamps, Completed: make([]int64, 4), Idle: time.Second})
		wantErr(t, c.name+" stream", err, "ibv_post_send", c.want)
		err = e.SendPingPong(rdma.SendPingPong{Local: sge, Recv: sge, Iters: 4, RxDepth: 1, Client: true, Posted: stamps, Idle: time.Second})
		wantErr(t, c.name+" send latency", err, "ibv_post_send", c.want)
	}
	for _, c := range pollFailures {
		e := fakedPerf(t, newFaked(t, 0, c.rc, 0, c.errno))
		_, err := e.Receive(rdma.Receive{SGEs: []rdma.SGE{sge}, Iters: 4, RxDepth: 1, Idle: time.Second})
		wantErr(t, c.name+" receive", err, "", c.want)
		err = e.SendPingPong(rdma.SendPingPong{Local: sge, Recv: sge, Iters: 4, RxDepth: 1, Posted: make([]int64, 4), Idle: time.Second})
		wantErr(t, c.name+" latency poll", err, "", c.want)
	}
	// A byte that never changes: the wait ends at its timeout.
	e := fakedPerf(t, newFaked(t, 0, 0, 0, 0))
	if err := e.WaitByte(0, 1, time.Millisecond, true); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("wait for a byte: %v, want ETIMEDOUT", err)
	}
}

// TestPerfLoopSleepErrorsReachGo: with Events the bandwidth loops sleep
// on the CQ's channel once it is empty (a stream that receives too, on
// both CQs'); a failed arming, and a channel whose read fails (cvfake's
// fd is -1), end them with the errno, named after the wait.
func TestPerfLoopSleepErrorsReachGo(t *testing.T) {
	sge := rdma.SGE{Addr: 0x1000, Len: 8, LKey: 1}
	for _, c := range []struct {
		what     string
		notifyRC int
		want     syscall.Errno
	}{{"arming", int(syscall.EINVAL), syscall.EINVAL}, {"reading the channel", 0, syscall.EBADF}} {
		e := fakedPerf(t, newFaked(t, 0, 0, c.notifyRC, 0))
		_, err := e.Stream(rdma.Stream{Op: rdma.WRSend, Targets: []rdma.StreamTarget{{Local: sge}},
			Iters: 4, TxDepth: 2, CQMod: 1, Posted: make([]int64, 4), Completed: make([]int64, 4), Idle: time.Second, Events: true})
		wantErr(t, c.what+" in a stream", err, "ibv_get_cq_event", c.want)
		_, err = e.Receive(rdma.Receive{SGEs: []rdma.SGE{sge}, Iters: 4, RxDepth: 1, Idle: time.Second, Events: true})
		wantErr(t, c.what+" in a receive", err, "ibv_get_cq_event", c.want)
	}
	// sending and receiving at once, it arms both CQs before it sleeps
	e := fakedPerf(t, newFaked(t, 0, 0, int(syscall.EINVAL), 0))
	recv := &rdma.Receive{SGEs: []rdma.SGE{sge}, Iters: 4, RxDepth: 1, Idle: time.Second, Events: true}
	_, err := e.Stream(rdma.Stream{Op: rdma.WRSend, Targets: []rdma.StreamTarget{{Local: sge}},
		Iters: 4, TxDepth: 2, CQMod: 1, Posted: make([]int64, 4), Completed: make([]int64, 4), Idle: time.Second, Events: true, Receive: recv})
	wantErr(t, "arming in a stream that receives", err, "ibv_get_cq_event", syscall.EINVAL)
	// a CQ without a channel cannot sleep
	e = fakedPerf(t, newFaked(t, 0, 0, 0, 0))
	e.sendCQ = &CQ{cq: e.sendCQ.cq, st: e.sendCQ.st}
	_, err = e.Stream(rdma.Stream{Op: rdma.WRSend, Targets: []rdma.StreamTarget{{Local: sge}},
		Iters: 4, TxDepth: 2, CQMod: 1, Posted: make([]int64, 4), Completed: make([]int64, 4), Idle: time.Second, Events: true})
	wantErr(t, "no channel", err, "ibv_get_cq_event", syscall.EINVAL)
}

// The ping-pong loop runs on a thread of its own (runLoop) when
// GOMAXPROCS is above 1, on the caller's otherwise: either way how it
// ended reaches Go, a failed poll or channel read as its errno, a refused
// first send and an idle slice as the loop's stop.
func TestPingPongLoopEndsReachGo(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			testPingPongLoopEnds(t)
		})
	}
}

func testPingPongLoopEnds(t *testing.T) {
	sge := rdma.SGE{Addr: 0x1000, Len: 8, LKey: 1}
	pingPongCtx := func(ctx context.Context, f *faked, client, events bool, idle time.Duration) (*rdma.PingPong, error) {
		p := &rdma.PingPong{QPs: []rdma.QP{cmQP{f.qp}}, Send: sge, Recv: sge, SendID: 1, RecvID: 2,
			Iters: 4, RxDepth: 1, Outstanding: 1, Client: client, Events: events}
		return p, cmCQ{f.cq}.PingPong(ctx, p, idle)
	}
	pingPong := func(f *faked, client, events bool, idle time.Duration) (*rdma.PingPong, error) {
		return pingPongCtx(context.Background(), f, client, events, idle)
	}
	for _, c := range pollFailures {
		_, err := pingPong(newFaked(t, 0, c.rc, 0, c.errno), false, false, time.Second)
		wantErr(t, c.name+" poll", err, "ibv_poll_cq", c.want)
	}
	// cvfake's channel fd is -1
	_, err := pingPong(newFaked(t, 0, 0, 0, 0), false, true, time.Second)
	wantErr(t, "channel read", err, "ibv_get_cq_event", syscall.EBADF)
	for _, c := range postFailures {
		p, err := pingPong(newFaked(t, c.rc, 0, 0, c.errno), true, false, time.Second)
		if err != nil || p.Stop != rdma.PingPongSendFailed {
			t.Errorf("%s first send: %v, stop %d, want stop %d", c.name, err, p.Stop, rdma.PingPongSendFailed)
		}
	}
	const idle = 20 * time.Millisecond
	start := time.Now()
	p, err := pingPong(newFaked(t, 0, 0, 0, 0), false, false, idle)
	if took := time.Since(start); err != nil || p.Stop != rdma.PingPongIdle || took < idle {
		t.Errorf("idle bound of %v: %v, stop %d after %v, want stop %d", idle, err, p.Stop, took, rdma.PingPongIdle)
	}
	// without an idle bound, only the context ends a silent loop
	ctx, cancel := context.WithTimeout(context.Background(), idle)
	defer cancel()
	start = time.Now()
	p, err = pingPongCtx(ctx, newFaked(t, 0, 0, 0, 0), false, false, -1)
	if took := time.Since(start); err != nil || p.Stop != rdma.PingPongCancelled || took < idle || took > 10*time.Second {
		t.Errorf("context done after %v: %v, stop %d after %v, want stop %d", idle, err, p.Stop, took, rdma.PingPongCancelled)
	}
}
