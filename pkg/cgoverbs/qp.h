// Queue pairs of every type, address handles, shared receive queues and
// the posting of work requests. Every function returns 0 or -errno.
#ifndef RDMACTL_QP_H
#define RDMACTL_QP_H

#include <stdint.h>
#include <infiniband/verbs.h>

// cv_ah is an address: by LID, and by GID when is_global.
struct cv_ah {
	uint16_t dlid;
	uint8_t sl, port, is_global, sgid_index, hop_limit, traffic_class;
	uint32_t flow_label;
	uint8_t dgid[16];
};

// cv_rtr are the INIT->RTR values; a QP takes those its type uses.
struct cv_rtr {
	int path_mtu;
	uint32_t dest_qpn, rq_psn;
	uint8_t max_dest_rd_atomic, min_rnr_timer;
	struct cv_ah ah;
};

// cv_rts are the RTR->RTS values; a QP takes those its type uses.
struct cv_rts {
	uint32_t sq_psn;
	uint8_t timeout, retry_cnt, rnr_retry, max_rd_atomic;
};

// cv_send is a send work request. sgl, when nsge > 0, replaces the
// single entry (addr, len, lkey); ah, when set, makes it a UD send.
struct cv_send {
	uint64_t id;
	int opcode;
	unsigned flags;
	uint64_t addr;
	uint32_t len, lkey;
	const struct ibv_sge *sgl;
	int nsge;
	uint64_t raddr;
	uint32_t rkey, imm;
	uint64_t compare_add, swap;
	struct ibv_ah *ah;
	uint32_t rqpn, rqkey;
};

// ibv_reg_mr is a macro; cgo needs a function to call.
struct ibv_mr *cv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access);
int cv_create_qp(struct ibv_pd *pd, int type, struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
		 struct ibv_srq *srq, const struct ibv_qp_cap *cap, int sig_all, struct ibv_qp **out);
int cv_qp_init(struct ibv_qp *qp, uint8_t port, uint16_t pkey_index, unsigned access, uint32_t qkey);
int cv_qp_rtr(struct ibv_qp *qp, const struct cv_rtr *r);
int cv_qp_rts(struct ibv_qp *qp, const struct cv_rts *r);
int cv_qp_to_error(struct ibv_qp *qp);
int cv_query_qp(struct ibv_qp *qp, int *state, struct ibv_qp_cap *cap);
int cv_create_ah(struct ibv_pd *pd, const struct cv_ah *a, struct ibv_ah **out);
int cv_create_srq(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge, struct ibv_srq **out);
int cv_post_send(struct ibv_qp *qp, const struct cv_send *s);
// cv_post_send_n posts s n times, stopping at the first refusal: 0 or
// -errno, and how many went in *posted.
int cv_post_send_n(struct ibv_qp *qp, const struct cv_send *s, int n, int *posted);
int cv_post_send1(struct ibv_qp *qp, uint64_t id, int opcode, unsigned flags, uint64_t addr,
		  uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t imm);
int cv_post_recv(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t id, const struct ibv_sge *sgl, int nsge);
int cv_post_recv1(struct ibv_qp *qp, uint64_t id, uint64_t addr, uint32_t len, uint32_t lkey);

#endif
