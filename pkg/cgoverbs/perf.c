#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <infiniband/verbs.h>
#include "cq.h"
#include "cverrno.h"
#include "perf.h"
#include "slice.h"

// perftest's CTX_POLL_BATCH: completions taken per ibv_poll_cq.
enum { PF_POLL_BATCH = 16 };

// PF_MAX_POST_LIST is rdma.MaxPostList.
enum { PF_MAX_POST_LIST = 64 };

// The loops stamp each message with the CPU's counter, as perftest's
// get_cycles does: clock_gettime may be a system call (the lab's qemu
// guest runs on the hpet clocksource: 1.3 us a call against 19 ns for
// rdtsc), and one per message on each side of send_lat added 1.3 us to
// its typical latency. struct pf_clock relates the stamps to
// CLOCK_MONOTONIC, the counter's rate measured over the run itself rather
// than read from /proc/cpuinfo.
static inline int64_t pf_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
	return (int64_t)__rdtsc();
#elif defined(__aarch64__)
	int64_t v;
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return cv_now_ns();
#endif
}

static void pf_clock_start(struct pf_clock *c) {
	c->ns0 = cv_now_ns();
	c->ticks0 = pf_ticks();
}

// pf_clock_stop measures the counter's rate over the run, in nanoseconds
// a tick, over at least a millisecond so that the clock's resolution and
// the cost of reading it do not skew it.
static void pf_clock_stop(struct pf_clock *c) {
	int64_t ns1, ticks1;
	do {
		ns1 = cv_now_ns();
		ticks1 = pf_ticks();
	} while (ns1 - c->ns0 < 1000000);
	c->per_tick = ticks1 > c->ticks0 ? (double)(ns1 - c->ns0) / (double)(ticks1 - c->ticks0) : 1.0;
}

// pf_set_remote points wr at the peer's memory: an RDMA request's or an
// atomic's fields, as the opcode wants (perftest adds 1, and swaps in 1
// where it finds 0).
static void pf_set_remote(struct ibv_send_wr *wr, uint64_t raddr, uint32_t rkey) {
	if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.compare_add = wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : 0;
		wr->wr.atomic.swap = 1;
	} else {
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = rkey;
	}
}

// pf_set_ud addresses a UD send to the peer's QP rqpn through ah.
static void pf_set_ud(struct ibv_send_wr *wr, struct ibv_ah *ah, uint32_t rqpn, uint32_t qkey) {
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = rqpn;
	wr->wr.ud.remote_qkey = qkey;
}

int pf_post_atomic(struct ibv_qp *qp, int opcode, uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey, int signaled) {
	struct ibv_sge sge = {.addr = laddr, .length = 8, .lkey = lkey};
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof wr);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = opcode;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	pf_set_remote(&wr, raddr, rkey);
	return cv_neg(ibv_post_send(qp, &wr, &bad));
}

