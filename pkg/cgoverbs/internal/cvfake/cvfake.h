// A provider that fails: a verbs context whose data-path operations
// answer as a test says, so that the C helpers' error paths can be driven
// without an RDMA device.
#ifndef RDMACTL_CVFAKE_H
#define RDMACTL_CVFAKE_H

#include <infiniband/verbs.h>
#include "cq.h"

// struct cvf is one context with a QP, a CQ (and its cv_cq_state), an
// SRQ, an AH and a completion channel on it. Every post returns post_rc
// and every poll poll_rc, each after setting errno to err; arming the CQ
// returns notify_rc. The channel's fd is -1: reading it fails with EBADF,
// waiting on it never ends before the timeout.
struct cvf {
	struct ibv_context ctx; // first: the operations find the rest from it
	struct ibv_qp qp;
	struct ibv_cq cq;
	struct ibv_srq srq;
	struct ibv_ah ah;
	struct ibv_comp_channel ch;
	struct cv_cq_state st;
	int post_rc, poll_rc, notify_rc, err;
};

struct cvf *cvf_new(int post_rc, int poll_rc, int notify_rc, int err);

#endif
