package cgoverbs

/*
#include <string.h>
#include <infiniband/verbs.h>

static int rc_to_init(struct ibv_qp *qp, uint8_t port, unsigned access) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.pkey_index = 0;
	a.qp_access_flags = access;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int rc_to_rtr(struct ibv_qp *qp, int mtu, uint32_t dest_qpn, uint32_t rq_psn,
		     uint8_t max_dest_rd_atomic, uint8_t min_rnr_timer, uint16_t dlid, uint8_t port,
		     int grh, const uint8_t *dgid, uint8_t sgid_index, uint8_t hop_limit) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = max_dest_rd_atomic;
	a.min_rnr_timer = min_rnr_timer;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = port;
	if (grh) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
		a.ah_attr.grh.sgid_index = sgid_index;
		a.ah_attr.grh.hop_limit = hop_limit;
	}
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int rc_to_rts(struct ibv_qp *qp, uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry,
		     uint32_t sq_psn, uint8_t max_rd_atomic) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = max_rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// MTU is an IB path MTU (enum ibv_mtu).
type MTU int

const (
	MTU256  MTU = C.IBV_MTU_256
	MTU1024 MTU = C.IBV_MTU_1024
	MTU4096 MTU = C.IBV_MTU_4096
)

// GRH addresses the peer by GID; RoCE needs it.
type GRH struct {
	DGID      [16]byte // network order
	SGIDIndex uint8
	HopLimit  uint8
}

// RTRAttr are the values of an RC QP's INIT→RTR transition.
type RTRAttr struct {
	PathMTU         MTU
	DestQPN         uint32
	RQPSN           uint32
	MaxDestRdAtomic uint8
	MinRNRTimer     uint8
	DLID            uint16
	Port            uint8
	GRH             *GRH // nil: LID routing only
}

// RTSAttr are the values of an RC QP's RTR→RTS transition.
type RTSAttr struct {
	Timeout     uint8
	RetryCnt    uint8
	RNRRetry    uint8
	SQPSN       uint32
	MaxRdAtomic uint8
}

// ModifyToInit moves a RESET QP to INIT on port (P_Key index 0) with the
// given remote access rights.
func (qp *QP) ModifyToInit(port int, access Access) error {
	if rc := C.rc_to_init(qp.qp, C.uint8_t(port), C.unsigned(access)); rc != 0 {
		return fmt.Errorf("ibv_modify_qp(INIT): %w", syscall.Errno(rc))
	}
	return nil
}

// ModifyToRTR moves an INIT QP to RTR, connecting it to its peer.
func (qp *QP) ModifyToRTR(a RTRAttr) error {
	var grh C.int
	var dgid [16]byte
	var sgid, hop C.uint8_t
	if a.GRH != nil {
		grh, dgid, sgid, hop = 1, a.GRH.DGID, C.uint8_t(a.GRH.SGIDIndex), C.uint8_t(a.GRH.HopLimit)
	}
	rc := C.rc_to_rtr(qp.qp, C.int(a.PathMTU), C.uint32_t(a.DestQPN), C.uint32_t(a.RQPSN),
		C.uint8_t(a.MaxDestRdAtomic), C.uint8_t(a.MinRNRTimer), C.uint16_t(a.DLID), C.uint8_t(a.Port),
		grh, (*C.uint8_t)(unsafe.Pointer(&dgid[0])), sgid, hop)
	if rc != 0 {
		return fmt.Errorf("ibv_modify_qp(RTR): %w", syscall.Errno(rc))
	}
	return nil
}

// ModifyToRTS moves an RTR QP to RTS.
func (qp *QP) ModifyToRTS(a RTSAttr) error {
	rc := C.rc_to_rts(qp.qp, C.uint8_t(a.Timeout), C.uint8_t(a.RetryCnt), C.uint8_t(a.RNRRetry),
		C.uint32_t(a.SQPSN), C.uint8_t(a.MaxRdAtomic))
	if rc != 0 {
		return fmt.Errorf("ibv_modify_qp(RTS): %w", syscall.Errno(rc))
	}
	return nil
}