// pf_post_recvs posts n receives of the same memory on qp or srq, 32 per
// call, each with work request ID wr_id.
int pf_post_recvs(struct ibv_qp *qp, struct ibv_srq *srq, int n, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr[32], *bad;
	while (n > 0) {
		int k = n < 32 ? n : 32;
		for (int i = 0; i < k; i++) {
			wr[i].wr_id = wr_id;
			wr[i].sg_list = &sge;
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		int rc = srq ? ibv_post_srq_recv(srq, wr, &bad) : ibv_post_recv(qp, wr, &bad);
		if (rc)
			return cv_neg(rc);
		n -= k;
	}
	return 0;
}

// pf_spin_byte waits until *p == want, for at most timeout_ms (negative:
// forever); with yield it gives the CPU away between looks. 0 or -ETIMEDOUT.
int pf_spin_byte(const volatile uint8_t *p, uint8_t want, int timeout_ms, int yield) {
	// write_lat spins here once a message, many thousand looks a message
	// where the CPU is emulated: the clock it reads every 1024 looks is
	// the coarse one, which costs no system call.
	long deadline = -1;
	for (unsigned i = 0;; i++) {
		if (*p == want)
			return 0;
		if (timeout_ms >= 0 && (i & 1023) == 1023 && cv_coarse_passed(&deadline, timeout_ms))
			return -ETIMEDOUT;
		if (yield)
			sched_yield();
	}
}

// pf_recv_state is a receiving run's count, per QP, of the receives it
// posted and of those used and not yet posted again.
struct pf_recv_state {
	int64_t posted[PF_MAX_QPS];
	int used[PF_MAX_QPS];
};

static void pf_recv_begin(struct pf_recv *r, struct pf_recv_state *st) {
	for (int q = 0; q < r->nqp; q++) {
		st->posted[q] = r->rx_depth;
		st->used[q] = 0;
	}
	r->done = 0;
}

// pf_recv_take counts ne receive completions of wc, stamped now, and
// posts each QP's used receives again, in whole lists of r->post_list and
// no more than the messages still to come there. 0; -1 on a failed
// completion (r->bad_*), -4 on a completion of no QP of r (r->bad_wr_id),
// -3 - errno when posting failed.
static int pf_recv_take(struct pf_recv *r, struct pf_recv_state *st, const struct ibv_wc *wc, int ne, int64_t now) {
	int list = r->post_list > 1 ? r->post_list : 1;
	if (r->done == 0)
		r->first = now;
	r->last = now;
	for (int i = 0; i < ne; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			r->bad_status = wc[i].status;
			r->bad_vendor = wc[i].vendor_err;
			return -1;
		}
		if (wc[i].wr_id >= (uint64_t)r->nqp) {
			r->bad_wr_id = wc[i].wr_id;
			return -4;
		}
		st->used[(int)wc[i].wr_id]++;
		r->done++;
	}
	for (int q = 0; q < r->nqp; q++) {
		int64_t k = st->used[q] / list * list, room = (r->iters - st->posted[q]) / list * list;
		if (k > room)
			k = room;
		if (k > 0) {
			int err = pf_post_recvs(r->qp[q], r->srq, (int)k, (uint64_t)q, r->addr[q], r->len, r->lkey[q]);
			if (err)
				return -3 + err;
			st->used[q] -= (int)k;
			st->posted[q] += k;
		}
	}
	return 0;
}

// pf_idle says whether idle_ms passed without progress. Called now and
// then, it moves the deadline on when there was progress since the last
// call.
static int pf_idle(int *progressed, int64_t *deadline, int idle_ms) {
	int64_t now = cv_now_ns();
	if (*progressed)
		*deadline = now + (int64_t)idle_ms * 1000000;
	else if (now > *deadline)
		return 1;
	*progressed = 0;
	return 0;
}

// pf_sleep_either is cv_arm_or_sleep on a stream's send CQ and its receive CQ,
// each with its channel (perftest's -b has one channel for both): it
// arms each CQ that is not armed and returns 1 (poll both once more), or
// sleeps in poll(2) until either channel has an event, takes it and
// returns 1, or until the slice timer's signal, 0. Or -errno.
static int pf_sleep_either(struct ibv_cq *cq[2], struct ibv_comp_channel *ch[2], int *armed[2]) {
	int asked = 0;
	for (int i = 0; i < 2; i++) {
		if (*armed[i])
			continue;
		int rc = ibv_req_notify_cq(cq[i], 0);
		if (rc)
			return cv_neg(rc);
		*armed[i] = asked = 1;
	}
	if (asked)
		return 1;
	struct pollfd p[2] = {{.fd = ch[0]->fd, .events = POLLIN}, {.fd = ch[1]->fd, .events = POLLIN}};
	if (poll(p, 2, -1) < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < 2; i++) {
		if (!p[i].revents)
			continue;
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		if (ibv_get_cq_event(ch[i], &ev_cq, &ev_ctx))
			return -errno;
		ibv_ack_cq_events(ev_cq, 1);
		*armed[i] = 0;
	}
	return 1;
}

