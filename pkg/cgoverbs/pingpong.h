// The ibv_*_pingpong tools' measured loop in one call (pkg/rdma's
// PingPong), from the first sends to the last completion: no Go code runs
// between two round trips. Go stops it through pp_cancel.
#ifndef RDMACTL_PINGPONG_H
#define RDMACTL_PINGPONG_H

#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>
#include "cq.h"

// Why pp_loop returned; the order of rdma.PingPongStop.
enum {
	PP_DONE,
	PP_IDLE,
	PP_CANCELLED,
	PP_FAILED_STATUS,
	PP_UNKNOWN_WRID,
	PP_UNKNOWN_QPN,
	PP_RECVS_SHORT,
	PP_SEND_FAILED,
};

struct pp_run {
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch; // NULL: poll without sleeping
	struct cv_cq_state *st;
	struct ibv_qp **qps;
	int nqp;
	struct ibv_srq *srq; // NULL: receives go to qps[0]
	uint64_t send_addr, recv_addr;
	uint32_t send_len, send_lkey, recv_len, recv_lkey;
	int inline_send;
	struct ibv_ah *ah; // UD sends
	uint32_t rqpn, rqkey;
	uint64_t send_id, recv_id;
	int iters, rx_depth, client;
	int signal_every; // sends per signaled one with a single QP
	long yield_after; // empty polls in a row before each one yields
	int64_t *stamps; // NULL, or iters + 1 CLOCK_MONOTONIC ns
	int64_t began, ended; // CLOCK_MONOTONIC ns: first sends posted, done

	int sent, received, outstanding, posted;
	uint64_t *pending; // nqp: per QP, the wr ids it waits for
	// sends posted since the last signaled one, and how many the
	// signaled one in flight stands for
	int unsignaled, covering;

	int idle_ms; // the longest wait for a completion, -1: none
	int cancel; // set by pp_cancel
	pid_t sleeper; // the thread of a loop with a channel, while it runs
	int rc; // pp_loop_off's
	int stop;
	struct cv_wc wc;
	int polled;
};

// pp_loop_off is pp_loop(r) for runLoop: its result goes to r->rc.
void pp_loop_off(void *r);

// pp_loop runs r until it is done or fails, pp_cancel was called, or
// r->idle_ms passed without a completion (r->stop says which). Returns 0
// or -errno of a failed poll or wait.
int pp_loop(struct pp_run *r);

// pp_cancel, from any thread, stops r's loop: a polling loop at its next
// completion or within CV_POLLS_PER_CLOCK empty polls, one that sleeps on
// the channel once woken by the signal pp_cancel sends it. A signal that
// came between the loop's look at the flag and its sleep is lost: call
// pp_cancel again until the loop is out.
void pp_cancel(struct pp_run *r);

// How many times per idle bound a loop that sleeps on the channel wakes
// to look at it. Each wake-up costs the loop about a round trip, so there
// are none without a bound.
enum { PP_IDLE_LOOKS = 8 };

#endif
