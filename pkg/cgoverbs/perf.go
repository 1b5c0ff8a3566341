package cgoverbs

// #include "perf.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// perfAccess lets the peer write, read and run atomics on the buffer.
const perfAccess = rdma.AccessLocalWrite | rdma.AccessRemoteWrite | rdma.AccessRemoteRead | rdma.Access(C.IBV_ACCESS_REMOTE_ATOMIC)

// NewPerfEndpoint makes one perf endpoint on the device: a PD, a send and
// a receive CQ shared by the QPs (as perftest), their completion channels
// with c.Events, the buffer and the QPs in INIT.
func (c *Context) NewPerfEndpoint(cfg rdma.PerfConfig) (rdma.PerfEndpoint, error) {
	e := &perfEndpoint{}
	if err := e.setup(c, cfg); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

type perfEndpoint struct {
	pd             *PD
	sendCh, recvCh *CompChannel
	sendCQ, recvCQ *CQ
	maxInline      int
	buf            *Buffer
	mrs            []*MR // one for the whole buffer, or one per QP
	srq            *SRQ  // the QPs' shared receive queue, or nil
	qps            []*QP
	qp             *QP // qps[0]
	// UD: the Q_Key, and each QP's peer, set by ToRTR
	qkey  uint32
	ahs   []*AH
	rqpns []uint32
}

var _ rdma.PerfEndpoint = (*perfEndpoint)(nil)

func (e *perfEndpoint) setup(c *Context, cfg rdma.PerfConfig) error {
	var err error
	if e.pd, err = c.AllocPD(); err != nil {
		return asRDMAError("ibv_alloc_pd", err)
	}
	if cfg.Events {
		if e.sendCh, err = c.CreateCompChannel(); err != nil {
			return asRDMAError("ibv_create_comp_channel", err)
		}
		if e.recvCh, err = c.CreateCompChannel(); err != nil {
			return asRDMAError("ibv_create_comp_channel", err)
		}
	}
	n := max(cfg.QPs, 1)
	if n > rdma.MaxPerfQPs {
		return rdma.Errorf(fmt.Sprintf("%d QPs", n), syscall.EINVAL)
	}
	if e.sendCQ, err = c.CreateCQ(cfg.TxDepth*n+1, e.sendCh); err != nil {
		return asRDMAError("ibv_create_cq", err)
	}
	if e.recvCQ, err = c.CreateCQ(cfg.RxDepth*n+1, e.recvCh); err != nil {
		return asRDMAError("ibv_create_cq", err)
	}
	if e.buf, err = allocPerfBuffer(cfg); err != nil {
		return err
	}
	if err := e.register(cfg, n); err != nil {
		return err
	}
	qpType, access := cfg.Type, perfAccess
	switch qpType {
	case 0, rdma.QPTypeRC:
		qpType = rdma.QPTypeRC
	case rdma.QPTypeUC:
		// UC carries no reads or atomics
		access = rdma.AccessLocalWrite | rdma.AccessRemoteWrite
	case rdma.QPTypeUD:
		e.qkey, e.ahs, e.rqpns = cfg.QKey, make([]*AH, n), make([]uint32, n)
	default:
		return rdma.Errorf(fmt.Sprintf("perf QPs of type %s", qpType), syscall.EINVAL)
	}
	if cfg.SRQ {
		if e.srq, err = e.pd.CreateSRQ(rdma.SRQAttr{MaxWR: uint32(cfg.RxDepth), MaxSGE: 1}); err != nil {
			return asRDMAError("ibv_create_srq", err)
		}
	}
	for i := 0; i < n; i++ {
		qp, err := e.pd.CreateQP(qpType, e.sendCQ, e.recvCQ, e.srq, QPCap{
			MaxSendWR: uint32(cfg.TxDepth), MaxRecvWR: uint32(cfg.RxDepth), MaxSendSGE: 1, MaxRecvSGE: 1,
			MaxInlineData: uint32(max(cfg.MaxInline, 0)),
		})
		if err != nil {
			return asRDMAError("ibv_create_qp", err)
		}
		e.qps = append(e.qps, qp)
		if cfg.MaxInline > 0 {
			// the provider may round the inline space up, or hold less
			info, err := qp.Query()
			if err != nil {
				return asRDMAError("ibv_query_qp", err)
			}
			if i == 0 || int(info.Cap.MaxInlineData) < e.maxInline {
				e.maxInline = int(info.Cap.MaxInlineData)
			}
		}
		if err := qp.Init(rdma.InitAttr{Port: cfg.Port, Access: access, QKey: cfg.QKey}); err != nil {
			return asRDMAError("ibv_modify_qp", err)
		}
	}
	e.qp = e.qps[0]
	return nil
}

// qpAt is QP i, or an error naming the bad index.
func (e *perfEndpoint) qpAt(i int) (*QP, error) {
	if i < 0 || i >= len(e.qps) {
		return nil, fmt.Errorf("QP %d of an endpoint of %d", i, len(e.qps))
	}
	return e.qps[i], nil
}

func (e *perfEndpoint) QPN(i int) uint32 {
	if i < 0 || i >= len(e.qps) {
		return 0
	}
	return e.qps[i].Num()
}
func (e *perfEndpoint) Buffer() []byte     { return e.buf.Bytes() }
func (e *perfEndpoint) Addr() uint64       { return e.buf.Addr() }
func (e *perfEndpoint) LKey(qp int) uint32 { return e.mrOf(qp).LKey() }
func (e *perfEndpoint) RKey(qp int) uint32 { return e.mrOf(qp).RKey() }

// allocPerfBuffer is the endpoint's memory: allocated, huge pages or a
// mapped file.
func allocPerfBuffer(cfg rdma.PerfConfig) (*Buffer, error) {
	var b *Buffer
	var err error
	switch {
	case cfg.MmapFile != "":
		b, err = MapFileBuffer(cfg.MmapFile, cfg.MmapOffset, cfg.BufSize)
	case cfg.HugePages:
		b, err = AllocHugeBuffer(cfg.BufSize)
	default:
		return AllocBuffer(cfg.BufSize)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", rdma.ErrPerfBuffer, err)
	}
	return b, nil
}

// register makes the buffer's memory regions: one, or one per QP's share.
func (e *perfEndpoint) register(cfg rdma.PerfConfig, n int) error {
	if !cfg.MRPerQP {
		mr, err := e.pd.RegMR(e.buf, perfAccess)
		if err != nil {
			return asRDMAError("ibv_reg_mr", err)
		}
		e.mrs = []*MR{mr}
		return nil
	}
	share := cfg.BufSize / n
	for i := range n {
		mr, err := e.pd.RegMRAt(e.buf, i*share, share, perfAccess)
		if err != nil {
			return asRDMAError("ibv_reg_mr", err)
		}
		e.mrs = append(e.mrs, mr)
	}
	return nil
}

// mrOf is the memory region of QP qp's share of the buffer.
func (e *perfEndpoint) mrOf(qp int) *MR {
	if len(e.mrs) == 1 {
		return e.mrs[0]
	}
	return e.mrs[qp]
}
func (e *perfEndpoint) SendCQ() rdma.CQ {
	return cmCQ{e.sendCQ}
}
func (e *perfEndpoint) RecvCQ() rdma.CQ { return cmCQ{e.recvCQ} }
func (e *perfEndpoint) MaxInline() int  { return e.maxInline }

func (e *perfEndpoint) ToRTR(i int, a rdma.RTRAttr) error {
	qp, err := e.qpAt(i)
	if err != nil {
		return err
	}
	if err := qp.ReadyToReceive(a); err != nil {
		return asRDMAError("ibv_modify_qp", err)
	}
	if e.ahs == nil {
		return nil
	}
	ah, err := e.pd.CreateAH(rdma.AHAttr{DLID: a.DLID, SL: a.SL, Port: a.Port, GRH: a.GRH})
	if err != nil {
		return asRDMAError("ibv_create_ah", err)
	}
	e.ahs[i].Close()
	e.ahs[i], e.rqpns[i] = ah, a.DestQPN
	return nil
}

// udPeer is QP i's peer when it is a UD QP: its address handle (nil
// before ToRTR, or on a connected QP) and QP number.
func (e *perfEndpoint) udPeer(i int) (*C.struct_ibv_ah, uint32) {
	if e.ahs == nil || e.ahs[i] == nil {
		return nil, 0
	}
	return e.ahs[i].ah, e.rqpns[i]
}

func (e *perfEndpoint) ToRTS(i int, a rdma.RTSAttr) error {
	qp, err := e.qpAt(i)
	if err != nil {
		return err
	}
	return asRDMAError("ibv_modify_qp", qp.ReadyToSend(a))
}

func (e *perfEndpoint) PostSend(wr rdma.SendWR) error {
	if wr.Op == rdma.WRAtomicCmpAndSwp || wr.Op == rdma.WRAtomicFetchAndAdd {
		return callErr("ibv_post_send", C.pf_post_atomic(e.qp.qp, C.int(wr.Op), C.uint64_t(wr.Local.Addr), C.uint32_t(wr.Local.LKey),
			C.uint64_t(wr.RemoteAddr), C.uint32_t(wr.RKey), cBool(wr.Signaled)))
	}
	if e.ahs != nil {
		if e.ahs[0] == nil {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		wr.UD = &rdma.UDDest{AH: e.ahs[0], QPN: e.rqpns[0], QKey: e.qkey}
	}
	return cmQP{e.qp}.PostSend(wr)
}

func (e *perfEndpoint) PostRecvs(qp, n int, sge rdma.SGE) error {
	q, err := e.qpAt(qp)
	if err != nil {
		return err
	}
	return callErr("ibv_post_recv", C.pf_post_recvs(q.qp, e.cSRQ(), C.int(n), C.uint64_t(qp), C.uint64_t(sge.Addr), C.uint32_t(sge.Len), C.uint32_t(sge.LKey)))
}

// cSRQ is the shared receive queue the receives go to, or NULL.
func (e *perfEndpoint) cSRQ() *C.struct_ibv_srq {
	if e.srq == nil {
		return nil
	}
	return e.srq.srq
}

func (e *perfEndpoint) Stream(s rdma.Stream) (rdma.StreamResult, error) {
	nqp, total := len(s.Targets), s.Iters*len(s.Targets)
	if nqp < 1 || nqp > len(e.qps) || s.TxDepth < 1 || s.CQMod < 1 ||
		(s.Duration <= 0 && (s.Iters < 1 || len(s.Posted) < total || len(s.Completed) < total)) {
		return rdma.StreamResult{}, fmt.Errorf("stream of %d on %d of %d QPs (tx depth %d, cq_mod %d) with %d/%d stamp slots",
			s.Iters, nqp, len(e.qps), s.TxDepth, s.CQMod, len(s.Posted), len(s.Completed))
	}
	if s.Receive != nil && s.Events != s.Receive.Events {
		return rdma.StreamResult{}, rdma.ErrSleepMismatch
	}
	r := C.struct_pf_run{
		opcode: C.int(s.Op), nqp: C.int(nqp), len: C.uint32_t(s.Targets[0].Local.Len),
		duration_ns: C.int64_t(s.Duration), margin_ns: C.int64_t(s.Margin), tx_depth: C.int(s.TxDepth), cq_mod: C.int(s.CQMod),
		post_list: C.int(max(s.PostList, 1)), send_inline: cBool(s.Inline),
		idle_ms: timeoutMillis(s.Idle), qkey: C.uint32_t(e.qkey),
		burst: C.int(s.Pace.Burst), gap_ns: C.int64_t(s.Pace.Gap), continues: cBool(s.Continues),
	}
	if s.Events {
		ch, armed, err := e.sleepOn(e.sendCQ)
		if err != nil {
			return rdma.StreamResult{}, err
		}
		r.ch, r.armed = ch, armed
	}
	for i, t := range s.Targets {
		r.qp[i] = e.qps[i].qp
		ah, rqpn := e.udPeer(i)
		if e.ahs != nil && ah == nil {
			return rdma.StreamResult{}, fmt.Errorf("UD QP %d has no peer: ToRTR first", i)
		}
		r.ah[i], r.rqpn[i] = ah, C.uint32_t(rqpn)
		r.laddr[i], r.lkey[i], r.raddr[i], r.rkey[i] = C.uint64_t(t.Local.Addr), C.uint32_t(t.Local.LKey), C.uint64_t(t.RemoteAddr), C.uint32_t(t.RKey)
		if i < len(s.Tail) {
			r.tail[i] = C.int64_t(s.Tail[i])
		}
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	var rv *C.struct_pf_recv
	if s.Receive != nil {
		var err error
		if rv, err = e.recvRun(*s.Receive); err != nil {
			return rdma.StreamResult{}, err
		}
		pin.Pin(rv)
		r.recv, r.recv_cq, r.hold = rv, e.recvCQ.cq, cBool(s.AfterFirstMessage)
	}
	var posted, completed *C.int64_t
	if s.Duration <= 0 {
		r.iters = C.int64_t(s.Iters)
		posted = (*C.int64_t)(unsafe.Pointer(&s.Posted[0]))
		completed = (*C.int64_t)(unsafe.Pointer(&s.Completed[0]))
	}
	rc := C.pf_stream(e.sendCQ.cq, &r, posted, completed)
	clk := tickClockOf(r.clk)
	res := rdma.StreamResult{Completed: uint64(r.done), First: clk.ns(int64(r.first)), Last: clk.ns(int64(r.last))}
	if rv != nil {
		res.Received = uint64(rv.done)
		if s.Duration <= 0 {
			res.Ended = clk.ns(int64(r.ended))
		}
	}
	for i := range nqp {
		res.Tail = append(res.Tail, int(r.tail[i]))
	}
	if rc == 0 && s.Duration <= 0 {
		clk.toNs(s.Posted[:total])
		clk.toNs(s.Completed[:total])
	}
	switch {
	case rc == 0:
		return res, nil
	case rc == -1:
		return res, &rdma.WCError{Status: rdma.WCStatus(r.bad_status), VendorErr: uint32(r.bad_vendor)}
	case rc == -2:
		return res, rdma.ErrTimeout
	case r.sleep_failed != 0:
		return res, rdma.Errorf("ibv_get_cq_event", syscall.Errno(-3-rc))
	case r.alloc_failed != 0:
		return res, &rdma.Error{Op: rdma.OpMalloc, Errno: syscall.ENOMEM}
	case rc == -4 && rv != nil:
		return res, fmt.Errorf("a completion for QP %d of %d", uint64(rv.bad_wr_id), nqp)
	}
	return res, rdma.Errorf("ibv_post_send", syscall.Errno(-3-rc))
}

// sleepOn is what a loop needs to sleep on cq's completion channel: the
// channel and the CQ's flag of an event asked for.
func (e *perfEndpoint) sleepOn(cq *CQ) (*C.struct_ibv_comp_channel, *C.int, error) {
	if cq.ch == nil {
		return nil, nil, rdma.Errorf("ibv_get_cq_event", syscall.EINVAL)
	}
	return cq.ch.ch, &cq.st.armed, nil
}

// recvRun is the C description of rv.
func (e *perfEndpoint) recvRun(rv rdma.Receive) (*C.struct_pf_recv, error) {
	nqp := len(rv.SGEs)
	if nqp < 1 || nqp > len(e.qps) || rv.Iters < 1 {
		return nil, fmt.Errorf("receive of %d on %d of %d QPs", rv.Iters, nqp, len(e.qps))
	}
	r := &C.struct_pf_recv{
		nqp: C.int(nqp), len: C.uint32_t(rv.SGEs[0].Len), srq: e.cSRQ(),
		iters: C.int64_t(rv.Iters), rx_depth: C.int(rv.RxDepth), post_list: C.int(rv.PostList), idle_ms: timeoutMillis(rv.Idle),
	}
	for i, sge := range rv.SGEs {
		r.qp[i], r.addr[i], r.lkey[i] = e.qps[i].qp, C.uint64_t(sge.Addr), C.uint32_t(sge.LKey)
	}
	if rv.Events {
		ch, armed, err := e.sleepOn(e.recvCQ)
		if err != nil {
			return nil, err
		}
		r.ch, r.armed = ch, armed
	}
	return r, nil
}

func (e *perfEndpoint) Receive(rv rdma.Receive) (rdma.ReceiveResult, error) {
	r, err := e.recvRun(rv)
	if err != nil {
		return rdma.ReceiveResult{}, err
	}
	nqp := len(rv.SGEs)
	rc := C.pf_receive(e.recvCQ.cq, r)
	clk := tickClockOf(r.clk)
	res := rdma.ReceiveResult{Completed: uint64(r.done), First: clk.ns(int64(r.first)), Last: clk.ns(int64(r.last))}
	switch {
	case rc == 0:
		return res, nil
	case rc == -1:
		return res, &rdma.WCError{Status: rdma.WCStatus(r.bad_status), VendorErr: uint32(r.bad_vendor)}
	case rc == -2:
		return res, rdma.ErrTimeout
	case r.sleep_failed != 0:
		return res, rdma.Errorf("ibv_get_cq_event", syscall.Errno(-3-rc))
	case rc == -4:
		return res, fmt.Errorf("a completion for QP %d of %d", uint64(r.bad_wr_id), nqp)
	}
	return res, rdma.Errorf("ibv_post_recv", syscall.Errno(-3-rc))
}

func (e *perfEndpoint) SendPingPong(p rdma.SendPingPong) error {
	if p.Iters < 1 || len(p.Posted) < p.Iters {
		return fmt.Errorf("send_lat of %d with %d stamp slots", p.Iters, len(p.Posted))
	}
	l := C.struct_pf_lat{
		saddr: C.uint64_t(p.Local.Addr), raddr: C.uint64_t(p.Recv.Addr), slen: C.uint32_t(p.Local.Len),
		rlen: C.uint32_t(p.Recv.Len), lkey: C.uint32_t(p.Local.LKey), iters: C.int64_t(p.Iters),
		rx_depth: C.int(p.RxDepth), client: cBool(p.Client), send_inline: cBool(p.Inline), idle_ms: timeoutMillis(p.Idle), srq: e.cSRQ(),
		qkey: C.uint32_t(e.qkey),
	}
	ah, rqpn := e.udPeer(0)
	if e.ahs != nil && ah == nil {
		return errors.New("UD QP 0 has no peer: ToRTR first")
	}
	l.ah, l.rqpn = ah, C.uint32_t(rqpn)
	rc := C.pf_send_lat(e.qp.qp, e.sendCQ.cq, e.recvCQ.cq, &l, (*C.int64_t)(unsafe.Pointer(&p.Posted[0])))
	return latLoopEnd(rc, l.clk, p.Posted[:p.Iters], [2]string{"receive", "send"}[l.step&1], l.at, l.bad_status, l.bad_vendor)
}

// latLoopEnd ends a latency loop: with rc 0 it turns the stamps of
// posted into nanoseconds; otherwise it says what rc means, naming the
// step that failed and its number at (from 0) of len(posted).
func latLoopEnd(rc C.int, clk C.struct_pf_clock, posted []int64, step string, at C.int64_t, status, vendor C.uint32_t) error {
	if rc == 0 {
		tickClockOf(clk).toNs(posted)
		return nil
	}
	where := fmt.Sprintf("%s %d of %d", step, at+1, len(posted))
	switch rc {
	case -1:
		return fmt.Errorf("%s: %w", where, &rdma.WCError{Status: rdma.WCStatus(status), VendorErr: uint32(vendor)})
	case -2:
		return fmt.Errorf("%s: %w", where, rdma.ErrTimeout)
	}
	return fmt.Errorf("%s: %w", where, rdma.Errorf("ibv_post_send", syscall.Errno(-3-rc)))
}

func (e *perfEndpoint) RequestPingPong(p rdma.RequestPingPong) error {
	if p.Iters < 1 || len(p.Posted) < p.Iters {
		return fmt.Errorf("%d requests with %d stamp slots", p.Iters, len(p.Posted))
	}
	q := C.struct_pf_req{
		laddr: C.uint64_t(p.Local.Addr), llen: C.uint32_t(p.Local.Len), lkey: C.uint32_t(p.Local.LKey),
		raddr: C.uint64_t(p.RemoteAddr), rkey: C.uint32_t(p.RKey), opcode: C.int(p.Op),
		idle_ms: timeoutMillis(p.Idle), iters: C.int64_t(p.Iters),
	}
	rc := C.pf_request_lat(e.qp.qp, e.sendCQ.cq, &q, (*C.int64_t)(unsafe.Pointer(&p.Posted[0])))
	return latLoopEnd(rc, q.clk, p.Posted[:p.Iters], "request", q.at, q.bad_status, q.bad_vendor)
}

func (e *perfEndpoint) WritePingPong(p rdma.WritePingPong) error {
	if p.Iters < 1 || len(p.Posted) < p.Iters {
		return fmt.Errorf("write_lat of %d with %d stamp slots", p.Iters, len(p.Posted))
	}
	if p.PollOff < 0 || p.PollOff >= len(e.buf.bytes) {
		return fmt.Errorf("wait at %d outside a %d-byte buffer", p.PollOff, len(e.buf.bytes))
	}
	if p.Local.Len < 1 {
		return errors.New("write_lat of an empty message")
	}
	w := C.struct_pf_wlat{
		laddr: C.uint64_t(p.Local.Addr), llen: C.uint32_t(p.Local.Len), lkey: C.uint32_t(p.Local.LKey),
		raddr: C.uint64_t(p.RemoteAddr), rkey: C.uint32_t(p.RKey),
		poll:  (*C.uint8_t)(unsafe.Add(e.buf.p, p.PollOff)),
		iters: C.int64_t(p.Iters), client: cBool(p.Client), send_inline: cBool(p.Inline), idle_ms: timeoutMillis(p.Idle),
	}
	rc := C.pf_write_lat(e.qp.qp, e.sendCQ.cq, &w, (*C.int64_t)(unsafe.Pointer(&p.Posted[0])))
	return latLoopEnd(rc, w.clk, p.Posted[:p.Iters], [2]string{"waiting for the peer's write", "write"}[w.step&1], w.at, w.bad_status, w.bad_vendor)
}

func (e *perfEndpoint) WaitByte(off int, want byte, timeout time.Duration, yield bool) error {
	if off < 0 || off >= len(e.buf.bytes) {
		return fmt.Errorf("wait at %d outside a %d-byte buffer", off, len(e.buf.bytes))
	}
	p := (*C.uint8_t)(unsafe.Add(e.buf.p, off))
	if rc := C.pf_spin_byte(p, C.uint8_t(want), timeoutMillis(timeout), cBool(yield)); rc != 0 {
		return rdma.ErrTimeout
	}
	return nil
}

func tickClockOf(c C.struct_pf_clock) tickClock {
	return tickClock{ns0: int64(c.ns0), ticks0: int64(c.ticks0), perTick: float64(c.per_tick)}
}

// Close releases in reverse order; parts never made are skipped.
func (e *perfEndpoint) Close() error {
	var err error
	for _, qp := range e.qps {
		err = errors.Join(err, asRDMAError("ibv_destroy_qp", qp.Close()))
	}
	for _, ah := range e.ahs {
		err = errors.Join(err, asRDMAError("ibv_destroy_ah", ah.Close()))
	}
	err = errors.Join(err, asRDMAError("ibv_destroy_srq", e.srq.Close()))
	for _, mr := range e.mrs {
		err = errors.Join(err, asRDMAError("ibv_dereg_mr", mr.Close()))
	}
	e.buf.Close()
	err = errors.Join(err, asRDMAError("ibv_destroy_cq", e.sendCQ.Close()), asRDMAError("ibv_destroy_cq", e.recvCQ.Close()),
		asRDMAError("ibv_destroy_comp_channel", e.sendCh.Close()), asRDMAError("ibv_destroy_comp_channel", e.recvCh.Close()),
		asRDMAError("ibv_dealloc_pd", e.pd.Close()))
	return err
}