// pf_stream is a whole bandwidth run in one call, so that no scheduler
// sits between a completion and the next post (a Go loop of short cgo
// calls let the runtime hand the thread off and cost half the bandwidth
// under emulation). Per QP: one request per ibv_post_send, at most
// tx_depth in flight, every cq_mod-th and the last signalled; up to
// PF_POLL_BATCH completions per poll of the shared CQ: perftest's
// run_iter_bw. A work request's id is its QP's index in the top 16 bits
// and its number on that QP below. posted and completed hold iters × nqp
// entries each (unused with duration_ns). Returns 0; -1 on a failed
// completion (r->bad_*), -2 when idle_ms passed without a completion, or
// -3 - errno when posting or polling failed.
static int pf_stream_loop(struct ibv_cq *cq, struct pf_run *r, const struct pf_clock *clk, int64_t *posted, int64_t *completed,
			  struct ibv_wc *rwc, int rbatch) {
	struct ibv_sge sge[PF_MAX_QPS];
	// each QP's list of post_list requests, posted in one call
	struct ibv_send_wr wr[PF_MAX_QPS][PF_MAX_POST_LIST], *bad;
	struct ibv_wc wc[PF_POLL_BATCH];
	int64_t scnt[PF_MAX_QPS] = {0}, ccnt[PF_MAX_QPS] = {0};
	int pl = r->post_list;
	if (pl < 1 || pl > PF_MAX_POST_LIST)
		return -3 - EINVAL;
	// A previous timed run's unsignalled tail still holds send-queue
	// slots: count it as posted, and the first signalled completion
	// covers it.
	if (r->duration_ns > 0)
		for (int q = 0; q < r->nqp; q++)
			scnt[q] = r->tail[q];
	for (int q = 0; q < r->nqp; q++) {
		sge[q] = (struct ibv_sge){.addr = r->laddr[q], .length = r->len, .lkey = r->lkey[q]};
		for (int k = 0; k < pl; k++) {
			memset(&wr[q][k], 0, sizeof wr[q][k]);
			wr[q][k].sg_list = &sge[q];
			wr[q][k].num_sge = 1;
			wr[q][k].opcode = r->opcode;
			wr[q][k].next = k + 1 < pl ? &wr[q][k + 1] : NULL;
			if (r->ah[q])
				pf_set_ud(&wr[q][k], r->ah[q], r->rqpn[q], r->qkey);
			else
				pf_set_remote(&wr[q][k], r->raddr[q], r->rkey[q]);
		}
	}
	int timed = r->duration_ns > 0;
	int64_t iters = timed ? INT64_MAX : r->iters, tot = timed ? INT64_MAX : r->iters * r->nqp;
	int64_t totscnt = 0, totccnt = 0;
	int64_t end = clk->ns0 + r->duration_ns;
	// With a duration only the sample window counts: completions seen
	// while the last look at the clock fell in it.
	int64_t win_from = clk->ns0 + r->margin_ns, win_to = end - r->margin_ns;
	int in_window = r->margin_ns <= 0;
	int64_t win_done = 0;
	int64_t deadline = clk->ns0 + (int64_t)r->idle_ms * 1000000;
	// send_bw -b: the peer's messages taken meanwhile; a side that holds
	// posts nothing before the first came.
	struct pf_recv *rv = r->recv;
	struct pf_recv_state rst;
	int hold = rv && r->hold;
	if (rv && timed)
		rv->iters = INT64_MAX / PF_MAX_QPS; // a timed run's receiving has no count to reach
	int64_t rtotal = rv ? rv->iters * rv->nqp : 0;
	if (rv) {
		pf_recv_begin(rv, &rst);
		rv->first = rv->last = clk->ticks0;
	}
	// With a duration the clock is read after every poll that took
	// completions (a full pipe under emulation keeps every poll full, so
	// counting passes alone let 1024 completions by between reads) and
	// every 64th pass otherwise.
	unsigned spins = 0, passes = 0;
	int stop = 0, progressed = 0, look = 1;
	// The rate limiter begins a burst when the gap since the last one
	// has passed, and ends it after burst requests, on any QP.
	int paced = r->gap_ns > 0, in_burst = 0;
	int64_t next_burst = 0, burst_posted = 0;
	r->first = clk->ticks0;
	r->last = clk->ticks0;
	for (;;) {
		for (int q = 0; q < r->nqp && !stop && !hold; q++) {
			if (paced && !in_burst) {
				int64_t t = cv_now_ns();
				if (t < next_burst) {
					// waiting out the gap is not idleness
					progressed = 1;
					continue;
				}
				next_burst = t + r->gap_ns;
				in_burst = 1;
				burst_posted = 0;
			}
			while (scnt[q] < iters && scnt[q] - ccnt[q] + pl <= r->tx_depth && (!paced || in_burst)) {
				for (int k = 0; k < pl; k++) {
					int64_t n = scnt[q] + k;
					wr[q][k].wr_id = (uint64_t)q << 48 | (uint64_t)n;
					wr[q][k].send_flags = ((n + 1) % r->cq_mod == 0 || n + 1 == iters ? IBV_SEND_SIGNALED : 0) |
							      (r->send_inline ? IBV_SEND_INLINE : 0);
				}
				if (!timed) {
					// a list's requests are posted together: one stamp
					int64_t now = pf_ticks();
					for (int k = 0; k < pl; k++)
						posted[totscnt + k] = now;
				}
				int rc = ibv_post_send(r->qp[q], wr[q], &bad);
				if (rc)
					return r->done = totccnt, -3 + cv_neg(rc);
				scnt[q] += pl;
				totscnt += pl;
				if (paced && (burst_posted += pl) >= r->burst)
					in_burst = 0;
			}
		}
		if (timed && !stop && !hold && (look || ++passes % 64 == 0)) {
			look = 0;
			int64_t t = cv_now_ns();
			stop = t >= end;
			in_window = t >= win_from && t < win_to;
		}
		if (timed && stop && rv) {
			// As perftest's run_iter_bi: no waiting for the last
			// requests, whose receiver may have stopped taking them.
			break;
		} else if (timed && stop && !r->continues) {
			break;
		} else if (timed && stop) {
			// Requests after a QP's last signalled one complete unseen.
			int drained = 1;
			for (int q = 0; q < r->nqp; q++)
				drained &= ccnt[q] >= scnt[q] - scnt[q] % r->cq_mod;
			if (drained)
				break;
		} else if (!timed && totccnt >= tot && (!rv || rv->done >= rtotal)) {
			break;
		}
		int rne = 0;
		if (rv && rv->done < rtotal) {
			rne = ibv_poll_cq(r->recv_cq, rbatch, rwc);
			if (rne < 0)
				return r->done = totccnt, -3 + cv_neg(rne);
			if (rne > 0) {
				progressed = 1;
				if (hold && timed) {
					// the held side's time runs from the first message
					int64_t t0 = cv_now_ns();
					end = t0 + r->duration_ns;
					win_from = t0 + r->margin_ns;
					win_to = end - r->margin_ns;
				}
				hold = 0;
				int64_t now = pf_ticks();
				int rc = pf_recv_take(rv, &rst, rwc, rne, now);
				if (rc == -1) {
					r->bad_status = rv->bad_status;
					r->bad_vendor = rv->bad_vendor;
				}
				if (rc)
					return r->done = totccnt, rc;
				if (timed && in_window) {
					// perftest's run_iter_bi counts both directions
					if (win_done == 0)
						r->first = now;
					win_done += rne;
					r->last = now;
				}
			}
		}
		int ne = ibv_poll_cq(cq, PF_POLL_BATCH, wc);
		if (ne < 0)
			return r->done = totccnt, -3 + cv_neg(ne);
		if (ne == 0) {
			// idle_ms counts from the first look at the clock after
			// the last completion: every 64Ki empty polls, or each
			// time the slice timer ends a sleep.
			if (r->ch && (rv ? rne == 0 : totscnt > totccnt)) {
				struct ibv_cq *cqs[2] = {cq, r->recv_cq};
				struct ibv_comp_channel *chs[2] = {r->ch, rv ? rv->ch : NULL};
				int *armed[2] = {r->armed, rv ? rv->armed : NULL};
				int rc = rv ? pf_sleep_either(cqs, chs, armed) : cv_arm_or_sleep(cq, r->ch, r->armed);
				if (rc < 0)
					return r->sleep_failed = 1, r->done = totccnt, -3 + rc;
				look = 1;
				if (rc == 0 && pf_idle(&progressed, &deadline, r->idle_ms))
					return r->done = totccnt, -2;
			} else if ((++spins & 0xffff) == 0 && pf_idle(&progressed, &deadline, r->idle_ms)) {
				return r->done = totccnt, -2;
			}
			continue;
		}
		progressed = 1;
		look = 1;
		int64_t now = pf_ticks();
		for (int i = 0; i < ne; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				r->bad_status = wc[i].status;
				r->bad_vendor = wc[i].vendor_err;
				return r->done = totccnt, -1;
			}
			int q = (int)(wc[i].wr_id >> 48);
			int64_t n = (int64_t)(wc[i].wr_id & 0xffffffffffffULL) + 1;
			if (q >= r->nqp || n <= ccnt[q])
				continue;
			if (timed && in_window) {
				if (win_done == 0)
					r->first = now;
				win_done += n - ccnt[q];
				r->last = now;
			}
			totccnt += n - ccnt[q];
			ccnt[q] = n;
			if (!timed)
				completed[totccnt - 1] = now;
		}
	}
	r->done = timed ? win_done : totccnt;
	if (rv && !timed)
		r->ended = pf_ticks();
	for (int q = 0; q < r->nqp; q++)
		r->tail[q] = scnt[q] - ccnt[q];
	return 0;
}

