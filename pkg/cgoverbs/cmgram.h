// The rdma_cm calls of UD connections and multicast groups, and the reply
// address of a datagram. Each returns 0 or -errno (cmg_poll_reply:
// the number of completions; a failed AH is *ah_err).
#ifndef RDMACTL_CMGRAM_H
#define RDMACTL_CMGRAM_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

// cmg_ah is struct ibv_ah_attr flattened for Go.
struct cmg_ah {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint16_t dlid;
	uint8_t sl, port, is_global, sgid_index, hop_limit, traffic_class, static_rate, src_path_bits;
};

struct cmg_wc {
	uint64_t wr_id;
	uint32_t status, opcode, byte_len, imm, has_imm;
};

void cmg_ah_from(const struct ibv_ah_attr *a, struct cmg_ah *out);

int cmg_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **out, int ps);
int cmg_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *send, struct ibv_cq *recv,
		  const struct ibv_qp_cap *cap, int sig_all, int qp_type, int block_self_mcast);
int cmg_join(struct rdma_cm_id *id, int family, const uint8_t *ip, uint32_t scope, int send_only);
int cmg_leave(struct rdma_cm_id *id, int family, const uint8_t *ip, uint32_t scope);
int cmg_reject(struct rdma_cm_id *id);
int cmg_set_u8_option(struct rdma_cm_id *id, int name, uint8_t v);
int cmg_active_mtu(struct rdma_cm_id *id, int *mtu);
int cmg_qkey(struct ibv_qp *qp, uint32_t *out);
int cmg_poll_reply(struct ibv_cq *cq, struct cmg_wc *out, int max, int want, struct ibv_pd *pd, void *grh,
		   uint8_t port, struct ibv_ah **ah, int *ah_err);

#endif
