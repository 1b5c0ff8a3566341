#include <endian.h>
#include <errno.h>
#include <string.h>
#include "cverrno.h"
#include "qp.h"

// created turns what an ibv_create_* call returned into 0 or -errno; a
// provider that failed without setting errno reports EINVAL.
static int created(const void *p)
{
	if (p)
		return 0;
	return errno > 0 ? -errno : -EINVAL;
}

struct ibv_mr *cv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	return ibv_reg_mr(pd, addr, len, access);
}

int cv_create_qp(struct ibv_pd *pd, int type, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
		 struct ibv_srq *srq, const struct ibv_qp_cap *cap, int sig_all, struct ibv_qp **out)
{
	struct ibv_qp_init_attr a;
	memset(&a, 0, sizeof a);
	a.send_cq = send_cq;
	a.recv_cq = recv_cq;
	a.srq = srq;
	a.cap = *cap;
	a.qp_type = type;
	a.sq_sig_all = sig_all;
	errno = 0;
	*out = ibv_create_qp(pd, &a);
	return created(*out);
}

int cv_qp_init(struct ibv_qp *qp, uint8_t port, uint16_t pkey_index, unsigned access, uint32_t qkey)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = pkey_index;
	a.port_num = port;
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return cv_neg(ibv_modify_qp(qp, &a, mask));
}

static void ah_attr(struct ibv_ah_attr *o, const struct cv_ah *a)
{
	memset(o, 0, sizeof *o);
	o->dlid = a->dlid;
	o->sl = a->sl;
	o->port_num = a->port;
	if (a->is_global) {
		o->is_global = 1;
		memcpy(o->grh.dgid.raw, a->dgid, 16);
		o->grh.sgid_index = a->sgid_index;
		o->grh.hop_limit = a->hop_limit;
		o->grh.traffic_class = a->traffic_class;
		o->grh.flow_label = a->flow_label;
	}
}

int cv_qp_rtr(struct ibv_qp *qp, const struct cv_rtr *r)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = r->path_mtu;
		a.dest_qp_num = r->dest_qpn;
		a.rq_psn = r->rq_psn;
		ah_attr(&a.ah_attr, &r->ah);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	}
	if (qp->qp_type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = r->max_dest_rd_atomic;
		a.min_rnr_timer = r->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return cv_neg(ibv_modify_qp(qp, &a, mask));
}

int cv_qp_rts(struct ibv_qp *qp, const struct cv_rts *r)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = r->sq_psn;
	if (qp->qp_type == IBV_QPT_RC) {
		a.timeout = r->timeout;
		a.retry_cnt = r->retry_cnt;
		a.rnr_retry = r->rnr_retry;
		a.max_rd_atomic = r->max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return cv_neg(ibv_modify_qp(qp, &a, mask));
}

int cv_qp_to_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_ERR;
	return cv_neg(ibv_modify_qp(qp, &a, IBV_QP_STATE));
}

int cv_query_qp(struct ibv_qp *qp, int *state, struct ibv_qp_cap *cap)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;
	memset(&a, 0, sizeof a);
	memset(&init, 0, sizeof init);
	int rc = cv_neg(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CAP, &init));
	if (rc)
		return rc;
	*state = a.qp_state;
	*cap = init.cap;
	return 0;
}

int cv_create_ah(struct ibv_pd *pd, const struct cv_ah *a, struct ibv_ah **out)
{
	struct ibv_ah_attr attr;
	ah_attr(&attr, a);
	errno = 0;
	*out = ibv_create_ah(pd, &attr);
	return created(*out);
}

int cv_create_srq(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge, struct ibv_srq **out)
{
	struct ibv_srq_init_attr a;
	memset(&a, 0, sizeof a);
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	errno = 0;
	*out = ibv_create_srq(pd, &a);
	return created(*out);
}

int cv_post_send(struct ibv_qp *qp, const struct cv_send *s)
{
	struct ibv_sge one = {.addr = s->addr, .length = s->len, .lkey = s->lkey};
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = s->id;
	wr.opcode = s->opcode;
	wr.send_flags = s->flags;
	if (s->nsge > 0) {
		wr.sg_list = (struct ibv_sge *)s->sgl;
		wr.num_sge = s->nsge;
	} else if (s->len || s->addr) {
		wr.sg_list = &one;
		wr.num_sge = 1;
	}
	wr.imm_data = htobe32(s->imm);
	switch (s->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr.wr.atomic.remote_addr = s->raddr;
		wr.wr.atomic.rkey = s->rkey;
		wr.wr.atomic.compare_add = s->compare_add;
		wr.wr.atomic.swap = s->swap;
		break;
	default:
		if (s->ah) {
			wr.wr.ud.ah = s->ah;
			wr.wr.ud.remote_qpn = s->rqpn;
			wr.wr.ud.remote_qkey = s->rqkey;
		} else {
			wr.wr.rdma.remote_addr = s->raddr;
			wr.wr.rdma.rkey = s->rkey;
		}
	}
	return cv_neg(ibv_post_send(qp, &wr, &bad));
}

int cv_post_send_n(struct ibv_qp *qp, const struct cv_send *s, int n, int *posted)
{
	for (*posted = 0; *posted < n; ++*posted) {
		int rc = cv_post_send(qp, s);
		if (rc)
			return rc;
	}
	return 0;
}

// cv_post_send1 is the common send of one entry, its arguments passed by
// value so that a Go caller allocates nothing.
int cv_post_send1(struct ibv_qp *qp, uint64_t id, int opcode, unsigned flags, uint64_t addr,
		  uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	struct cv_send s = {.id = id, .opcode = opcode, .flags = flags, .addr = addr, .len = len,
			    .lkey = lkey, .raddr = raddr, .rkey = rkey, .imm = imm};
	return cv_post_send(qp, &s);
}

int cv_post_recv(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t id, const struct ibv_sge *sgl, int nsge)
{
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = (struct ibv_sge *)sgl, .num_sge = nsge}, *bad;
	if (srq)
		return cv_neg(ibv_post_srq_recv(srq, &wr, &bad));
	return cv_neg(ibv_post_recv(qp, &wr, &bad));
}

int cv_post_recv1(struct ibv_qp *qp, uint64_t id, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	return cv_post_recv(qp, NULL, id, &sge, 1);
}
