package rdmatest

import (
	"encoding/binary"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// QP is a queue pair on the fabric.
type QP struct {
	fabric *Fabric
	dev    *Device
	num    uint32
	typ    rdma.QPType
	state  rdma.QPState
	send   *CQ
	recv   *CQ
	srq    *SRQ
	cap    rdma.QPCap
	init   rdma.InitAttr
	rtr    rdma.RTRAttr
	rts    rdma.RTSAttr
	// readied: the QP reached RTS; byCM: rdma_cm made it.
	readied, byCM bool
	posted        []recvWR
	// pending are RC sends that arrived before a receive was posted.
	pending []inbound
	// id is the rdma_cm id the QP serves, if any.
	id             *CMID
	blockSelfMcast bool
}

type recvWR struct {
	id   uint64
	sges []rdma.SGE
}

// inbound is a SEND or WRITE_WITH_IMM waiting for a receive, and the
// sender's work request to complete once it is taken.
type inbound struct {
	from     *QP
	wrID     uint64
	signaled bool
	op       rdma.WROpcode
	data     []byte
	imm      uint32
	hasImm   bool
}

// Num is the QP number, unique on the fabric.
func (q *QP) Num() uint32 { return q.num }

// State is the QP's state.
func (q *QP) State() rdma.QPState {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	return q.state
}

func (q *QP) modify(from, to rdma.QPState) error {
	f := q.fabric
	if err := f.callOn(q.dev, "ibv_modify_qp"); err != nil {
		return err
	}
	if q.state != from {
		return rdma.Errorf("ibv_modify_qp", syscall.EINVAL)
	}
	q.state = to
	return nil
}

func (q *QP) ToInit(a rdma.InitAttr) error {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	if a.Port != 1 {
		return rdma.Errorf("ibv_modify_qp", syscall.EINVAL)
	}
	q.init = a
	return q.modify(rdma.QPStateReset, rdma.QPStateInit)
}

func (q *QP) ToRTR(a rdma.RTRAttr) error {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	if q.typ != rdma.QPTypeUD {
		if err := q.dev.checkRoute(a.Port, a.GRH); err != nil || a.PathMTU == 0 {
			if err := q.fabric.callOn(q.dev, "ibv_modify_qp"); err != nil {
				return err
			}
			return rdma.Errorf("ibv_modify_qp", syscall.EINVAL)
		}
	}
	q.rtr = a
	return q.modify(rdma.QPStateInit, rdma.QPStateRTR)
}

func (q *QP) ToRTS(a rdma.RTSAttr) error {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	if err := q.modify(rdma.QPStateRTR, rdma.QPStateRTS); err != nil {
		return err
	}
	q.rts, q.readied = a, true
	return nil
}

// ToError moves the QP to ERR and flushes its receives.
func (q *QP) ToError() error {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	if err := q.fabric.callOn(q.dev, "ibv_modify_qp"); err != nil {
		return err
	}
	q.flush()
	return nil
}

// flush moves the QP to ERR and completes its receives with
// WR_FLUSH_ERR; f.mu held.
func (q *QP) flush() {
	q.state = rdma.QPStateErr
	for _, r := range q.posted {
		q.recv.push(rdma.WC{WRID: r.id, Status: rdma.WCWRFlushErr, Opcode: rdma.WCRecv, QPNum: q.num})
	}
	q.posted = nil
}

// ready moves a QP in INIT through RTR to RTS towards QP dest, as the CM
// does with a connection's attributes; f.mu held.
func (q *QP) ready(dest uint32) error {
	if err := q.modify(rdma.QPStateInit, rdma.QPStateRTR); err != nil {
		return err
	}
	q.rtr = rdma.RTRAttr{PathMTU: q.dev.cfg.ActiveMTU, DestQPN: dest, Port: 1}
	if err := q.modify(rdma.QPStateRTR, rdma.QPStateRTS); err != nil {
		return err
	}
	q.readied = true
	return nil
}

// QKey is the Q_Key the QP was given (rdma.QKeyQP).
func (q *QP) QKey() (uint32, error) {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	if err := q.fabric.callOn(q.dev, "ibv_query_qp"); err != nil {
		return 0, err
	}
	return q.init.QKey, nil
}

func (q *QP) Query() (rdma.QPInfo, error) {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	if err := q.fabric.callOn(q.dev, "ibv_query_qp"); err != nil {
		return rdma.QPInfo{}, err
	}
	return rdma.QPInfo{State: q.state, Cap: q.cap}, nil
}

func (q *QP) Close() error {
	q.fabric.mu.Lock()
	defer q.fabric.mu.Unlock()
	if err := q.fabric.callOn(q.dev, "ibv_destroy_qp"); err != nil {
		return err
	}
	delete(q.fabric.qps, q.num)
	if q.srq != nil {
		for i, o := range q.srq.qps {
			if o == q {
				q.srq.qps = append(q.srq.qps[:i], q.srq.qps[i+1:]...)
				break
			}
		}
	}
	return nil
}

func (q *QP) PostRecv(id uint64, sge rdma.SGE) error {
	return q.PostRecvSGL(id, []rdma.SGE{sge})
}

func (q *QP) PostRecvSGL(id uint64, sges []rdma.SGE) error {
	f := q.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callOn(q.dev, "ibv_post_recv"); err != nil {
		return err
	}
	if q.srq != nil || q.state == rdma.QPStateReset || len(sges) == 0 || uint32(len(sges)) > max(q.cap.MaxRecvSGE, 1) {
		return rdma.Errorf("ibv_post_recv", syscall.EINVAL)
	}
	if uint32(len(q.posted)) >= q.cap.MaxRecvWR {
		return rdma.Errorf("ibv_post_recv", syscall.ENOMEM)
	}
	q.posted = append(q.posted, recvWR{id: id, sges: append([]rdma.SGE(nil), sges...)})
	q.deliverPending()
	return nil
}

// takeRecv is the next receive of q (from its SRQ if it has one); f.mu held.
func (q *QP) takeRecv() (recvWR, bool) {
	list := &q.posted
	if q.srq != nil {
		list = &q.srq.posted
	}
	if len(*list) == 0 {
		return recvWR{}, false
	}
	r := (*list)[0]
	*list = (*list)[1:]
	return r, true
}

// deliverPending hands waiting RC sends to receives now posted; f.mu held.
func (q *QP) deliverPending() {
	for len(q.pending) > 0 {
		r, ok := q.takeRecv()
		if !ok {
			return
		}
		in := q.pending[0]
		q.pending = q.pending[1:]
		q.complete(r, in)
	}
}

// complete lands in in receive r and completes both sides; f.mu held.
func (q *QP) complete(r recvWR, in inbound) {
	wc := rdma.WC{WRID: r.id, Opcode: rdma.WCRecv, Imm: in.imm, HasImm: in.hasImm, QPNum: q.num}
	senderStatus := rdma.WCSuccess
	if in.op == rdma.WRRDMAWriteWithImm {
		wc.Opcode, wc.ByteLen = rdma.WCRecvRDMAWithImm, uint32(len(in.data))
	} else {
		data := in.data
		if q.typ == rdma.QPTypeUD {
			data = append(make([]byte, rdma.GRHSize), data...)
		}
		wc.ByteLen = uint32(len(data))
		if !q.fabric.scatter(r.sges, data) {
			wc.Status, senderStatus = rdma.WCLocLenErr, rdma.WCRemInvReqErr
		}
	}
	q.recv.push(wc)
	if in.from.typ == rdma.QPTypeRC && senderStatus != rdma.WCSuccess {
		in.from.fail(in.wrID, rdma.WCSend, senderStatus)
		return
	}
	if in.from.typ == rdma.QPTypeRC {
		in.from.sent(in.wrID, in.signaled, sendOpcode(in.op), 0)
	}
}

// scatter writes data over sges; false when they are too short or not
// writable memory; f.mu held.
func (f *Fabric) scatter(sges []rdma.SGE, data []byte) bool {
	total := 0
	for _, s := range sges {
		total += int(s.Len)
	}
	if total < len(data) {
		return false
	}
	for _, s := range sges {
		if len(data) == 0 {
			break
		}
		n := min(int(s.Len), len(data))
		dst, ok := f.span(s.LKey, s.Addr, uint32(n), rdma.AccessLocalWrite)
		if !ok {
			return false
		}
		copy(dst, data[:n])
		data = data[n:]
	}
	return true
}

// gather reads the data of sges; false when they are not registered; f.mu held.
func (f *Fabric) gather(sges []rdma.SGE) ([]byte, bool) {
	var out []byte
	for _, s := range sges {
		if s.Len == 0 {
			continue
		}
		src, ok := f.span(s.LKey, s.Addr, s.Len, 0)
		if !ok {
			return nil, false
		}
		out = append(out, src...)
	}
	return out, true
}

func sendOpcode(op rdma.WROpcode) rdma.WCOpcode {
	switch op {
	case rdma.WRRDMAWrite, rdma.WRRDMAWriteWithImm:
		return rdma.WCRDMAWrite
	case rdma.WRRDMARead:
		return rdma.WCRDMARead
	case rdma.WRAtomicCmpAndSwp:
		return rdma.WCCompSwap
	case rdma.WRAtomicFetchAndAdd:
		return rdma.WCFetchAdd
	}
	return rdma.WCSend
}

// sent completes a send work request that succeeded; f.mu held.
func (q *QP) sent(id uint64, signaled bool, op rdma.WCOpcode, n uint32) {
	if signaled || q.cap.SigAll {
		q.send.push(rdma.WC{WRID: id, Opcode: op, ByteLen: n, QPNum: q.num})
	}
}

// fail completes a send work request with status and, as a real QP does,
// moves the QP to ERR; f.mu held.
func (q *QP) fail(id uint64, op rdma.WCOpcode, status rdma.WCStatus) {
	q.send.push(rdma.WC{WRID: id, Opcode: op, Status: status, QPNum: q.num})
	q.state = rdma.QPStateErr
}

var _ rdma.SendRepeater = (*QP)(nil)

// PostSendN posts wr n times, stopping at the first refusal.
func (q *QP) PostSendN(wr rdma.SendWR, n int) (int, error) {
	for i := 0; i < n; i++ {
		if err := q.PostSend(wr); err != nil {
			return i, err
		}
	}
	return n, nil
}

func (q *QP) PostSend(wr rdma.SendWR) error {
	f := q.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callOn(q.dev, "ibv_post_send"); err != nil {
		return err
	}
	failed := q.state == rdma.QPStateErr
	if err := q.postSend(wr); err != nil || failed || q.state == rdma.QPStateErr {
		return err
	}
	f.posts[wr.Op]++
	if wr.Signaled || q.cap.SigAll {
		f.signaled++
	}
	if f.endAfter > 0 && wr.Op == f.endOp {
		if f.endAfter--; f.endAfter == 0 {
			q.end()
		}
	}
	return nil
}

// end ends the QP's connection as its process's death would; f.mu held.
func (q *QP) end() {
	q.flush()
	if q.id != nil && q.id.connected {
		q.id.disconnect()
	}
}

// postSend does a send work request's work; f.mu held.
func (q *QP) postSend(wr rdma.SendWR) error {
	f := q.fabric
	sges := wr.SGL
	if len(sges) == 0 && (wr.Local != rdma.SGE{}) {
		sges = []rdma.SGE{wr.Local}
	}
	if q.state != rdma.QPStateRTS && q.state != rdma.QPStateErr || uint32(len(sges)) > max(q.cap.MaxSendSGE, 1) ||
		(q.typ == rdma.QPTypeUD) != (wr.UD != nil) {
		return rdma.Errorf("ibv_post_send", syscall.EINVAL)
	}
	op := sendOpcode(wr.Op)
	signaled := wr.Signaled || q.cap.SigAll
	if q.state == rdma.QPStateErr {
		q.send.push(rdma.WC{WRID: wr.ID, Opcode: op, Status: rdma.WCWRFlushErr, QPNum: q.num})
		return nil
	}
	if len(f.failWC) > 0 {
		status := f.failWC[0]
		f.failWC = f.failWC[1:]
		q.fail(wr.ID, op, status)
		return nil
	}
	data, ok := f.gather(sges)
	if !ok {
		q.fail(wr.ID, op, rdma.WCLocProtErr)
		return nil
	}
	if wr.Inline {
		if uint32(len(data)) > q.cap.MaxInlineData {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		f.inlined++
	}
	var peer *QP
	if wr.UD != nil {
		ah, ok := wr.UD.AH.(*AH)
		if !ok {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		if wr.UD.QPN == mcastQPN {
			q.multicast(ah, wr, data, signaled)
			return nil
		}
		peer = f.qps[wr.UD.QPN]
		if peer == nil || peer.typ != rdma.QPTypeUD || peer.init.QKey != wr.UD.QKey || len(data) > mtuBytes(q.dev.cfg.ActiveMTU) {
			q.sent(wr.ID, signaled, op, 0) // lost on the wire
			return nil
		}
	} else {
		peer = f.qps[q.rtr.DestQPN]
		if peer == nil || peer.typ != q.typ || peer.state != rdma.QPStateRTR && peer.state != rdma.QPStateRTS {
			if q.typ == rdma.QPTypeRC {
				q.fail(wr.ID, op, rdma.WCRetryExcErr)
			} else {
				q.sent(wr.ID, signaled, op, 0)
			}
			return nil
		}
	}
	switch wr.Op {
	case rdma.WRSend, rdma.WRSendWithImm:
		if f.drop > 0 {
			f.drop--
			if q.typ != rdma.QPTypeRC {
				q.sent(wr.ID, signaled, op, 0)
			}
			return nil
		}
		if f.corrupt > 0 && len(data) > 0 {
			f.corrupt--
			data[0] = ^data[0]
		}
		q.arrive(peer, inbound{from: q, wrID: wr.ID, signaled: signaled, op: wr.Op, data: data,
			imm: wr.Imm, hasImm: wr.Op == rdma.WRSendWithImm})
	case rdma.WRRDMAWrite, rdma.WRRDMAWriteWithImm:
		if q.typ == rdma.QPTypeUD {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		dst, ok := f.span(wr.RKey, wr.RemoteAddr, uint32(len(data)), rdma.AccessRemoteWrite)
		if !ok {
			q.remoteAccess(wr.ID, op, signaled)
			return nil
		}
		if f.corruptWrites > 0 && len(data) > 0 {
			f.corruptWrites--
			data[0] = ^data[0]
		}
		copy(dst, data)
		if wr.Op == rdma.WRRDMAWrite {
			q.sent(wr.ID, signaled, op, 0)
			return nil
		}
		q.arrive(peer, inbound{from: q, wrID: wr.ID, signaled: signaled, op: wr.Op, data: data, imm: wr.Imm, hasImm: true})
	case rdma.WRRDMARead:
		if q.typ != rdma.QPTypeRC {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		n := uint32(len(data))
		src, ok := f.span(wr.RKey, wr.RemoteAddr, n, rdma.AccessRemoteRead)
		if !ok {
			q.remoteAccess(wr.ID, op, signaled)
			return nil
		}
		if !f.scatter(sges, append([]byte(nil), src...)) {
			q.fail(wr.ID, op, rdma.WCLocProtErr)
			return nil
		}
		q.sent(wr.ID, signaled, op, n)
	case rdma.WRAtomicCmpAndSwp, rdma.WRAtomicFetchAndAdd:
		if q.typ != rdma.QPTypeRC || len(data) != 8 || wr.RemoteAddr%8 != 0 {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		dst, ok := f.span(wr.RKey, wr.RemoteAddr, 8, rdma.AccessRemoteAtomic)
		if !ok {
			q.remoteAccess(wr.ID, op, signaled)
			return nil
		}
		orig := binary.LittleEndian.Uint64(dst)
		switch {
		case wr.Op == rdma.WRAtomicFetchAndAdd:
			binary.LittleEndian.PutUint64(dst, orig+wr.CompareAdd)
		case orig == wr.CompareAdd:
			binary.LittleEndian.PutUint64(dst, wr.Swap)
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], orig)
		f.scatter(sges, b[:])
		q.sent(wr.ID, signaled, op, 8)
	default:
		return rdma.Errorf("ibv_post_send", syscall.EINVAL)
	}
	return nil
}

// multicast hands a UD send to every QP attached to the group ah
// addresses whose Q_Key matches (not the sender's own when it blocks
// them); f.mu held.
func (q *QP) multicast(ah *AH, wr rdma.SendWR, data []byte, signaled bool) {
	op := sendOpcode(wr.Op)
	if ah.Attr.GRH == nil || len(data) > mtuBytes(q.dev.cfg.ActiveMTU) {
		q.sent(wr.ID, signaled, op, 0)
		return
	}
	for _, m := range q.fabric.groups[ah.Attr.GRH.DGID] {
		if (m == q && q.blockSelfMcast) || m.init.QKey != wr.UD.QKey || m.state < rdma.QPStateRTR || m.state == rdma.QPStateErr {
			continue
		}
		if r, ok := m.takeRecv(); ok {
			m.complete(r, inbound{from: q, wrID: wr.ID, op: wr.Op, data: data, imm: wr.Imm, hasImm: wr.Op == rdma.WRSendWithImm})
		}
	}
	q.sent(wr.ID, signaled, op, 0)
}

// remoteAccess is a request the peer's memory refused: an error on RC,
// silence on UC; f.mu held.
func (q *QP) remoteAccess(id uint64, op rdma.WCOpcode, signaled bool) {
	if q.typ == rdma.QPTypeRC {
		q.fail(id, op, rdma.WCRemAccessErr)
		return
	}
	q.sent(id, signaled, op, 0)
}

// arrive hands a message to peer's next receive: an RC sender waits for
// one, UC and UD messages without one are lost; f.mu held.
func (q *QP) arrive(peer *QP, in inbound) {
	if r, ok := peer.takeRecv(); ok {
		peer.complete(r, in)
		if q.typ != rdma.QPTypeRC {
			q.sent(in.wrID, in.signaled, sendOpcode(in.op), 0)
		}
		return
	}
	if q.typ == rdma.QPTypeRC {
		peer.pending = append(peer.pending, in)
		return
	}
	q.sent(in.wrID, in.signaled, sendOpcode(in.op), 0)
}

func mtuBytes(m rdma.MTU) int { return 128 << m }

var _ rdma.QP = (*QP)(nil)
