// The rdma_cm calls of connected ids: addresses, the event channel and its
// events, connecting, and the QPs a connection runs on. Every function
// returns 0 or -errno unless it says otherwise.
#ifndef RDMACTL_CM_H
#define RDMACTL_CM_H

#include <stdint.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "cmgram.h"

// cm_addr is an IP socket address in a form Go can fill without building
// sockaddrs itself.
struct cm_addr {
	int family; // 0 = none
	uint8_t ip[16];
	uint16_t port;
	uint32_t scope;
};

enum { CM_PRIVATE_DATA_MAX = 256 };

// cm_event_copy is what Go reads of an event: the UD parameter when the
// id's port space carries datagrams, and the private data.
struct cm_event_copy {
	int type, status;
	struct rdma_cm_id *id, *listen_id;
	int is_ud, private_len;
	uint32_t qp_num, qkey;
	struct cmg_ah ah;
	uint8_t resp_res, init_depth, retry, rnr_retry;
	uint8_t private_data[CM_PRIVATE_DATA_MAX];
};

// cm_to_sockaddr fills ss with a; returns its length.
socklen_t cm_to_sockaddr(const struct cm_addr *a, struct sockaddr_storage *ss);
int cm_resolve_addr(struct rdma_cm_id *id, const struct cm_addr *src, const struct cm_addr *dst, int timeout_ms);
int cm_bind_addr(struct rdma_cm_id *id, const struct cm_addr *a);
// cm_lookup resolves a host name the way getaddrinfo(name, NULL, NULL)
// does and keeps the first answer. Returns 0, a (negative) getaddrinfo
// EAI_* code (getaddrinfo reports no errno), or 1 for a family that is
// neither IPv4 nor IPv6.
int cm_lookup(const char *name, struct cm_addr *out);

int cm_create_channel(struct rdma_event_channel **out);
int cm_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **out);
int cm_destroy_id(struct rdma_cm_id *id);
int cm_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch);
int cm_resolve_route(struct rdma_cm_id *id, int timeout_ms);
int cm_listen(struct rdma_cm_id *id, int backlog);
int cm_establish(struct rdma_cm_id *id);
int cm_disconnect(struct rdma_cm_id *id);
int cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr);

// cm_wait_readable waits up to timeout_ms (-1 = forever) for fd to become
// readable. A signal does not extend the wait: after EINTR it polls again
// for what is left. Returns 0, -ETIMEDOUT or -errno.
int cm_wait_readable(int fd, int timeout_ms);
// cm_get_event waits up to timeout_ms (-1 = forever) for one CM event,
// copies what callers need and acknowledges it at once.
// Returns 0, -ETIMEDOUT or -errno.
int cm_get_event(struct rdma_event_channel *ch, int timeout_ms, struct cm_event_copy *out);

// cm_connect calls rdma_accept when accept, else rdma_connect, with the
// given connection parameters when with_param, else with none.
int cm_connect(struct rdma_cm_id *id, int with_param, uint8_t resp, uint8_t init,
	       uint8_t retry, uint8_t rnr, uint32_t qpn, int accept);
// cm_init_own_qp moves a QP the program created itself to INIT on the
// cm_id's port, as the CM does for one it created (no remote access).
int cm_init_own_qp(struct rdma_cm_id *id, struct ibv_qp *qp);
// cm_ready_own_qp walks a self-created QP through INIT, RTR and RTS with
// the attributes rdma_cm computed for the connection, min_rnr_timer in
// RTR and rnr_retry in RTS unless they are negative. *failed_step says
// which call failed: 0 rdma_init_qp_attr, 1 ibv_modify_qp.
int cm_ready_own_qp(struct rdma_cm_id *id, struct ibv_qp *qp, int min_rnr_timer, int rnr_retry,
		    int *failed_step);

// cm_peer copies the id's peer address (rdma_get_peer_addr) into ip/port;
// it returns the address family, 0 when the id has no IP peer.
int cm_peer(struct rdma_cm_id *id, uint8_t *ip, uint16_t *port);

#endif
