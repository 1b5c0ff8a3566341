#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "cverrno.h"
#include "pingpong.h"
#include "slice.h"

// pp_post_send posts QP qi's next send, signaled if it is the last one
// or ends a run of signal_every, and leaves the QP waiting for a receive
// and for the completion of a signaled send.
static int pp_post_send(struct pp_run *r, int qi)
{
	int every = r->nqp > 1 || r->signal_every < 1 ? 1 : r->signal_every;
	int signaled = r->unsignaled + 1 >= every || r->posted + 1 >= r->iters;
	struct ibv_sge sge = {.addr = r->send_addr, .length = r->send_len, .lkey = r->send_lkey};
	struct ibv_send_wr wr = {
		.wr_id = r->send_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (r->inline_send ? IBV_SEND_INLINE : 0),
	}, *bad;
	if (r->ah) {
		wr.wr.ud.ah = r->ah;
		wr.wr.ud.remote_qpn = r->rqpn;
		wr.wr.ud.remote_qkey = r->rqkey;
	}
	int rc = ibv_post_send(r->qps[qi], &wr, &bad);
	if (rc)
		return rc;
	r->posted++;
	r->unsignaled++;
	r->pending[qi] = r->recv_id;
	if (signaled) {
		r->covering = r->unsignaled;
		r->unsignaled = 0;
		r->pending[qi] |= r->send_id;
	}
	return 0;
}

// Receives posted in one call: the tools post them one by one, but each
// call takes the queue's lock.
enum { PP_RECVS_PER_POST = 64 };

// pp_post_recvs posts up to n receives, stopping at the first refusal as
// the tools do, and returns how many it posted.
static int pp_post_recvs(struct pp_run *r, int n)
{
	struct ibv_sge sge = {.addr = r->recv_addr, .length = r->recv_len, .lkey = r->recv_lkey};
	struct ibv_recv_wr wrs[PP_RECVS_PER_POST], *bad;
	int posted = 0;
	while (posted < n) {
		int k = n - posted < PP_RECVS_PER_POST ? n - posted : PP_RECVS_PER_POST;
		for (int i = 0; i < k; i++)
			wrs[i] = (struct ibv_recv_wr){.wr_id = r->recv_id, .next = i + 1 < k ? &wrs[i + 1] : NULL, .sg_list = &sge, .num_sge = 1};
		bad = NULL;
		int rc = r->srq ? ibv_post_srq_recv(r->srq, wrs, &bad) : ibv_post_recv(r->qps[0], wrs, &bad);
		if (rc)
			return posted + (bad ? (int)(bad - wrs) : 0);
		posted += k;
	}
	return posted;
}

// pp_idle is a loop's idle bound: the completions it had seen at its last
// look, and the coarse deadline set then.
struct pp_idle {
	int seen;
	long deadline;
};

// pp_cancelled says whether pp_cancel was called, with r->stop set.
static int pp_cancelled(struct pp_run *r)
{
	if (!__atomic_load_n(&r->cancel, __ATOMIC_RELAXED))
		return 0;
	r->stop = PP_CANCELLED;
	return 1;
}

// pp_stopping looks at pp_cancel's flag and, when the loop has seen no
// completion since its last look, at its idle bound; nonzero when the
// loop must stop, with r->stop set.
static int pp_stopping(struct pp_run *r, struct pp_idle *idle)
{
	if (pp_cancelled(r))
		return 1;
	if (r->idle_ms < 0)
		return 0;
	int seen = r->sent + r->received;
	if (seen != idle->seen) {
		idle->seen = seen;
		idle->deadline = -1;
	}
	if (cv_coarse_passed(&idle->deadline, r->idle_ms)) {
		r->stop = PP_IDLE;
		return 1;
	}
	return 0;
}

// pp_wait returns completions, 0 once the loop must stop (pp_stopping),
// or -errno. A polling loop looks every CV_POLLS_PER_CLOCK empty polls; a
// loop with a channel when the slice signal woke it. With a channel it
// polls before it arms: after a wake-up the completion is answered first,
// and the arm (a system call) comes before the next sleep, while the peer
// works on the answer, instead of between the wake-up and the answer as
// in the tools' -e (cv_arm_or_sleep).
static int pp_wait(struct pp_run *r, struct pp_idle *idle, struct ibv_wc *wc, int max)
{
	if (!r->ch) {
		for (long spins = 1;; spins++) {
			int n = ibv_poll_cq(r->cq, max, wc);
			if (n != 0)
				return n < 0 ? cv_neg(n) : n;
			if (spins > r->yield_after)
				sched_yield();
			if (spins % CV_POLLS_PER_CLOCK == 0 && pp_stopping(r, idle))
				return 0;
		}
	}
	for (;;) {
		int n = ibv_poll_cq(r->cq, max, wc);
		if (n != 0)
			return n < 0 ? cv_neg(n) : n;
		if (cv_slice_take() && pp_stopping(r, idle))
			return 0;
		int rc = cv_arm_or_sleep(r->cq, r->ch, &r->st->armed);
		if (rc < 0)
			return rc;
	}
}

