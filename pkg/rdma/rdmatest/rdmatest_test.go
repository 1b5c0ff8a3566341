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

type side struct {
	pd rdma.PD
	cq rdma.CQ
	mr rdma.MR
	qp rdma.QP
}

const access = rdma.AccessLocalWrite | rdma.AccessRemoteWrite | rdma.AccessRemoteRead | rdma.AccessRemoteAtomic

func newSide(t *testing.T, d *Device, typ rdma.QPType, srq bool) *side {
	t.Helper()
	ctx := d.VerbsContext()
	s := &side{}
	var err error
	if s.pd, err = ctx.AllocPD(); err != nil {
		t.Fatal(err)
	}
	if s.cq, err = ctx.CreateCQ(16, nil); err != nil {
		t.Fatal(err)
	}
	if s.mr, err = s.pd.RegMR(4096, access); err != nil {
		t.Fatal(err)
	}
	a := rdma.QPInitAttr{Type: typ, SendCQ: s.cq, RecvCQ: s.cq, Cap: rdma.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 2, MaxRecvSGE: 2}}
	if srq {
		if a.SRQ, err = s.pd.CreateSRQ(rdma.SRQAttr{MaxWR: 4, MaxSGE: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if s.qp, err = s.pd.CreateQP(a); err != nil {
		t.Fatal(err)
	}
	if err := s.qp.ToInit(rdma.InitAttr{Port: 1, Access: access, QKey: 0x11111111}); err != nil {
		t.Fatal(err)
	}
	return s
}

// pair is two QPs of typ on one RoCE fabric, connected and in RTS.
func pair(t *testing.T, typ rdma.QPType) (*Fabric, *side, *side) {
	t.Helper()
	f := NewFabric()
	da := f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	db := f.AddRoCEDevice("rxe1", netip.MustParseAddr("10.9.0.2"))
	a, b := newSide(t, da, typ, false), newSide(t, db, typ, false)
	connect(t, a, b)
	connect(t, b, a)
	return f, a, b
}

func connect(t *testing.T, s, peer *side) {
	t.Helper()
	grh := &rdma.GRH{DGID: rdma.GIDFor(netip.MustParseAddr("10.9.0.2")), SGIDIndex: 3, HopLimit: 1}
	if err := s.qp.ToRTR(rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: peer.qp.Num(), Port: 1, GRH: grh}); err != nil {
		t.Fatal(err)
	}
	if err := s.qp.ToRTS(rdma.RTSAttr{}); err != nil {
		t.Fatal(err)
	}
}

func one(t *testing.T, cq rdma.CQ) rdma.WC {
	t.Helper()
	var wc [1]rdma.WC
	n, _, err := cq.Await(wc[:], nil, time.Second)
	if err != nil || n != 1 {
		t.Fatalf("await: %d %v", n, err)
	}
	return wc[0]
}

func none(t *testing.T, cq rdma.CQ) {
	t.Helper()
	var wc [1]rdma.WC
	if n, _ := cq.Poll(wc[:]); n != 0 {
		t.Fatalf("unexpected completion %+v", wc[0])
	}
}

func TestSendWithImmediateOverEveryConnectedType(t *testing.T) {
	for _, typ := range []rdma.QPType{rdma.QPTypeRC, rdma.QPTypeUC} {
		t.Run(typ.String(), func(t *testing.T) {
			_, a, b := pair(t, typ)
			copy(a.mr.Bytes(), "hello, world")
			if err := b.qp.PostRecvSGL(7, []rdma.SGE{{Addr: b.mr.Addr() + 100, Len: 5, LKey: b.mr.LKey()},
				{Addr: b.mr.Addr() + 200, Len: 100, LKey: b.mr.LKey()}}); err != nil {
				t.Fatal(err)
			}
			if err := a.qp.PostSend(rdma.SendWR{ID: 9, Op: rdma.WRSendWithImm, Local: rdma.SGEOf(a.mr, 12), Imm: 0xabcd, Signaled: true}); err != nil {
				t.Fatal(err)
			}
			if wc := one(t, a.cq); wc.WRID != 9 || wc.Status != rdma.WCSuccess || wc.Opcode != rdma.WCSend {
				t.Errorf("send completion %+v", wc)
			}
			wc := one(t, b.cq)
			if wc.WRID != 7 || wc.ByteLen != 12 || !wc.HasImm || wc.Imm != 0xabcd || wc.QPNum != b.qp.Num() {
				t.Errorf("recv completion %+v", wc)
			}
			if got := string(b.mr.Bytes()[100:105]) + string(b.mr.Bytes()[200:207]); got != "hello, world" {
				t.Errorf("received %q", got)
			}
		})
	}
}

func TestRCSendWaitsForAReceiveUCDropsIt(t *testing.T) {
	_, a, b := pair(t, rdma.QPTypeRC)
	if err := a.qp.PostSend(rdma.SendWR{ID: 1, Op: rdma.WRSend, Local: rdma.SGEOf(a.mr, 4), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	none(t, a.cq)
	if err := b.qp.PostRecv(2, rdma.SGEOf(b.mr, 64)); err != nil {
		t.Fatal(err)
	}
	if wc := one(t, b.cq); wc.WRID != 2 || wc.ByteLen != 4 {
		t.Errorf("recv %+v", wc)
	}
	if wc := one(t, a.cq); wc.WRID != 1 {
		t.Errorf("send %+v", wc)
	}

	_, a, b = pair(t, rdma.QPTypeUC)
	if err := a.qp.PostSend(rdma.SendWR{ID: 1, Op: rdma.WRSend, Local: rdma.SGEOf(a.mr, 4), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	one(t, a.cq)
	if err := b.qp.PostRecv(2, rdma.SGEOf(b.mr, 64)); err != nil {
		t.Fatal(err)
	}
	none(t, b.cq)
}

func TestWriteReadAndAtomics(t *testing.T) {
	_, a, b := pair(t, rdma.QPTypeRC)
	copy(a.mr.Bytes(), "written")
	remote := b.mr.Addr() + 512
	post := func(wr rdma.SendWR) rdma.WC {
		t.Helper()
		wr.Signaled = true
		if err := a.qp.PostSend(wr); err != nil {
			t.Fatal(err)
		}
		return one(t, a.cq)
	}
	if wc := post(rdma.SendWR{Op: rdma.WRRDMAWrite, Local: rdma.SGEOf(a.mr, 7), RemoteAddr: remote, RKey: b.mr.RKey()}); wc.Opcode != rdma.WCRDMAWrite || wc.Status != 0 {
		t.Fatalf("write %+v", wc)
	}
	if got := string(b.mr.Bytes()[512:519]); got != "written" {
		t.Fatalf("remote holds %q", got)
	}
	copy(b.mr.Bytes()[1024:], "read me")
	local := rdma.SGE{Addr: a.mr.Addr() + 100, Len: 7, LKey: a.mr.LKey()}
	if wc := post(rdma.SendWR{Op: rdma.WRRDMARead, Local: local, RemoteAddr: b.mr.Addr() + 1024, RKey: b.mr.RKey()}); wc.Opcode != rdma.WCRDMARead {
		t.Fatalf("read %+v", wc)
	}
	if got := string(a.mr.Bytes()[100:107]); got != "read me" {
		t.Fatalf("read %q", got)
	}

	counter := b.mr.Bytes()[2048:2056]
	binary.LittleEndian.PutUint64(counter, 40)
	result := rdma.SGE{Addr: a.mr.Addr() + 8, Len: 8, LKey: a.mr.LKey()}
	if wc := post(rdma.SendWR{Op: rdma.WRAtomicFetchAndAdd, Local: result, RemoteAddr: b.mr.Addr() + 2048, RKey: b.mr.RKey(), CompareAdd: 2}); wc.Opcode != rdma.WCFetchAdd {
		t.Fatalf("fetch-add %+v", wc)
	}
	if old, now := binary.LittleEndian.Uint64(a.mr.Bytes()[8:]), binary.LittleEndian.Uint64(counter); old != 40 || now != 42 {
		t.Fatalf("fetch-add: old %d now %d", old, now)
	}
	post(rdma.SendWR{Op: rdma.WRAtomicCmpAndSwp, Local: result, RemoteAddr: b.mr.Addr() + 2048, RKey: b.mr.RKey(), CompareAdd: 41, Swap: 7})
	if now := binary.LittleEndian.Uint64(counter); now != 42 {
		t.Fatalf("swapped on a mismatch: %d", now)
	}
	post(rdma.SendWR{Op: rdma.WRAtomicCmpAndSwp, Local: result, RemoteAddr: b.mr.Addr() + 2048, RKey: b.mr.RKey(), CompareAdd: 42, Swap: 7})
	if now := binary.LittleEndian.Uint64(counter); now != 7 {
		t.Fatalf("compare-and-swap left %d", now)
	}

	// WRITE with immediate consumes a receive and names the length.
	if err := b.qp.PostRecv(5, rdma.SGEOf(b.mr, 1)); err != nil {
		t.Fatal(err)
	}
	post(rdma.SendWR{Op: rdma.WRRDMAWriteWithImm, Local: rdma.SGEOf(a.mr, 7), RemoteAddr: remote, RKey: b.mr.RKey(), Imm: 3})
	if wc := one(t, b.cq); wc.Opcode != rdma.WCRecvRDMAWithImm || wc.Imm != 3 || wc.ByteLen != 7 {
		t.Fatalf("write with imm: %+v", wc)
	}

	// A wrong rkey is a remote access error, and the QP goes to ERR.
	if wc := post(rdma.SendWR{Op: rdma.WRRDMAWrite, Local: rdma.SGEOf(a.mr, 7), RemoteAddr: remote, RKey: 999}); wc.Status != rdma.WCRemAccessErr {
		t.Fatalf("bad rkey: %+v", wc)
	}
	if info, _ := a.qp.Query(); info.State != rdma.QPStateErr {
		t.Fatalf("state %v after an error", info.State)
	}
}

func TestUDThroughAnAddressHandle(t *testing.T) {
	f := NewFabric()
	da := f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	a, b := newSide(t, da, rdma.QPTypeUD, false), newSide(t, da, rdma.QPTypeUD, false)
	for _, s := range []*side{a, b} {
		if err := s.qp.ToRTR(rdma.RTRAttr{}); err != nil {
			t.Fatal(err)
		}
		if err := s.qp.ToRTS(rdma.RTSAttr{SQPSN: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.pd.CreateAH(rdma.AHAttr{Port: 1}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("AH without a GID on RoCE: %v, want EINVAL", err)
	}
	ah, err := a.pd.CreateAH(rdma.AHAttr{Port: 1, GRH: &rdma.GRH{SGIDIndex: 3, HopLimit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.qp.PostRecv(1, rdma.SGEOf(b.mr, 100)); err != nil {
		t.Fatal(err)
	}
	copy(a.mr.Bytes(), "datagram")
	wr := rdma.SendWR{ID: 2, Op: rdma.WRSend, Local: rdma.SGEOf(a.mr, 8), Signaled: true, UD: &rdma.UDDest{AH: ah, QPN: b.qp.Num(), QKey: 0x11111111}}
	if err := a.qp.PostSend(wr); err != nil {
		t.Fatal(err)
	}
	one(t, a.cq)
	if wc := one(t, b.cq); wc.ByteLen != rdma.GRHSize+8 {
		t.Fatalf("recv %+v", wc)
	}
	if got := string(b.mr.Bytes()[rdma.GRHSize : rdma.GRHSize+8]); got != "datagram" {
		t.Fatalf("received %q after the GRH", got)
	}
	// A wrong Q_Key: the datagram is lost.
	if err := b.qp.PostRecv(1, rdma.SGEOf(b.mr, 100)); err != nil {
		t.Fatal(err)
	}
	wr.UD.QKey = 1
	if err := a.qp.PostSend(wr); err != nil {
		t.Fatal(err)
	}
	one(t, a.cq)
	none(t, b.cq)
	wr.UD = nil
	if err := a.qp.PostSend(wr); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("UD send without a destination: %v", err)
	}
}

func TestSRQFeedsEveryQPMadeWithIt(t *testing.T) {
	f := NewFabric()
	d := f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	srvCtx := d.VerbsContext()
	pd, _ := srvCtx.AllocPD()
	cq, _ := srvCtx.CreateCQ(16, nil)
	mr, _ := pd.RegMR(4096, access)
	srq, err := pd.CreateSRQ(rdma.SRQAttr{MaxWR: 8, MaxSGE: 1})
	if err != nil {
		t.Fatal(err)
	}
	var servers [2]rdma.QP
	var clients [2]*side
	for i := range servers {
		qp, err := pd.CreateQP(rdma.QPInitAttr{Type: rdma.QPTypeRC, SendCQ: cq, RecvCQ: cq, SRQ: srq, Cap: rdma.QPCap{MaxSendWR: 1}})
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = qp
		clients[i] = newSide(t, d, rdma.QPTypeRC, false)
		qp.ToInit(rdma.InitAttr{Port: 1})
		grh := &rdma.GRH{SGIDIndex: 3}
		if err := qp.ToRTR(rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: clients[i].qp.Num(), Port: 1, GRH: grh}); err != nil {
			t.Fatal(err)
		}
		qp.ToRTS(rdma.RTSAttr{})
		connect(t, clients[i], &side{qp: qp})
	}
	if err := servers[0].PostRecv(1, rdma.SGEOf(mr, 8)); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("receive posted on a QP with an SRQ: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := srq.PostRecv(uint64(10+i), rdma.SGE{Addr: mr.Addr() + uint64(64*i), Len: 64, LKey: mr.LKey()}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i >= 0; i-- {
		c := clients[i]
		copy(c.mr.Bytes(), []byte{byte('A' + i)})
		if err := c.qp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(c.mr, 1), Signaled: true}); err != nil {
			t.Fatal(err)
		}
		if wc := one(t, cq); wc.QPNum != servers[i].Num() || wc.WRID != uint64(11-i) {
			t.Errorf("client %d: %+v", i, wc)
		}
	}
	if got := mr.Bytes()[0:1]; !bytes.Equal(got, []byte("B")) || mr.Bytes()[64] != 'A' {
		t.Errorf("SRQ buffers %q %q", mr.Bytes()[0:1], mr.Bytes()[64:65])
	}
}

func TestInjectedFailures(t *testing.T) {
	f, a, b := pair(t, rdma.QPTypeRC)
	f.FailNext("ibv_post_send", rdma.Errorf("ibv_post_send", syscall.ENOMEM))
	if err := a.qp.PostSend(rdma.SendWR{Op: rdma.WRSend, Local: rdma.SGEOf(a.mr, 4)}); !errors.Is(err, syscall.ENOMEM) {
		t.Fatalf("injected error: %v", err)
	}
	if err := b.qp.PostRecv(1, rdma.SGEOf(b.mr, 64)); err != nil {
		t.Fatal(err)
	}
	f.FailNextCompletion(rdma.WCRetryExcErr)
	if err := a.qp.PostSend(rdma.SendWR{ID: 4, Op: rdma.WRSend, Local: rdma.SGEOf(a.mr, 4)}); err != nil {
		t.Fatal(err)
	}
	if wc := one(t, a.cq); wc.Status != rdma.WCRetryExcErr || wc.WRID != 4 {
		t.Fatalf("injected completion %+v", wc)
	}
	none(t, b.cq)
	if err := b.qp.ToError(); err != nil {
		t.Fatal(err)
	}
	if wc := one(t, b.cq); wc.Status != rdma.WCWRFlushErr {
		t.Fatalf("flushed receive %+v", wc)
	}
	f.FailNext("ibv_create_qp", rdma.Errorf("ibv_create_qp", syscall.EPERM))
	if _, err := a.pd.CreateQP(rdma.QPInitAttr{Type: rdma.QPTypeUD, SendCQ: a.cq, RecvCQ: a.cq, Cap: rdma.QPCap{MaxSendWR: 1}}); !errors.Is(err, syscall.EPERM) {
		t.Fatalf("create: %v", err)
	}
}

func TestRTRWithoutAGIDFailsOnRoCE(t *testing.T) {
	f := NewFabric()
	s := newSide(t, f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1")), rdma.QPTypeRC, false)
	if err := s.qp.ToRTR(rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: 5, Port: 1}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("RTR without GRH on RoCE: %v", err)
	}
	ib := newSide(t, f.AddIBDevice("mlx0", 3), rdma.QPTypeRC, false)
	if err := ib.qp.ToRTR(rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: 5, DLID: 4, Port: 1}); err != nil {
		t.Fatalf("RTR by LID on InfiniBand: %v", err)
	}
}

func TestAwaitTimesOut(t *testing.T) {
	_, a, _ := pair(t, rdma.QPTypeRC)
	var wc [1]rdma.WC
	if _, _, err := a.cq.Await(wc[:], nil, 10*time.Millisecond); !errors.Is(err, rdma.ErrTimeout) {
		t.Fatalf("await: %v", err)
	}
}

func TestDroppedSendCompletesNowhere(t *testing.T) {
	f, a, b := pair(t, rdma.QPTypeRC)
	f.DropNextSends(1)
	if err := b.qp.PostRecv(1, rdma.SGEOf(b.mr, 64)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := a.qp.PostSend(rdma.SendWR{ID: uint64(i), Op: rdma.WRSend, Local: rdma.SGEOf(a.mr, 4), Signaled: true}); err != nil {
			t.Fatal(err)
		}
	}
	if wc := one(t, a.cq); wc.WRID != 1 {
		t.Errorf("the dropped send completed: %+v", wc)
	}
	one(t, b.cq)
	none(t, a.cq)
	none(t, b.cq)
}

func TestRTRFromALinkLocalGIDToAnotherKindIsRefused(t *testing.T) {
	f := NewFabric()
	s := newSide(t, f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1")), rdma.QPTypeRC, false)
	v4 := rdma.GIDFor(netip.MustParseAddr("10.9.0.2"))
	ll := rdma.GID{0xfe, 0x80, 15: 2}
	for _, c := range []struct {
		sgid uint8
		dgid rdma.GID
	}{{1, v4}, {3, ll}} {
		a := rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: 5, Port: 1, GRH: &rdma.GRH{DGID: c.dgid, SGIDIndex: c.sgid}}
		if err := s.qp.ToRTR(a); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("RTR from GID %d to %s: %v, want EINVAL", c.sgid, c.dgid, err)
		}
	}
	if err := s.qp.ToRTR(rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: 5, Port: 1, GRH: &rdma.GRH{DGID: ll, SGIDIndex: 1}}); err != nil {
		t.Errorf("RTR between link-local GIDs: %v", err)
	}
}

func TestOpensAndAllocationFailures(t *testing.T) {
	f := NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("10.9.0.1"))
	if _, err := f.Open("nosuch"); !errors.Is(err, syscall.ENODEV) {
		t.Fatalf("open nosuch: %v", err)
	}
	d, err := f.Open("rxe0")
	if err != nil || f.Opens() != 1 {
		t.Fatalf("open: %v, %d opens", err, f.Opens())
	}
	pd, err := d.(rdma.VerbsDevice).VerbsContext().AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	f.FailNext(rdma.OpMalloc, rdma.Errorf(rdma.OpMalloc, syscall.ENOMEM))
	var e *rdma.Error
	if _, err := pd.RegMR(64, access); !errors.As(err, &e) || e.Op != rdma.OpMalloc {
		t.Fatalf("RegMR with its memory refused: %v", err)
	}
	if _, err := pd.RegMR(64, access); err != nil {
		t.Fatal(err)
	}
}
