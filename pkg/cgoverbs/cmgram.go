package cgoverbs

/*
#include <stdlib.h>
#include <sys/socket.h>
#include "cmgram.h"
*/
import "C"

import (
	"net/netip"
	"syscall"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

var (
	_ rdma.PortSpaceChannel = (*EventChannel)(nil)
	_ rdma.DatagramID       = (*CMID)(nil)
	_ rdma.QKeyQP           = cmQP{}
	_ rdma.ReplyPoller      = cmCQ{}
)

// CreateIDIn creates an id in port space ps whose events arrive on ec.
func (ec *EventChannel) CreateIDIn(ps rdma.PortSpace) (rdma.CMID, error) {
	var id *C.struct_rdma_cm_id
	if rc := C.cmg_create_id(ec.ch, &id, C.int(ps)); rc != 0 {
		return nil, cmError("rdma_create_id", rc)
	}
	return ec.lookup(id), nil
}

// CreateTypedQP has the CM create a QP of type t for the id; nil pd and
// CQs let librdmacm make its defaults.
func (id *CMID) CreateTypedQP(pd rdma.PD, send, recv rdma.CQ, cap rdma.QPCap, t rdma.QPType, blockSelfMcast bool) (rdma.QP, error) {
	var p *C.struct_ibv_pd
	var sq, rq *C.struct_ibv_cq
	if pd != nil || send != nil || recv != nil {
		own, s, r, err := ownVerbs("rdma_create_qp", pd, send, recv)
		if err != nil {
			return nil, err
		}
		p, sq, rq = own.pd, s.cq, r.cq
	}
	c := C.struct_ibv_qp_cap{
		max_send_wr: C.uint32_t(cap.MaxSendWR), max_recv_wr: C.uint32_t(cap.MaxRecvWR),
		max_send_sge: C.uint32_t(cap.MaxSendSGE), max_recv_sge: C.uint32_t(cap.MaxRecvSGE),
		max_inline_data: C.uint32_t(cap.MaxInlineData),
	}
	if rc := C.cmg_create_qp(id.id, p, sq, rq, &c, cBool(cap.SigAll), C.int(t), cBool(blockSelfMcast)); rc != 0 {
		return nil, cmError("rdma_create_qp", rc)
	}
	return cmQP{&QP{qp: id.id.qp, cm: id}}, nil
}

// groupArgs is a multicast address as cmgram.c takes it.
func groupArgs(group netip.Addr) (C.int, [16]byte, C.uint32_t, error) {
	ap, err := toCMAddr(netip.AddrPortFrom(group, 0))
	if err != nil {
		return 0, [16]byte{}, 0, err
	}
	var ip [16]byte
	for i := range ip {
		ip[i] = byte(ap.ip[i])
	}
	return ap.family, ip, ap.scope, nil
}

// JoinMulticast joins group as a full member (send-only when sendOnly).
func (id *CMID) JoinMulticast(group netip.Addr, sendOnly bool) error {
	fam, ip, scope, err := groupArgs(group)
	if err != nil {
		return err
	}
	if rc := C.cmg_join(id.id, fam, (*C.uint8_t)(unsafe.Pointer(&ip[0])), scope, cBool(sendOnly)); rc != 0 {
		return cmError("rdma_join_multicast", rc)
	}
	return nil
}

// LeaveMulticast leaves group.
func (id *CMID) LeaveMulticast(group netip.Addr) error {
	fam, ip, scope, err := groupArgs(group)
	if err != nil {
		return err
	}
	if rc := C.cmg_leave(id.id, fam, (*C.uint8_t)(unsafe.Pointer(&ip[0])), scope); rc != 0 {
		return cmError("rdma_leave_multicast", rc)
	}
	return nil
}

// Reject refuses a connect request.
func (id *CMID) Reject() error {
	if rc := C.cmg_reject(id.id); rc != 0 {
		return cmError("rdma_reject", rc)
	}
	return nil
}

// SetTOS sets the id's type of service (RDMA_OPTION_ID_TOS).
func (id *CMID) SetTOS(tos uint8) error {
	if rc := C.cmg_set_u8_option(id.id, C.RDMA_OPTION_ID_TOS, C.uint8_t(tos)); rc != 0 {
		return cmError("rdma_set_option", rc)
	}
	return nil
}

// SetAckTimeout sets the connection's ACK timeout (RDMA_OPTION_ID_ACK_TIMEOUT).
func (id *CMID) SetAckTimeout(exp uint8) error {
	if rc := C.cmg_set_u8_option(id.id, C.RDMA_OPTION_ID_ACK_TIMEOUT, C.uint8_t(exp)); rc != 0 {
		return cmError("rdma_set_option", rc)
	}
	return nil
}

// ActiveMTU is the active MTU of the id's port in bytes.
func (id *CMID) ActiveMTU() (int, error) {
	var mtu C.int
	if rc := C.cmg_active_mtu(id.id, &mtu); rc != 0 {
		return 0, cmError("ibv_query_port", rc)
	}
	return int(mtu), nil
}

// PortNum is the device port the id is bound to.
func (id *CMID) PortNum() uint8 { return uint8(id.id.port_num) }

func ahAttrFrom(a *C.struct_cmg_ah) rdma.AHAttr {
	out := rdma.AHAttr{DLID: uint16(a.dlid), SL: uint8(a.sl), Port: uint8(a.port)}
	if a.is_global != 0 {
		g := &rdma.GRH{SGIDIndex: uint8(a.sgid_index), HopLimit: uint8(a.hop_limit)}
		for i := range g.DGID {
			g.DGID[i] = byte(a.dgid[i])
		}
		out.GRH = g
	}
	return out
}

// QKey is the QP's Q_Key (ibv_query_qp).
func (qp cmQP) QKey() (uint32, error) {
	var k C.uint32_t
	if rc := C.cmg_qkey(qp.qp, &k); rc != 0 {
		return 0, cmError("ibv_query_qp", rc)
	}
	return uint32(k), nil
}

// PollReply polls the CQ and, when want is set and something completed,
// makes an AH back to the first completion's sender (ibv_create_ah_from_wc).
func (cq cmCQ) PollReply(wc []rdma.WC, want bool, pd rdma.PD, grh rdma.MR, port uint8) (int, rdma.AH, error) {
	var raw [16]C.struct_cmg_wc
	max := len(wc)
	if max > len(raw) {
		max = len(raw)
	}
	var p *C.struct_ibv_pd
	var buf unsafe.Pointer
	if want {
		own, ok := pd.(cmPD)
		m, ok2 := grh.(cmMR)
		if !ok || !ok2 {
			return 0, nil, &rdma.Error{Op: "ibv_create_ah_from_wc", Errno: syscall.EINVAL}
		}
		p, buf = own.pd, m.buf.p
	}
	var ah *C.struct_ibv_ah
	var ahErr C.int
	n := C.cmg_poll_reply(cq.cq, &raw[0], C.int(max), cBool(want), p, buf, C.uint8_t(port), &ah, &ahErr)
	if n < 0 {
		return 0, nil, cmError("ibv_poll_cq", n)
	}
	if ahErr != 0 {
		return 0, nil, cmError("ibv_create_ah_from_wc", ahErr)
	}
	for i := 0; i < int(n); i++ {
		r := &raw[i]
		wc[i] = rdma.WC{WRID: uint64(r.wr_id), Status: rdma.WCStatus(r.status), Opcode: rdma.WCOpcode(r.opcode),
			ByteLen: uint32(r.byte_len), Imm: uint32(r.imm), HasImm: r.has_imm != 0}
	}
	var out rdma.AH
	if ah != nil {
		out = &AH{ah: ah}
	}
	return int(n), out, nil
}