// pp_top_up posts receives up to rx_depth; nonzero when some are missing
// (the tools' "Couldn't post receive").
static int pp_top_up(struct pp_run *r)
{
	r->outstanding += pp_post_recvs(r, r->rx_depth - r->outstanding);
	return r->outstanding < r->rx_depth;
}

static int pp_fail(struct pp_run *r, int stop, const struct ibv_wc *w, int ne)
{
	r->stop = stop;
	r->polled = ne;
	r->wc.wr_id = w->wr_id;
	r->wc.status = w->status;
	r->wc.opcode = w->opcode;
	r->wc.vendor_err = w->vendor_err;
	r->wc.byte_len = w->byte_len;
	r->wc.qp_num = w->qp_num;
	return 0;
}

static int pp_run(struct pp_run *r);

// pp_sleepers guards each run's sleeper, so that pp_cancel signals a
// thread only while its loop runs.
static pthread_mutex_t pp_sleepers = PTHREAD_MUTEX_INITIALIZER;

static void pp_set_sleeper(struct pp_run *r, pid_t tid)
{
	pthread_mutex_lock(&pp_sleepers);
	r->sleeper = tid;
	pthread_mutex_unlock(&pp_sleepers);
}

int pp_loop(struct pp_run *r)
{
	if (!r->ch)
		return pp_run(r);
	timer_t t;
	int every = r->idle_ms / PP_IDLE_LOOKS;
	int rc = r->idle_ms >= 0 ? cv_slice_start(&t, every) : cv_slice_arm();
	if (rc)
		return rc;
	pp_set_sleeper(r, (pid_t)syscall(SYS_gettid));
	rc = pp_run(r);
	pp_set_sleeper(r, 0);
	if (r->idle_ms >= 0)
		timer_delete(t);
	return rc;
}

void pp_loop_off(void *p)
{
	struct pp_run *r = p;
	r->rc = pp_loop(r);
}

void pp_cancel(struct pp_run *r)
{
	pthread_mutex_lock(&pp_sleepers);
	__atomic_store_n(&r->cancel, 1, __ATOMIC_RELAXED);
	if (r->sleeper)
		cv_slice_signal(r->sleeper);
	pthread_mutex_unlock(&pp_sleepers);
}

// pp_run is pp_loop's work.
static int pp_run(struct pp_run *r)
{
	struct ibv_wc wc[CV_WC_BATCH];
	struct pp_idle idle = {.deadline = -1};
	int max = 2, low = 1;
	if (r->srq) {
		max = r->nqp + r->rx_depth < CV_WC_BATCH ? r->nqp + r->rx_depth : CV_WC_BATCH;
		low = r->nqp;
	}
	for (int i = 0; i < r->nqp; i++) {
		r->pending[i] = r->recv_id;
		if (!r->client)
			continue;
		if (pp_post_send(r, i)) {
			r->stop = PP_SEND_FAILED;
			return 0;
		}
	}
	r->began = cv_now_ns();
	if (r->stamps)
		r->stamps[0] = r->began;
	while (r->received < r->iters || r->sent < r->iters) {
		// A peer that keeps answering must not keep the caller from
		// cancelling: the flag is looked at between batches too.
		if (pp_cancelled(r))
			return 0;
		int ne = pp_wait(r, &idle, wc, max);
		if (ne <= 0)
			return ne;
		for (int k = 0; k < ne; k++) {
			struct ibv_wc *w = &wc[k];
			if (w->status != IBV_WC_SUCCESS)
				return pp_fail(r, PP_FAILED_STATUS, w, ne);
			int qi = 0;
			if (r->srq) {
				qi = -1;
				for (int i = 0; i < r->nqp; i++)
					if (r->qps[i]->qp_num == w->qp_num)
						qi = i;
				if (qi < 0)
					return pp_fail(r, PP_UNKNOWN_QPN, w, ne);
			}
			int top_up = 0;
			if (w->wr_id == r->send_id) {
				r->sent += r->covering;
			} else if (w->wr_id == r->recv_id) {
				if (--r->outstanding <= low) {
					// The tools top up before they answer. With a
					// receive left for each QP's next message the
					// answer goes first, and the peer works on it
					// while this side posts.
					if (r->outstanding == low)
						top_up = 1;
					else if (pp_top_up(r))
						return pp_fail(r, PP_RECVS_SHORT, w, ne);
				}
				r->received++;
				if (r->stamps)
					r->stamps[r->received] = cv_now_ns();
			} else {
				return pp_fail(r, PP_UNKNOWN_WRID, w, ne);
			}
			r->pending[qi] &= ~w->wr_id;
			if (r->posted < r->iters && !r->pending[qi]) {
				if (pp_post_send(r, qi))
					return pp_fail(r, PP_SEND_FAILED, w, ne);
			}
			if (top_up && pp_top_up(r))
				return pp_fail(r, PP_RECVS_SHORT, w, ne);
		}
	}
	r->ended = cv_now_ns();
	r->stop = PP_DONE;
	return 0;
}
