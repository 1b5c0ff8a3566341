package rdmatest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// perfPair is two perf endpoints of typ on two RoCE devices, qps QPs
// each, QP i of one connected to QP i of the other.
func perfPair(t *testing.T, f *Fabric, c rdma.PerfConfig) (a, b rdma.PerfEndpoint) {
	t.Helper()
	var eps [2]rdma.PerfEndpoint
	var gids [2]rdma.GID
	for i, ip := range []string{"10.9.0.1", "10.9.0.2"} {
		d := f.AddRoCEDevice("rxe"+ip[len(ip)-1:], netip.MustParseAddr(ip))
		gids[i] = rdma.GIDFor(netip.MustParseAddr(ip))
		var err error
		if eps[i], err = d.NewPerfEndpoint(c); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eps[i].Close() })
	}
	for i, ep := range eps {
		for q := range max(c.QPs, 1) {
			a := rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: eps[1-i].QPN(q), Port: 1, GRH: &rdma.GRH{DGID: gids[1-i], SGIDIndex: 3}}
			if err := ep.ToRTR(q, a); err != nil {
				t.Fatal(err)
			}
			if err := ep.ToRTS(q, rdma.RTSAttr{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return eps[0], eps[1]
}

func sgeOf(ep rdma.PerfEndpoint, off, n int) rdma.SGE {
	return rdma.SGE{Addr: ep.Addr() + uint64(off), Len: uint32(n), LKey: ep.LKey(0)}
}

// A WRITE stream on two QPs lands each QP's data in the peer's buffer,
// and with a wire time of 1 ms its stamps are exact: posts 1 ms apart,
// every completion seen when the last message is through.
func TestPerfStreamWritesAndStampsByWireTime(t *testing.T) {
	f := NewFabric()
	f.SetWireTime(time.Millisecond)
	a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, QPs: 2, BufSize: 256, TxDepth: 8, RxDepth: 1})
	copy(a.Buffer(), "qp0.")
	copy(a.Buffer()[128:], "qp1.")
	const iters = 10
	posted, completed := make([]int64, 2*iters), make([]int64, 2*iters)
	res, err := a.Stream(rdma.Stream{Op: rdma.WRRDMAWrite, Iters: iters, TxDepth: 8, CQMod: 4, Idle: time.Second, Posted: posted, Completed: completed,
		Targets: []rdma.StreamTarget{{Local: sgeOf(a, 0, 4), RemoteAddr: b.Addr(), RKey: b.RKey(0)}, {Local: sgeOf(a, 128, 4), RemoteAddr: b.Addr() + 128, RKey: b.RKey(0)}}})
	if err != nil || res.Completed != 2*iters {
		t.Fatalf("%+v, %v", res, err)
	}
	if string(b.Buffer()[:4]) != "qp0." || string(b.Buffer()[128:132]) != "qp1." {
		t.Errorf("peer's buffer %q … %q", b.Buffer()[:4], b.Buffer()[128:132])
	}
	for k, p := range posted {
		if p != int64(k)*1e6 {
			t.Fatalf("post stamps %v, want 1 ms apart from 0", posted)
		}
	}
	if last := completed[2*iters-1]; last != int64(2*iters*time.Millisecond) {
		t.Errorf("last completion at %d, want %d", last, int64(2*iters*time.Millisecond))
	}
	if f.Posts(rdma.WRRDMAWrite) != 2*iters {
		t.Errorf("%d writes posted", f.Posts(rdma.WRRDMAWrite))
	}
}

