// The data paths of rdmactl perf: each run is one call, so that no
// scheduler sits between a completion and the next post.
#ifndef RDMACTL_PERF_H
#define RDMACTL_PERF_H

#include <stdint.h>
#include <infiniband/verbs.h>

// PF_MAX_QPS is rdma.MaxPerfQPs.
enum { PF_MAX_QPS = 16 };

// pf_clock relates the loops' stamps (CPU counter ticks) to
// CLOCK_MONOTONIC: ns = ns0 + (tick - ticks0) * per_tick. A stamp of 0
// is one the loop never wrote.
struct pf_clock {
	int64_t ns0, ticks0;
	double per_tick;
};

// pf_run describes one bandwidth run (rdma.Stream) and receives its end.
struct pf_run {
	int opcode, nqp;
	struct ibv_qp *qp[PF_MAX_QPS];
	uint64_t laddr[PF_MAX_QPS], raddr[PF_MAX_QPS];
	uint32_t rkey[PF_MAX_QPS];
	// UD: each QP's peer (its address handle and QP number), and the
	// Q_Key; ah[q] NULL on connected QPs
	struct ibv_ah *ah[PF_MAX_QPS];
	uint32_t rqpn[PF_MAX_QPS], qkey;
	uint32_t len, lkey[PF_MAX_QPS];
	int64_t iters;      // per QP; 0 with duration_ns
	int64_t duration_ns, margin_ns;
	int tx_depth, cq_mod, post_list, idle_ms;
	int send_inline; // IBV_SEND_INLINE on every request
	// perftest's software rate limiter: bursts of burst requests over all
	// QPs, one burst begun per gap_ns at most; gap_ns 0 posts unpaced
	int burst;
	int64_t gap_ns;
	// timed runs, in: each QP's requests that a previous run left after
	// its last signalled one, maybe still in flight; out: this run's
	int64_t tail[PF_MAX_QPS];
	int continues; // rdma.Stream.Continues
	// -e: sleep on ch for the CQ's completion events (armed: whether one
	// is asked for, the CQ's state across runs); ch NULL polls. Out:
	// sleep_failed when the -3 - errno was the sleep's.
	struct ibv_comp_channel *ch;
	int *armed;
	int sleep_failed;
	// out: the -3 - ENOMEM was malloc's, of the receive batch of -b
	int alloc_failed;
	// send_bw -b: the messages to take meanwhile on recv_cq, as
	// pf_receive does (NULL: none); hold posts nothing before the first
	// (and a timed run's time starts then). A timed run takes messages
	// without count (recv->iters is overwritten) and counts the sends
	// and receives of its window in done.
	struct pf_recv *recv;
	struct ibv_cq *recv_cq;
	int hold;
	// out; first, last, ended and the stamps in ticks of clk (ended: a
	// counted run with recv, when its loop ended)
	int64_t done, first, last, ended;
	uint32_t bad_status, bad_vendor;
	struct pf_clock clk;
};

// pf_lat describes one busy-polling send_lat run (rdma.SendPingPong).
struct pf_lat {
	uint64_t saddr, raddr;
	uint32_t slen, rlen, lkey;
	int64_t iters;
	int rx_depth, client, idle_ms;
	int send_inline; // IBV_SEND_INLINE on every SEND
	struct ibv_srq *srq; // where receives go when not NULL
	// UD: the peer's address handle, QP number and Q_Key; ah NULL on a
	// connected QP
	struct ibv_ah *ah;
	uint32_t rqpn, qkey;
	// out: the failed step (0 receive, 1 send) and its completion; the
	// stamps in ticks of clk
	int64_t at;
	int step;
	uint32_t bad_status, bad_vendor;
	struct pf_clock clk;
};

// pf_req describes one read_lat or atomic_lat run (rdma.RequestPingPong).
struct pf_req {
	uint64_t laddr, raddr;
	uint32_t llen, lkey, rkey;
	int opcode, idle_ms;
	int64_t iters;
	// out: the failed request and its completion; the stamps in ticks of
	// clk
	int64_t at;
	uint32_t bad_status, bad_vendor;
	struct pf_clock clk;
};