int pf_stream(struct ibv_cq *cq, struct pf_run *r, int64_t *posted, int64_t *completed) {
	timer_t slices;
	if (r->ch) {
		int rc = cv_slice_start(&slices, CV_SLICE_REPEAT_MS);
		if (rc)
			return r->sleep_failed = 1, -3 + rc;
	}
	// send_bw -b takes up to rx_depth receives per poll, as perftest's
	// run_iter_bi: the receive queue is refilled before the peer's sends
	// find it empty.
	struct ibv_wc *rwc = NULL;
	int rbatch = 0;
	if (r->recv) {
		rbatch = r->recv->rx_depth > PF_POLL_BATCH ? r->recv->rx_depth : PF_POLL_BATCH;
		rwc = malloc(sizeof *rwc * rbatch);
		if (!rwc) {
			if (r->ch)
				timer_delete(slices);
			return r->alloc_failed = 1, -3 - ENOMEM;
		}
	}
	pf_clock_start(&r->clk);
	int rc = pf_stream_loop(cq, r, &r->clk, posted, completed, rwc, rbatch);
	pf_clock_stop(&r->clk);
	free(rwc);
	if (r->ch)
		timer_delete(slices);
	return rc;
}

// pf_poll_one spins on cq until one completion comes: 1 (its status and
// vendor error in *st, *vendor), -2 after idle_ms without one, -3 - errno.
static int pf_poll_one(struct ibv_cq *cq, int idle_ms, uint32_t *st, uint32_t *vendor) {
	struct ibv_wc wc;
	long deadline = -1;
	for (unsigned spins = 1;; spins++) {
		int ne = ibv_poll_cq(cq, 1, &wc);
		if (ne < 0)
			return -3 + cv_neg(ne);
		if (ne > 0) {
			*st = wc.status;
			*vendor = wc.vendor_err;
			return 1;
		}
		if (spins % CV_POLLS_PER_CLOCK == 0 && cv_coarse_passed(&deadline, idle_ms))
			return -2;
	}
}

