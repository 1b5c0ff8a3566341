// cmtime's client, each step over all connections in one call, its
// events taken by a thread of its own as they come (rdma.CMTimer). A Go
// loop of one cgo call per rdma_cm call costs the runtime's hand-offs on
// every call, which cmtime's figures would then time.
#ifndef RDMACTL_CMTIMER_H
#define RDMACTL_CMTIMER_H

#include <pthread.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>
#include "cm.h"

// The steps, in the order of cmtime's table (rdma.CMStep).
enum { CT_CREATE_ID, CT_BIND, CT_RESOLVE_ADDR, CT_RESOLVE_ROUTE, CT_CREATE_QP, CT_CONNECT, CT_DISCONNECT, CT_DESTROY, CT_STEPS };

// ct_note is a call that failed (event 0, err -errno) or an error event
// (event its type, err its status), in the order they happened.
struct ct_note {
	int conn, event, err;
};

struct ct_conn {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	int failed, retries;
	int disconnected; // the peer ended the connection before our disconnect
	int64_t start_us, end_us; // this step's, gettimeofday's; 0 unset
};

struct ct {
	struct rdma_event_channel *ch;
	int stop_fd; // an eventfd that ends the event thread
	pthread_t thread;
	int thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int n;
	struct ct_conn *conns;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq, *recv_cq;
	// this step's: its arguments, what it started, what came
	int step, retries, resolve_ms;
	struct sockaddr_storage src, dst;
	int has_src;
	struct rdma_conn_param param;
	int started, done;
	int64_t last_end_us; // when the last operation of the step ended; 0 none
	int read_err; // -errno of a failed rdma_get_cm_event; the thread ended
	struct ct_note *notes;
	int nnotes, cap_notes;
};

// ct_open makes the channel, n connection slots and the event thread;
// 0 or -errno (ct_close frees what was made either way).
int ct_open(struct ct *t, int n);
// ct_step runs step on every connection that has not failed (CT_BIND and
// the resolve steps from src, when given, to dst); for the steps that end
// in an event it waits for them all, at most idle_ms between two (-1 for
// ever). Stamps each connection's span and the step's (*start_us,
// *end_us; end 0 when the wait timed out). Returns 0, -ETIMEDOUT, or
// -errno of the event thread's failed rdma_get_cm_event.
int ct_step(struct ct *t, int step, const struct cm_addr *src, const struct cm_addr *dst, int retries, int resolve_ms,
	    uint8_t retry_count, int idle_ms, int64_t *start_us, int64_t *end_us);
// ct_close ends the thread and destroys the QPs, ids, CQs, PD and channel.
void ct_close(struct ct *t);

#endif