// READ and the atomics fetch the peer's memory; a bad key ends the
// stream with the completion's error.
func TestPerfStreamReadsAtomicsAndAccessErrors(t *testing.T) {
	f := NewFabric()
	a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 4, RxDepth: 1})
	copy(b.Buffer()[8:], "readme")
	target := []rdma.StreamTarget{{Local: sgeOf(a, 0, 6), RemoteAddr: b.Addr() + 8, RKey: b.RKey(0)}}
	if _, err := a.Stream(rdma.Stream{Op: rdma.WRRDMARead, Iters: 3, TxDepth: 4, CQMod: 1, Idle: time.Second, Targets: target,
		Posted: make([]int64, 3), Completed: make([]int64, 3)}); err != nil || string(a.Buffer()[:6]) != "readme" {
		t.Fatalf("read: %q, %v", a.Buffer()[:6], err)
	}
	target = []rdma.StreamTarget{{Local: sgeOf(a, 16, 8), RemoteAddr: b.Addr() + 32, RKey: b.RKey(0)}}
	if _, err := a.Stream(rdma.Stream{Op: rdma.WRAtomicFetchAndAdd, Iters: 5, TxDepth: 4, CQMod: 2, Idle: time.Second, Targets: target,
		Posted: make([]int64, 5), Completed: make([]int64, 5)}); err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(b.Buffer()[32:]); got != 5 {
		t.Errorf("after 5 fetch-and-adds the peer holds %d", got)
	}
	target[0].RKey++
	_, err := a.Stream(rdma.Stream{Op: rdma.WRRDMAWrite, Iters: 1, TxDepth: 4, CQMod: 1, Idle: time.Second, Targets: target,
		Posted: make([]int64, 1), Completed: make([]int64, 1)})
	var wce *rdma.WCError
	if !errors.As(err, &wce) || wce.Status != rdma.WCRemAccessErr {
		t.Errorf("write with a wrong key: %v", err)
	}
}

// SENDs of a stream land in the receives the peer posted, and Receive
// takes them, posting receives again while more are due.
func TestPerfSendStreamAndReceive(t *testing.T) {
	for _, typ := range []rdma.QPType{rdma.QPTypeRC, rdma.QPTypeUC, rdma.QPTypeUD} {
		t.Run(typ.String(), func(t *testing.T) {
			f := NewFabric()
			a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, Type: typ, QKey: 0x11111111, BufSize: 256, TxDepth: 4, RxDepth: 2})
			copy(a.Buffer(), "hello")
			recv := sgeOf(b, 64, 5+rdma.GRHSize)
			if err := b.PostRecvs(0, 2, recv); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			var got rdma.ReceiveResult
			go func() {
				var err error
				got, err = b.Receive(rdma.Receive{SGEs: []rdma.SGE{recv}, Iters: 6, RxDepth: 2, Idle: time.Second})
				done <- err
			}()
			// UC and UD lose what finds no receive: one at a time, until the
			// receiver has them all.
			for sent := 0; ; sent++ {
				if _, err := a.Stream(rdma.Stream{Op: rdma.WRSend, Iters: 1, TxDepth: 1, CQMod: 1, Idle: time.Second,
					Targets: []rdma.StreamTarget{{Local: sgeOf(a, 0, 5)}}, Posted: make([]int64, 1), Completed: make([]int64, 1)}); err != nil {
					t.Fatalf("%v: %v", typ, err)
				}
				select {
				case err := <-done:
					if err != nil || got.Completed != 6 {
						t.Fatalf("%v: received %+v, %v", typ, got, err)
					}
					off := 64
					if typ == rdma.QPTypeUD {
						off += rdma.GRHSize
					}
					if string(b.Buffer()[off:off+5]) != "hello" {
						t.Errorf("%v: receive holds %q", typ, b.Buffer()[64:64+5+rdma.GRHSize])
					}
					return
				case <-time.After(20 * time.Millisecond):
				}
				if sent > 100 {
					t.Fatalf("%v: 100 sends and the receiver still waits", typ)
				}
			}
		})
	}
}

