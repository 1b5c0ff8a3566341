package cgoverbs

/*
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "cverrno.h"
#include "qp.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// PD is a protection domain.
type PD struct {
	pd *C.struct_ibv_pd
}

// AllocPD allocates a protection domain on the device.
func (c *Context) AllocPD() (*PD, error) {
	pd, err := C.ibv_alloc_pd(c.c)
	if pd == nil {
		return nil, errnoErr("ibv_alloc_pd", err, syscall.ENOMEM)
	}
	return &PD{pd: pd}, nil
}

// Close deallocates the protection domain.
func (pd *PD) Close() error {
	if pd == nil || pd.pd == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_dealloc_pd(pd.pd))
	pd.pd = nil
	return callErr("ibv_dealloc_pd", rc)
}

// Buffer is page-aligned, zeroed C memory: memory regions must not point
// into the Go heap, which the collector may move or reuse.
type Buffer struct {
	p     unsafe.Pointer
	bytes []byte
	// mapping is the whole mapping of a mapped buffer (huge pages, a
	// file), which Close unmaps; nil for allocated memory
	mapping []byte
}

// AllocBuffer allocates n bytes of C memory.
func AllocBuffer(n int) (*Buffer, error) {
	if n <= 0 {
		return nil, fmt.Errorf("buffer size %d: must be positive", n)
	}
	var p unsafe.Pointer
	if rc := C.posix_memalign(&p, C.size_t(syscall.Getpagesize()), C.size_t(n)); rc != 0 {
		return nil, rdma.Errorf(fmt.Sprintf("posix_memalign(%d)", n), syscall.Errno(rc))
	}
	C.memset(p, 0, C.size_t(n))
	return &Buffer{p: p, bytes: unsafe.Slice((*byte)(p), n)}, nil
}

// Bytes is the buffer's memory; valid until Close.
func (b *Buffer) Bytes() []byte { return b.bytes }

// Addr is the buffer's address as the verbs see it.
func (b *Buffer) Addr() uint64 { return uint64(uintptr(b.p)) }

// Close frees the memory; deregister every MR on it first.
func (b *Buffer) Close() {
	if b == nil || b.p == nil {
		return
	}
	if b.mapping != nil {
		unix.Munmap(b.mapping)
	} else {
		C.free(b.p)
	}
	b.p, b.bytes, b.mapping = nil, nil, nil
}

// Access is a set of IBV_ACCESS_* flags for memory registration.
type Access = rdma.Access

const (
	AccessLocalWrite  Access = C.IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite Access = C.IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead  Access = C.IBV_ACCESS_REMOTE_READ
)

// MR is a registered memory region covering a whole Buffer.
type MR struct {
	mr         *C.struct_ibv_mr
	addr       uint64
	n          int
	lkey, rkey uint32
}

// RegMR registers b with the given remote/local access rights.
func (pd *PD) RegMR(b *Buffer, access Access) (*MR, error) {
	return pd.RegMRAt(b, 0, len(b.bytes), access)
}

// RegMRAt registers n bytes of b from offset off, a region of its own
// within the buffer.
func (pd *PD) RegMRAt(b *Buffer, off, n int, access Access) (*MR, error) {
	if off < 0 || n <= 0 || off+n > len(b.bytes) {
		return nil, rdma.Errorf(fmt.Sprintf("ibv_reg_mr(%d bytes at %d of %d)", n, off, len(b.bytes)), syscall.EINVAL)
	}
	mr, err := C.cv_reg_mr(pd.pd, unsafe.Add(b.p, off), C.size_t(n), C.int(access))
	if mr == nil {
		return nil, errnoErr(fmt.Sprintf("ibv_reg_mr(%d bytes)", n), err, syscall.ENOMEM)
	}
	return &MR{mr: mr, addr: b.Addr() + uint64(off), n: n, lkey: uint32(mr.lkey), rkey: uint32(mr.rkey)}, nil
}

func (m *MR) LKey() uint32 { return m.lkey }
func (m *MR) RKey() uint32 { return m.rkey }
func (m *MR) Addr() uint64 { return m.addr }
func (m *MR) Len() int     { return m.n }

// SGE returns a scatter/gather entry for the first n bytes of the region.
func (m *MR) SGE(n uint32) SGE { return SGE{Addr: m.addr, Len: n, LKey: m.lkey} }

// Close deregisters the region.
func (m *MR) Close() error {
	if m == nil || m.mr == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_dereg_mr(m.mr))
	m.mr = nil
	return callErr("ibv_dereg_mr", rc)
}

// QPCap sizes a queue pair. SigAll makes every send signalled.
type QPCap struct {
	MaxSendWR, MaxRecvWR, MaxSendSGE, MaxRecvSGE, MaxInlineData uint32
	SigAll                                                      bool
}

// QP is a queue pair of any type.
type QP struct {
	qp *C.struct_ibv_qp
	// cm is set when rdma_cm created the QP, which must then destroy it.
	cm *CMID
	// srq is set when the QP's receives come from a shared queue.
	srq *SRQ
}

// CreateRCQP creates an RC QP in RESET state.
func (pd *PD) CreateRCQP(send, recv *CQ, cap QPCap) (*QP, error) {
	return pd.CreateQP(rdma.QPTypeRC, send, recv, nil, cap)
}

// CreateQP creates a QP of type t in RESET state; srq may be nil.
func (pd *PD) CreateQP(t rdma.QPType, send, recv *CQ, srq *SRQ, cap QPCap) (*QP, error) {
	c := C.struct_ibv_qp_cap{
		max_send_wr: C.uint32_t(cap.MaxSendWR), max_recv_wr: C.uint32_t(cap.MaxRecvWR),
		max_send_sge: C.uint32_t(cap.MaxSendSGE), max_recv_sge: C.uint32_t(cap.MaxRecvSGE),
		max_inline_data: C.uint32_t(cap.MaxInlineData),
	}
	var csrq *C.struct_ibv_srq
	if srq != nil {
		csrq = srq.srq
	}
	var qp *C.struct_ibv_qp
	rc := C.cv_create_qp(pd.pd, C.int(t), send.cq, recv.cq, csrq, &c, cBool(cap.SigAll), &qp)
	if rc != 0 {
		return nil, callErr("ibv_create_qp", rc)
	}
	return &QP{qp: qp, srq: srq}, nil
}

// initAttr is the creation record of an RC QP with these capabilities,
// used by the CM's CreateQP.
func (cap QPCap) initAttr(send, recv *CQ) C.struct_ibv_qp_init_attr {
	var a C.struct_ibv_qp_init_attr
	a.send_cq, a.recv_cq = send.cq, recv.cq
	a.cap.max_send_wr = C.uint32_t(cap.MaxSendWR)
	a.cap.max_recv_wr = C.uint32_t(cap.MaxRecvWR)
	a.cap.max_send_sge = C.uint32_t(cap.MaxSendSGE)
	a.cap.max_recv_sge = C.uint32_t(cap.MaxRecvSGE)
	a.cap.max_inline_data = C.uint32_t(cap.MaxInlineData)
	a.qp_type = C.IBV_QPT_RC
	a.sq_sig_all = cBool(cap.SigAll)
	return a
}

// Num is the QP number.
func (qp *QP) Num() uint32 { return uint32(qp.qp.qp_num) }

// ToError moves the QP to the error state, flushing its outstanding work.
func (qp *QP) ToError() error {
	return callErr("ibv_modify_qp(ERR)", C.cv_qp_to_error(qp.qp))
}

// Close destroys the QP.
func (qp *QP) Close() error {
	if qp == nil || qp.qp == nil {
		return nil
	}
	if qp.cm != nil {
		qp.cm.destroyQP()
		qp.qp, qp.cm = nil, nil
		return nil
	}
	rc := C.cv_neg(C.ibv_destroy_qp(qp.qp))
	qp.qp = nil
	return callErr("ibv_destroy_qp", rc)
}

// SGE is one scatter/gather entry; its layout is struct ibv_sge's.
type SGE = rdma.SGE

// Opcode is a send work request opcode (enum ibv_wr_opcode).
type Opcode = rdma.WROpcode

const (
	OpRDMAWrite        Opcode = C.IBV_WR_RDMA_WRITE
	OpRDMAWriteWithImm Opcode = C.IBV_WR_RDMA_WRITE_WITH_IMM
	OpSend             Opcode = C.IBV_WR_SEND
	OpSendWithImm      Opcode = C.IBV_WR_SEND_WITH_IMM
	OpRDMARead         Opcode = C.IBV_WR_RDMA_READ
	OpAtomicCmpAndSwp  Opcode = C.IBV_WR_ATOMIC_CMP_AND_SWP
	OpAtomicFetchAdd   Opcode = C.IBV_WR_ATOMIC_FETCH_AND_ADD
)

// SendWR is one send work request.
type SendWR = rdma.SendWR

// The enums and layouts pkg/rdma restates must be libibverbs'.
var (
	_ = [1]int{}[int(rdma.WRAtomicCmpAndSwp)-int(C.IBV_WR_ATOMIC_CMP_AND_SWP)]
	_ = [1]int{}[int(rdma.WRAtomicFetchAndAdd)-int(C.IBV_WR_ATOMIC_FETCH_AND_ADD)]
	_ = [1]int{}[int(rdma.WRSendWithImm)-int(C.IBV_WR_SEND_WITH_IMM)]
	_ = [1]int{}[int(rdma.WRRDMAWriteWithImm)-int(C.IBV_WR_RDMA_WRITE_WITH_IMM)]
	_ = [1]int{}[int(rdma.QPTypeUD)-int(C.IBV_QPT_UD)]
	_ = [1]int{}[int(rdma.QPTypeUC)-int(C.IBV_QPT_UC)]
	_ = [1]int{}[int(rdma.QPTypeRC)-int(C.IBV_QPT_RC)]
	_ = [1]int{}[int(rdma.AccessRemoteAtomic)-int(C.IBV_ACCESS_REMOTE_ATOMIC)]
	_ = [1]int{}[int(rdma.WCCompSwap)-int(C.IBV_WC_COMP_SWAP)]
	_ = [1]int{}[int(rdma.WCFetchAdd)-int(C.IBV_WC_FETCH_ADD)]
	_ = [1]int{}[int(rdma.WCRecvRDMAWithImm)-int(C.IBV_WC_RECV_RDMA_WITH_IMM)]
	_ = [1]int{}[int(rdma.QPStateErr)-int(C.IBV_QPS_ERR)]
	_ = [1]int{}[unsafe.Sizeof(rdma.SGE{})-unsafe.Sizeof(C.struct_ibv_sge{})]
	_ = [1]int{}[unsafe.Offsetof(rdma.SGE{}.LKey)-unsafe.Offsetof(C.struct_ibv_sge{}.lkey)]
)

// PostSend posts wr to the send queue. A request with one entry, not for
// a UD peer and not an atomic, is one cgo call with no allocation.
func (qp *QP) PostSend(wr SendWR) error {
	atomic := wr.Op == OpAtomicCmpAndSwp || wr.Op == OpAtomicFetchAdd
	if len(wr.SGL) == 0 && wr.UD == nil && !atomic {
		rc := C.cv_post_send1(qp.qp, C.uint64_t(wr.ID), C.int(wr.Op), sendFlags(wr),
			C.uint64_t(wr.Local.Addr), C.uint32_t(wr.Local.Len), C.uint32_t(wr.Local.LKey),
			C.uint64_t(wr.RemoteAddr), C.uint32_t(wr.RKey), C.uint32_t(wr.Imm))
		return callErr("ibv_post_send", rc)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	s, err := sendOf(wr, &pin)
	if err != nil {
		return err
	}
	return callErr("ibv_post_send", C.cv_post_send(qp.qp, &s))
}

// PostSendN posts wr n times in one cgo call, as the C tools' post loops
// do: a post can be a system call (rxe rings its doorbell so), and a
// cgo call that long costs the runtime a hand-off of its P each time.
// It stops at the first refusal and says how many went in.
func (qp *QP) PostSendN(wr SendWR, n int) (int, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	s, err := sendOf(wr, &pin)
	if err != nil {
		return 0, err
	}
	var posted C.int
	rc := C.cv_post_send_n(qp.qp, &s, C.int(n), &posted)
	return int(posted), callErr("ibv_post_send", rc)
}

func sendFlags(wr SendWR) C.unsigned {
	var flags C.unsigned
	if wr.Signaled {
		flags |= C.IBV_SEND_SIGNALED
	}
	if wr.Inline {
		flags |= C.IBV_SEND_INLINE
	}
	return flags
}

// sendOf is wr as cv_post_send takes it. Its SGL is Go memory that s,
// itself Go memory, points to: cgo passes s only if that memory is
// pinned, by pin until the caller's call returned.
func sendOf(wr SendWR, pin *runtime.Pinner) (C.struct_cv_send, error) {
	s := C.struct_cv_send{
		id: C.uint64_t(wr.ID), opcode: C.int(wr.Op), flags: sendFlags(wr),
		addr: C.uint64_t(wr.Local.Addr), len: C.uint32_t(wr.Local.Len), lkey: C.uint32_t(wr.Local.LKey),
		raddr: C.uint64_t(wr.RemoteAddr), rkey: C.uint32_t(wr.RKey), imm: C.uint32_t(wr.Imm),
		compare_add: C.uint64_t(wr.CompareAdd), swap: C.uint64_t(wr.Swap),
	}
	if wr.UD != nil {
		ah, ok := wr.UD.AH.(*AH)
		if !ok || ah.ah == nil {
			return s, rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		s.ah, s.rqpn, s.rqkey = ah.ah, C.uint32_t(wr.UD.QPN), C.uint32_t(wr.UD.QKey)
	}
	if len(wr.SGL) > 0 {
		pin.Pin(&wr.SGL[0])
		s.sgl, s.nsge = cSGL(wr.SGL), C.int(len(wr.SGL))
	}
	return s, nil
}

// cSGL is sges as the struct ibv_sge array they are laid out as.
func cSGL(sges []SGE) *C.struct_ibv_sge {
	return (*C.struct_ibv_sge)(unsafe.Pointer(&sges[0]))
}

// PostRecv posts one receive buffer.
func (qp *QP) PostRecv(id uint64, sge SGE) error {
	rc := C.cv_post_recv1(qp.qp, C.uint64_t(id), C.uint64_t(sge.Addr), C.uint32_t(sge.Len), C.uint32_t(sge.LKey))
	return callErr("ibv_post_recv", rc)
}

// PostRecvSGL posts one receive scattered over sges.
func (qp *QP) PostRecvSGL(id uint64, sges []SGE) error {
	if len(sges) == 0 {
		return rdma.Errorf("ibv_post_recv", syscall.EINVAL)
	}
	return callErr("ibv_post_recv", C.cv_post_recv(qp.qp, nil, C.uint64_t(id), cSGL(sges), C.int(len(sges))))
}

// Init moves a RESET QP to INIT with the values its type takes.
func (qp *QP) Init(a rdma.InitAttr) error {
	rc := C.cv_qp_init(qp.qp, C.uint8_t(a.Port), C.uint16_t(a.PKeyIndex), C.unsigned(a.Access), C.uint32_t(a.QKey))
	return callErr("ibv_modify_qp(INIT)", rc)
}

// ReadyToReceive moves an INIT QP to RTR with the values its type takes.
func (qp *QP) ReadyToReceive(a rdma.RTRAttr) error {
	r := C.struct_cv_rtr{
		path_mtu: C.int(a.PathMTU), dest_qpn: C.uint32_t(a.DestQPN), rq_psn: C.uint32_t(a.RQPSN),
		max_dest_rd_atomic: C.uint8_t(a.MaxDestRdAtomic), min_rnr_timer: C.uint8_t(a.MinRNRTimer),
		ah: cAH(rdma.AHAttr{DLID: a.DLID, SL: a.SL, Port: a.Port, GRH: a.GRH}),
	}
	return callErr("ibv_modify_qp(RTR)", C.cv_qp_rtr(qp.qp, &r))
}

// ReadyToSend moves an RTR QP to RTS with the values its type takes.
func (qp *QP) ReadyToSend(a rdma.RTSAttr) error {
	r := C.struct_cv_rts{
		sq_psn: C.uint32_t(a.SQPSN), timeout: C.uint8_t(a.Timeout), retry_cnt: C.uint8_t(a.RetryCnt),
		rnr_retry: C.uint8_t(a.RNRRetry), max_rd_atomic: C.uint8_t(a.MaxRdAtomic),
	}
	return callErr("ibv_modify_qp(RTS)", C.cv_qp_rts(qp.qp, &r))
}

// Query is the QP's state and capabilities (ibv_query_qp).
func (qp *QP) Query() (rdma.QPInfo, error) {
	var state C.int
	var c C.struct_ibv_qp_cap
	if err := callErr("ibv_query_qp", C.cv_query_qp(qp.qp, &state, &c)); err != nil {
		return rdma.QPInfo{}, err
	}
	return rdma.QPInfo{State: rdma.QPState(state), Cap: rdma.QPCap{
		MaxSendWR: uint32(c.max_send_wr), MaxRecvWR: uint32(c.max_recv_wr),
		MaxSendSGE: uint32(c.max_send_sge), MaxRecvSGE: uint32(c.max_recv_sge),
		MaxInlineData: uint32(c.max_inline_data),
	}}, nil
}

func cAH(a rdma.AHAttr) C.struct_cv_ah {
	o := C.struct_cv_ah{dlid: C.uint16_t(a.DLID), sl: C.uint8_t(a.SL), port: C.uint8_t(a.Port)}
	if a.GRH != nil {
		o.is_global, o.sgid_index, o.hop_limit = 1, C.uint8_t(a.GRH.SGIDIndex), C.uint8_t(a.GRH.HopLimit)
		o.traffic_class, o.flow_label = C.uint8_t(a.GRH.TrafficClass), C.uint32_t(a.GRH.FlowLabel)
		for i, b := range a.GRH.DGID {
			o.dgid[i] = C.uint8_t(b)
		}
	}
	return o
}

// AH is an address handle (rdma.AH).
type AH struct {
	ah *C.struct_ibv_ah
}

// CreateAH makes an address handle for UD sends.
func (pd *PD) CreateAH(a rdma.AHAttr) (*AH, error) {
	attr := cAH(a)
	var ah *C.struct_ibv_ah
	if err := callErr("ibv_create_ah", C.cv_create_ah(pd.pd, &attr, &ah)); err != nil {
		return nil, err
	}
	return &AH{ah: ah}, nil
}

// Close destroys the address handle.
func (ah *AH) Close() error {
	if ah == nil || ah.ah == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_destroy_ah(ah.ah))
	ah.ah = nil
	return callErr("ibv_destroy_ah", rc)
}

// SRQ is a shared receive queue (rdma.SRQ).
type SRQ struct {
	srq *C.struct_ibv_srq
}

// CreateSRQ makes a shared receive queue.
func (pd *PD) CreateSRQ(a rdma.SRQAttr) (*SRQ, error) {
	var srq *C.struct_ibv_srq
	if err := callErr("ibv_create_srq", C.cv_create_srq(pd.pd, C.uint32_t(a.MaxWR), C.uint32_t(a.MaxSGE), &srq)); err != nil {
		return nil, err
	}
	return &SRQ{srq: srq}, nil
}

// PostRecv posts one receive scattered over sges.
func (s *SRQ) PostRecv(id uint64, sges ...SGE) error {
	if len(sges) == 0 {
		return rdma.Errorf("ibv_post_srq_recv", syscall.EINVAL)
	}
	return callErr("ibv_post_srq_recv", C.cv_post_recv(nil, s.srq, C.uint64_t(id), cSGL(sges), C.int(len(sges))))
}

// Close destroys the SRQ; destroy the QPs using it first.
func (s *SRQ) Close() error {
	if s == nil || s.srq == nil {
		return nil
	}
	rc := C.cv_neg(C.ibv_destroy_srq(s.srq))
	s.srq = nil
	return callErr("ibv_destroy_srq", rc)
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// callErr wraps what a C helper returned, 0 or -errno, as rdma.Error.
func callErr(op string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return rdma.Errorf(op, syscall.Errno(-rc))
}

// errnoErr wraps the errno a C call that returns a pointer left behind
// (cgo's second result) as rdma.Error; fallback only when it set none.
func errnoErr(op string, err error, fallback syscall.Errno) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 {
		errno = fallback
	}
	return rdma.Errorf(op, errno)
}