// pf_send_lat is perftest's run_iter_lat_send with busy polling, in one
// call: no Go code runs between a completion and the next post. Returns
// 0; -1 on a failed completion; -2 on an idle timeout; -3 - errno.
static int pf_send_lat_loop(struct ibv_qp *qp, struct ibv_cq *scq, struct ibv_cq *rcq, struct pf_lat *l, int64_t *posted) {
	struct ibv_sge ssge = {.addr = l->saddr, .length = l->slen, .lkey = l->lkey};
	struct ibv_sge rsge = {.addr = l->raddr, .length = l->rlen, .lkey = l->lkey};
	struct ibv_send_wr swr = {0}, *sbad;
	struct ibv_recv_wr rwr = {0}, *rbad;
	swr.sg_list = &ssge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED | (l->send_inline ? IBV_SEND_INLINE : 0);
	if (l->ah)
		pf_set_ud(&swr, l->ah, l->rqpn, l->qkey);
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	int64_t scnt = 0, rcnt = 0;
	while (scnt < l->iters || rcnt < l->iters) {
		if (rcnt < l->iters && !(scnt < 1 && l->client)) {
			l->step = 0;
			l->at = rcnt;
			int rc = pf_poll_one(rcq, l->idle_ms, &l->bad_status, &l->bad_vendor);
			if (rc < 0)
				return rc;
			if (l->bad_status != IBV_WC_SUCCESS)
				return -1;
			rcnt++;
			if (rcnt + l->rx_depth <= l->iters &&
			    (rc = l->srq ? ibv_post_srq_recv(l->srq, &rwr, &rbad) : ibv_post_recv(qp, &rwr, &rbad)))
				return -3 + cv_neg(rc);
		}
		if (scnt < l->iters) {
			l->step = 1;
			l->at = scnt;
			posted[scnt++] = pf_ticks();
			int rc = ibv_post_send(qp, &swr, &sbad);
			if (rc)
				return -3 + cv_neg(rc);
			rc = pf_poll_one(scq, l->idle_ms, &l->bad_status, &l->bad_vendor);
			if (rc < 0)
				return rc;
			if (l->bad_status != IBV_WC_SUCCESS)
				return -1;
		}
	}
	return 0;
}