// SendPingPong alternates with the peer's; each side's posts are two
// wire times apart, a message each way.
func TestPerfSendPingPong(t *testing.T) {
	f := NewFabric()
	f.SetWireTime(10 * time.Microsecond)
	a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, BufSize: 128, TxDepth: 1, RxDepth: 4, MaxInline: 64})
	const iters = 20
	var posted [2][]int64
	errs := make(chan error, 2)
	for i, ep := range []rdma.PerfEndpoint{a, b} {
		posted[i] = make([]int64, iters)
		recv := sgeOf(ep, 64, 8)
		if err := ep.PostRecvs(0, 4, recv); err != nil {
			t.Fatal(err)
		}
		go func() {
			errs <- ep.SendPingPong(rdma.SendPingPong{Local: sgeOf(ep, 0, 8), Recv: recv, Iters: iters, RxDepth: 4, Client: i == 0,
				Inline: true, Idle: time.Second, Posted: posted[i]})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for k := 1; k < iters; k++ {
		if d := posted[0][k] - posted[0][k-1]; d != 20000 {
			t.Fatalf("client's posts %v, want 20 µs apart", posted[0])
		}
	}
	if f.InlinePosts() != 2*iters {
		t.Errorf("%d sends inline, want %d", f.InlinePosts(), 2*iters)
	}
}

// WaitByte sees a peer's write land; it gives up after its timeout.
func TestPerfWaitByte(t *testing.T) {
	f := NewFabric()
	a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 1, MaxInline: 1024})
	if a.MaxInline() != perfMaxInline {
		t.Errorf("max inline %d, want the device's %d", a.MaxInline(), perfMaxInline)
	}
	if err := b.WaitByte(9, 7, time.Millisecond, true); !errors.Is(err, rdma.ErrTimeout) {
		t.Errorf("before the write: %v", err)
	}
	a.Buffer()[0] = 7
	if err := a.PostSend(rdma.SendWR{Op: rdma.WRRDMAWrite, Local: sgeOf(a, 0, 1), RemoteAddr: b.Addr() + 9, RKey: b.RKey(0), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitByte(9, 7, time.Second, false); err != nil {
		t.Error(err)
	}
	var wc [1]rdma.WC
	if n, _, err := a.SendCQ().Await(wc[:], nil, time.Second); n != 0 || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Await on a CQ without events: %d, %v", n, err)
	}
	if n, _ := a.SendCQ().Poll(wc[:]); n != 1 || wc[0].Status != rdma.WCSuccess {
		t.Errorf("the write's completion: %d %+v", n, wc[0])
	}
}

// Injected verb failures reach NewPerfEndpoint and the data paths.
func TestPerfInjectedFailures(t *testing.T) {
	f := NewFabric()
	d := f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	boom := rdma.Errorf("ibv_create_cq", syscall.ENOMEM)
	d.FailNext("ibv_create_cq", boom)
	if _, err := d.NewPerfEndpoint(rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 1}); !errors.Is(err, boom) {
		t.Errorf("with ibv_create_cq failing: %v", err)
	}
	if _, err := d.NewPerfEndpoint(rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 1, QPs: rdma.MaxPerfQPs + 1}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("too many QPs: %v", err)
	}
	a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 1, RxDepth: 1})
	f.FailNextCompletion(rdma.WCRNRRetryErr)
	b.PostRecvs(0, 1, sgeOf(b, 0, 8))
	go b.SendPingPong(rdma.SendPingPong{Local: sgeOf(b, 0, 8), Recv: sgeOf(b, 0, 8), Iters: 1, Idle: 50 * time.Millisecond, Posted: make([]int64, 1)})
	err := a.SendPingPong(rdma.SendPingPong{Local: sgeOf(a, 0, 8), Recv: sgeOf(a, 8, 8), Iters: 1, Client: true, Idle: time.Second, Posted: make([]int64, 1)})
	var wce *rdma.WCError
	if !errors.As(err, &wce) || wce.Status != rdma.WCRNRRetryErr {
		t.Errorf("send with RNR injected: %v", err)
	}
}

