package cgoverbs

/*
#include <string.h>
#include <infiniband/verbs.h>
#include "cverrno.h"
#include "qpinit.h"

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
	return cv_neg(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
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
	return cv_neg(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
}
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// ModifyToInit moves a RESET QP to INIT on port (P_Key index 0) with the
// given remote access rights.
func (qp *QP) ModifyToInit(port uint8, access Access) error {
	return callErr("ibv_modify_qp(INIT)", C.cv_qp_to_init(qp.qp, C.uint8_t(port), C.unsigned(access)))
}

// ModifyToRTR moves an INIT QP to RTR, connecting it to its peer.
func (qp *QP) ModifyToRTR(a rdma.RTRAttr) error {
	var grh C.int
	var dgid rdma.GID
	var sgid, hop C.uint8_t
	if a.GRH != nil {
		grh, dgid, sgid, hop = 1, a.GRH.DGID, C.uint8_t(a.GRH.SGIDIndex), C.uint8_t(a.GRH.HopLimit)
	}
	rc := C.rc_to_rtr(qp.qp, C.int(a.PathMTU), C.uint32_t(a.DestQPN), C.uint32_t(a.RQPSN),
		C.uint8_t(a.MaxDestRdAtomic), C.uint8_t(a.MinRNRTimer), C.uint16_t(a.DLID), C.uint8_t(a.Port),
		grh, (*C.uint8_t)(unsafe.Pointer(&dgid[0])), sgid, hop)
	return callErr("ibv_modify_qp(RTR)", rc)
}

// ModifyToRTS moves an RTR QP to RTS.
func (qp *QP) ModifyToRTS(a rdma.RTSAttr) error {
	rc := C.rc_to_rts(qp.qp, C.uint8_t(a.Timeout), C.uint8_t(a.RetryCnt), C.uint8_t(a.RNRRetry),
		C.uint32_t(a.SQPSN), C.uint8_t(a.MaxRdAtomic))
	return callErr("ibv_modify_qp(RTS)", rc)
}

// SetupRC is the RC demo's resources on this device (rdma.RC): a PD, a
// one-entry CQ (there is never more than one completion outstanding) and
// a buffer of size bytes registered with access.
func (c *Context) SetupRC(size int, access rdma.Access) (rdma.RCEndpoint, error) {
	e := &rcEndpoint{}
	var err error
	if e.pd, err = c.AllocPD(); err != nil {
		return nil, &rdma.SetupError{Step: rdma.StepPD, Err: err}
	}
	if e.cq, err = c.CreateCQ(1, nil); err != nil {
		e.Close()
		return nil, &rdma.SetupError{Step: rdma.StepCQ, Err: err}
	}
	if e.buf, err = AllocBuffer(size); err != nil {
		e.Close()
		return nil, &rdma.SetupError{Step: rdma.StepBuffer, Err: err}
	}
	if e.mr, err = e.pd.RegMR(e.buf, access); err != nil {
		e.Close()
		return nil, &rdma.SetupError{Step: rdma.StepMR, Err: err}
	}
	return e, nil
}

// rcEndpoint is rdma.RCEndpoint over libibverbs.
type rcEndpoint struct {
	pd  *PD
	cq  *CQ
	buf *Buffer
	mr  *MR
	qp  *QP
	wc  [1]rdma.WC
}

func (e *rcEndpoint) Buffer() []byte { return e.buf.Bytes() }
func (e *rcEndpoint) Addr() uint64   { return e.buf.Addr() }
func (e *rcEndpoint) LKey() uint32   { return e.mr.LKey() }
func (e *rcEndpoint) RKey() uint32   { return e.mr.RKey() }
func (e *rcEndpoint) QPNum() uint32  { return e.qp.Num() }

func (e *rcEndpoint) CreateQP() error {
	qp, err := e.pd.CreateRCQP(e.cq, e.cq, QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, SigAll: true})
	e.qp = qp
	return err
}

func (e *rcEndpoint) ToInit(port uint8, access rdma.Access) error {
	return e.qp.ModifyToInit(port, access)
}
func (e *rcEndpoint) ToRTR(a rdma.RTRAttr) error { return e.qp.ModifyToRTR(a) }
func (e *rcEndpoint) ToRTS(a rdma.RTSAttr) error { return e.qp.ModifyToRTS(a) }

func (e *rcEndpoint) PostRecv(length uint32) error { return e.qp.PostRecv(0, e.mr.SGE(length)) }

func (e *rcEndpoint) PostSend(op rdma.SendOp, length uint32, remoteAddr uint64, rkey uint32) error {
	wr := SendWR{Local: e.mr.SGE(length), Signaled: true, RemoteAddr: remoteAddr, RKey: rkey}
	switch op {
	case rdma.OpSend:
		wr.Op, wr.RemoteAddr, wr.RKey = OpSend, 0, 0
	case rdma.OpRDMARead:
		wr.Op = OpRDMARead
	case rdma.OpRDMAWrite:
		wr.Op = OpRDMAWrite
	}
	return e.qp.PostSend(wr)
}

func (e *rcEndpoint) Poll() (rdma.WC, bool, error) {
	n, err := e.cq.Poll(e.wc[:])
	if err != nil || n == 0 {
		return rdma.WC{}, false, err
	}
	return e.wc[0], true, nil
}

// Close releases in the example's order: QP, MR, buffer, CQ, PD.
func (e *rcEndpoint) Close() error {
	var errs []error
	if e.qp != nil {
		errs = append(errs, e.qp.Close())
	}
	if e.mr != nil {
		errs = append(errs, e.mr.Close())
	}
	e.buf.Close()
	if e.cq != nil {
		errs = append(errs, e.cq.Close())
	}
	if e.pd != nil {
		errs = append(errs, e.pd.Close())
	}
	return errors.Join(errs...)
}
