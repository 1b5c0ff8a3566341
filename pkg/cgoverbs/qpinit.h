// The INIT transition of the rdma_cm QPs rdmactl creates itself: P_Key
// index 0 on port, with the given remote access rights.
#ifndef RDMACTL_QPINIT_H
#define RDMACTL_QPINIT_H

#include <string.h>
#include <infiniband/verbs.h>
#include "cverrno.h"

// cv_qp_to_init moves a RESET QP to INIT; 0 or -errno.
static inline int cv_qp_to_init(struct ibv_qp *qp, uint8_t port, unsigned access)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.pkey_index = 0;
	a.qp_access_flags = access;
	return cv_neg(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
}

#endif