int pf_send_lat(struct ibv_qp *qp, struct ibv_cq *scq, struct ibv_cq *rcq, struct pf_lat *l, int64_t *posted) {
	pf_clock_start(&l->clk);
	int rc = pf_send_lat_loop(qp, scq, rcq, l, posted);
	pf_clock_stop(&l->clk);
	return rc;
}

static int pf_request_lat_loop(struct ibv_qp *qp, struct ibv_cq *cq, struct pf_req *q, int64_t *posted) {
	struct ibv_sge sge = {.addr = q->laddr, .length = q->llen, .lkey = q->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = q->opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	pf_set_remote(&wr, q->raddr, q->rkey);
	for (q->at = 0; q->at < q->iters; q->at++) {
		posted[q->at] = pf_ticks();
		int rc = ibv_post_send(qp, &wr, &bad);
		if (rc)
			return -3 + cv_neg(rc);
		rc = pf_poll_one(cq, q->idle_ms, &q->bad_status, &q->bad_vendor);
		if (rc < 0)
			return rc;
		if (q->bad_status != IBV_WC_SUCCESS)
			return -1;
	}
	return 0;
}

int pf_request_lat(struct ibv_qp *qp, struct ibv_cq *cq, struct pf_req *q, int64_t *posted) {
	pf_clock_start(&q->clk);
	int rc = pf_request_lat_loop(qp, cq, q, posted);
	pf_clock_stop(&q->clk);
	return rc;
}

// pf_write_lat_loop: each side writes its count into the last byte of
// the peer's message and spins on the last byte of its own for the
// peer's; the server writes first, as perftest's does.
static int pf_write_lat_loop(struct ibv_qp *qp, struct ibv_cq *cq, struct pf_wlat *w, int64_t *posted) {
	struct ibv_sge sge = {.addr = w->laddr, .length = w->llen, .lkey = w->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	volatile uint8_t *count = (volatile uint8_t *)(uintptr_t)(w->laddr + w->llen - 1);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED | (w->send_inline ? IBV_SEND_INLINE : 0);
	pf_set_remote(&wr, w->raddr, w->rkey);
	int64_t scnt = 0, rcnt = 0, ccnt = 0;
	while (scnt < w->iters || ccnt < w->iters || rcnt < w->iters) {
		if (rcnt < w->iters && !(scnt < 1 && !w->client)) {
			w->step = 0;
			w->at = rcnt++;
			if (pf_spin_byte(w->poll, (uint8_t)rcnt, w->idle_ms, 0))
				return -2;
		}
		if (scnt < w->iters) {
			w->step = 1;
			w->at = scnt;
			posted[scnt] = pf_ticks();
			*count = (uint8_t)++scnt;
			int rc = ibv_post_send(qp, &wr, &bad);
			if (rc)
				return -3 + cv_neg(rc);
		}
		if (ccnt < w->iters) {
			w->step = 1;
			w->at = ccnt;
			int rc = pf_poll_one(cq, w->idle_ms, &w->bad_status, &w->bad_vendor);
			if (rc < 0)
				return rc;
			if (w->bad_status != IBV_WC_SUCCESS)
				return -1;
			ccnt++;
		}
	}
	return 0;
}

int pf_write_lat(struct ibv_qp *qp, struct ibv_cq *cq, struct pf_wlat *w, int64_t *posted) {
	pf_clock_start(&w->clk);
	int rc = pf_write_lat_loop(qp, cq, w, posted);
	pf_clock_stop(&w->clk);
	return rc;
}

static int pf_receive_loop(struct ibv_cq *cq, struct pf_recv *r) {
	struct ibv_wc wc[PF_POLL_BATCH];
	struct pf_recv_state st;
	int64_t total = r->iters * r->nqp;
	pf_recv_begin(r, &st);
	pf_clock_start(&r->clk);
	int64_t deadline = r->clk.ns0 + (int64_t)r->idle_ms * 1000000;
	unsigned spins = 0;
	int progressed = 0, rc = 0;
	r->first = r->last = r->clk.ticks0;
	while (r->done < total) {
		int ne = ibv_poll_cq(cq, PF_POLL_BATCH, wc);
		if (ne < 0) {
			rc = -3 + cv_neg(ne);
			break;
		}
		if (ne == 0) {
			if (r->ch) {
				int woke = cv_arm_or_sleep(cq, r->ch, r->armed);
				if (woke < 0) {
					r->sleep_failed = 1;
					rc = -3 + woke;
					break;
				}
				if (woke == 0 && pf_idle(&progressed, &deadline, r->idle_ms)) {
					rc = -2;
					break;
				}
			} else if ((++spins & 0xffff) == 0 && pf_idle(&progressed, &deadline, r->idle_ms)) {
				rc = -2;
				break;
			}
			continue;
		}
		progressed = 1;
		if ((rc = pf_recv_take(r, &st, wc, ne, pf_ticks())))
			break;
	}
	// As perftest's server: the run ends once the loop is over, after
	// the last re-post, so that messages all taken in one poll still
	// span some time.
	if (!rc)
		r->last = pf_ticks();
	pf_clock_stop(&r->clk);
	return rc;
}

int pf_receive(struct ibv_cq *cq, struct pf_recv *r) {
	timer_t slices;
	if (r->ch) {
		int rc = cv_slice_start(&slices, CV_SLICE_REPEAT_MS);
		if (rc)
			return r->sleep_failed = 1, -3 + rc;
	}
	int rc = pf_receive_loop(cq, r);
	if (r->ch)
		timer_delete(slices);
	return rc;
}
