// Completion queues: polling into a flat copy of the work completions,
// arming notification, and waiting on the completion channel (and one
// other fd) in one call. Every function returns a count or -errno.
#ifndef RDMACTL_CQ_H
#define RDMACTL_CQ_H

#include <stdint.h>
#include <infiniband/verbs.h>

// cv_wc is a flat copy of struct ibv_wc (whose immediate sits in an
// anonymous union cgo cannot name), with the immediate in host order.
struct cv_wc {
	uint64_t wr_id;
	uint32_t status, opcode, vendor_err, byte_len, imm, flags, qp_num;
};

enum { CV_WC_BATCH = 16 };

// cv_cq_state lives in C memory beside each CQ: the poll batch, whether a
// notification is requested, and the out-flag of cv_await.
struct cv_cq_state {
	int armed;
	int other_ready;
	int spin; // polls to try before arming and blocking
	struct ibv_wc raw[CV_WC_BATCH];
	struct cv_wc wc[CV_WC_BATCH];
};

int cv_poll(struct ibv_cq *cq, struct cv_cq_state *st, int max);
// cv_poll_count busy-polls cq, CV_COUNT_BATCH at a time as the rdma_cm
// tools do, until it has taken want completions (it may take a batch
// more, as they may) or slice_ms (-1: never) has passed; it returns how
// many it took. The completions are counted, not kept.
enum { CV_COUNT_BATCH = 8 };
int cv_poll_count(struct ibv_cq *cq, struct cv_cq_state *st, int want, int slice_ms);
int cv_arm_or_sleep(struct ibv_cq *cq, struct ibv_comp_channel *ch, int *armed);
int cv_ready_to_sleep(struct ibv_cq *cq, struct cv_cq_state *st, int max);
int cv_woken(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st, int max);
int cv_await(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st,
	     int max, int other_fd, int timeout_ms);

#endif