// ReadyPerfQP connects a perf QP over rdma_cm: the records show the RNR
// timer given, the parameters sent and the TOS set.
func TestPerfQPOverCM(t *testing.T) {
	f := cmFabric()
	devs := []*Device{f.devices[1], f.devices[0]} // the client's, the server's
	lch, l := listener(t, f, rdma.PortSpaceTCP, 7000)
	var eps [2]rdma.PerfEndpoint
	for i := range eps {
		var err error
		if eps[i], err = devs[i].NewPerfEndpoint(rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 1, RxDepth: 1}); err != nil {
			t.Fatal(err)
		}
	}
	cch := channel(t, f)
	c := resolved(t, cch, rdma.PortSpaceTCP, addr2, 7000)
	if err := c.SetTOS(96); err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(&rdma.ConnParam{QPNum: eps[0].QPN(0), RetryCount: 7}); err != nil {
		t.Fatal(err)
	}
	req := next(t, lch, rdma.CMEventConnectRequest)
	if err := req.ID.(rdma.PerfCMID).ReadyPerfQP(eps[1], 0, 12); err != nil {
		t.Fatal(err)
	}
	if err := req.ID.Accept(&rdma.ConnParam{QPNum: eps[1].QPN(0)}); err != nil {
		t.Fatal(err)
	}
	next(t, cch, rdma.CMEventConnectResponse)
	if err := c.ReadyPerfQP(eps[0], 0, 12); err != nil {
		t.Fatal(err)
	}
	if err := c.Establish(); err != nil {
		t.Fatal(err)
	}
	next(t, lch, rdma.CMEventEstablished)
	copy(eps[0].Buffer(), "cm")
	if err := eps[0].PostSend(rdma.SendWR{Op: rdma.WRRDMAWrite, Local: sgeOf(eps[0], 0, 2), RemoteAddr: eps[1].Addr(), RKey: eps[1].RKey(0)}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(eps[1].Buffer()[:2], []byte("cm")) {
		t.Errorf("the write over the CM's connection left %q", eps[1].Buffer()[:2])
	}
	readied := 0
	for _, r := range f.QPRecords() {
		if r.Readied && !r.CM {
			readied++
			if r.RTR.MinRNRTimer != 12 {
				t.Errorf("QP %#x readied with RNR timer %d", r.Num, r.RTR.MinRNRTimer)
			}
		}
	}
	if readied != 2 {
		t.Errorf("%d perf QPs readied, want 2: %+v", readied, f.QPRecords())
	}
	if p := f.ConnParams(); len(p) != 2 || p[0].RetryCount != 7 || p[1].QPNum != eps[1].QPN(0) {
		t.Errorf("parameters sent %+v", p)
	}
	if tos := f.TypesOfService(); len(tos) != 1 || tos[0] != 96 {
		t.Errorf("TOS set %v", tos)
	}
	if err := c.ReadyPerfQP(eps[0], 3, 12); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a QP the endpoint has not: %v", err)
	}
	l.Close()
}

// A timed stream runs for its duration, its messages a wire time apart
// in real time, and counts the completions of its sample window alone.
func TestPerfTimedStream(t *testing.T) {
	f := NewFabric()
	f.SetWireTime(time.Millisecond)
	a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 4})
	start := time.Now()
	res, err := a.Stream(rdma.Stream{Op: rdma.WRRDMAWrite, Iters: 1, TxDepth: 4, CQMod: 2, Idle: time.Second, Duration: 100 * time.Millisecond,
		Margin: 20 * time.Millisecond, Targets: []rdma.StreamTarget{{Local: sgeOf(a, 0, 8), RemoteAddr: b.Addr(), RKey: b.RKey(0)}}})
	if err != nil || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("%+v, %v after %v", res, err, time.Since(start))
	}
	posts := uint64(f.Posts(rdma.WRRDMAWrite))
	if res.Completed == 0 || res.Completed >= posts || res.Last <= res.First || res.Completed%2 != 0 {
		t.Errorf("window %+v of %d posts", res, posts)
	}
}

// A stream the endpoint cannot run is refused before anything is posted.
func TestPerfStreamRefusals(t *testing.T) {
	f := NewFabric()
	a, b := perfPair(t, f, rdma.PerfConfig{Port: 1, BufSize: 64, TxDepth: 4})
	target := []rdma.StreamTarget{{Local: sgeOf(a, 0, 8), RemoteAddr: b.Addr(), RKey: b.RKey(0)}}
	for _, s := range []rdma.Stream{
		{Iters: 2, TxDepth: 8, CQMod: 1, Targets: target, Posted: make([]int64, 2), Completed: make([]int64, 2)},
		{Iters: 2, TxDepth: 4, CQMod: 0, Targets: target, Posted: make([]int64, 2), Completed: make([]int64, 2)},
		{Iters: 2, TxDepth: 4, CQMod: 1, Targets: target, Posted: make([]int64, 1), Completed: make([]int64, 2)},
		{Iters: 2, TxDepth: 4, CQMod: 1, Posted: make([]int64, 2), Completed: make([]int64, 2)},
	} {
		s.Op = rdma.WRRDMAWrite
		if _, err := a.Stream(s); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%+v: %v", s, err)
		}
	}
	if f.Posts(rdma.WRRDMAWrite) != 0 {
		t.Errorf("%d writes posted", f.Posts(rdma.WRRDMAWrite))
	}
}
