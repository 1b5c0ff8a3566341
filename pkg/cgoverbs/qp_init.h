// qp_init.h: the one QP RESET->INIT transition, whoever owns the QP (the
// RC demo's own QP, or a self-created QP under rdma_cm as rping -q does).
#ifndef RDMACTL_QP_INIT_H
#define RDMACTL_QP_INIT_H

#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>

// qp_to_init moves qp to INIT on port with pkey index 0 and the given
// remote access flags. Returns 0 or -errno (ibv_modify_qp returns errno).
static inline int qp_to_init(struct ibv_qp *qp, uint8_t port, unsigned access) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.pkey_index = 0;
	a.qp_access_flags = access;
	int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	return rc > 0 ? -rc : rc;
}

#endif