// pf_wlat describes one busy-polling write_lat run (rdma.WritePingPong).
struct pf_wlat {
	uint64_t laddr, raddr;
	uint32_t llen, lkey, rkey;
	const volatile uint8_t *poll; // where the peer's count lands
	int64_t iters;
	int client, send_inline, idle_ms;
	// out: the failed step (0 the wait for the peer's write, 1 our
	// write's completion) and its completion; the stamps in ticks of clk
	int64_t at;
	int step;
	uint32_t bad_status, bad_vendor;
	struct pf_clock clk;
};

// pf_recv describes one send_bw receiving run (rdma.Receive).
struct pf_recv {
	int nqp;
	struct ibv_qp *qp[PF_MAX_QPS];
	struct ibv_srq *srq; // where receives go when not NULL
	uint64_t addr[PF_MAX_QPS];
	uint32_t len, lkey[PF_MAX_QPS];
	int64_t iters; // per QP
	int rx_depth; // receives posted on each QP before the call
	int post_list; // re-posted in whole lists of this many (1: as used)
	int idle_ms;
	// -e, as pf_run's
	struct ibv_comp_channel *ch;
	int *armed;
	int sleep_failed;
	// out, in ticks of clk: first, the poll that took the first message;
	// last, the end of the loop
	int64_t done, first, last;
	uint32_t bad_status, bad_vendor;
	uint64_t bad_wr_id;
	struct pf_clock clk;
};

// pf_receive takes r->iters messages on each QP from cq, re-posting
// each QP's used receives after a poll, in whole lists of r->post_list,
// while more are due there; with r->ch it sleeps on it when cq is empty.
// Returns 0;
// -1 on a failed completion (r->bad_*); -2 when idle_ms passed without
// a message; -3 - errno when posting or polling failed; -4 on a completion of no
// QP of r (r->bad_wr_id). r->done counts the messages taken.
int pf_receive(struct ibv_cq *cq, struct pf_recv *r);

// pf_post_atomic posts one atomic (opcode IBV_WR_ATOMIC_*) on the 8
// bytes at raddr, the old value landing at laddr; 0 or -errno.
int pf_post_atomic(struct ibv_qp *qp, int opcode, uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey, int signaled);

// pf_post_recvs posts n receives of the same memory on qp, or on srq when
// it is not NULL, 32 per call, each with work request ID wr_id; 0 or
// -errno.
int pf_post_recvs(struct ibv_qp *qp, struct ibv_srq *srq, int n, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey);

// pf_spin_byte waits until *p == want, for at most timeout_ms (negative:
// forever); with yield it gives the CPU away between looks. 0 or -ETIMEDOUT.
int pf_spin_byte(const volatile uint8_t *p, uint8_t want, int timeout_ms, int yield);

// pf_stream is a whole bandwidth run: perftest's run_iter_bw. posted and
// completed hold iters × nqp stamps each (NULL with duration_ns); a
// completed entry stays 0 unless a completion brought the count of
// completed messages to exactly its index + 1. With r->ch it sleeps on it
// while cq is empty and requests are in flight. With r->recv it takes
// those messages too, and ends when both are done (perftest's
// run_iter_bi); with r->ch it then sleeps on both CQs' channels (r->recv
// has one too) while neither has a completion. r->done is the count of messages completed, on failure
// too. Returns 0; -1 on a failed completion (r->bad_*), -2 when idle_ms
// passed without a completion, -3 - errno when posting or polling
// failed, or -4 on a receive's completion of no QP (r->recv->bad_wr_id).
int pf_stream(struct ibv_cq *cq, struct pf_run *r, int64_t *posted, int64_t *completed);

// pf_send_lat is perftest's run_iter_lat_send with busy polling. Returns
// 0; -1 on a failed completion; -2 on an idle timeout; -3 - errno.
int pf_send_lat(struct ibv_qp *qp, struct ibv_cq *scq, struct ibv_cq *rcq, struct pf_lat *l, int64_t *posted);
// pf_request_lat is perftest's run_iter_lat for reads and atomics with busy
// polling. Returns 0; -1 on a failed completion; -2 on an idle timeout;
// -3 - errno.
int pf_request_lat(struct ibv_qp *qp, struct ibv_cq *cq, struct pf_req *q, int64_t *posted);
// pf_write_lat is perftest's run_iter_lat_write with busy polling.
// Returns 0; -1 on a failed completion; -2 on an idle timeout; -3 - errno.
int pf_write_lat(struct ibv_qp *qp, struct ibv_cq *cq, struct pf_wlat *w, int64_t *posted);

#endif
