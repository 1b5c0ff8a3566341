#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <time.h>
#include "cverrno.h"
#include "cq.h"
#include "slice.h"

int cv_poll(struct ibv_cq *cq, struct cv_cq_state *st, int max) {
	if (max > CV_WC_BATCH)
		max = CV_WC_BATCH;
	int n = ibv_poll_cq(cq, max, st->raw);
	if (n < 0)
		return cv_neg(n);
	for (int i = 0; i < n; i++) {
		struct ibv_wc *r = &st->raw[i];
		struct cv_wc *w = &st->wc[i];
		w->wr_id = r->wr_id;
		w->status = r->status;
		w->opcode = r->opcode;
		w->vendor_err = r->vendor_err;
		w->byte_len = r->byte_len;
		w->imm = (r->wc_flags & IBV_WC_WITH_IMM) ? be32toh(r->imm_data) : 0;
		w->flags = r->wc_flags;
		w->qp_num = r->qp_num;
	}
	return n;
}

int cv_poll_count(struct ibv_cq *cq, struct cv_cq_state *st, int want, int slice_ms) {
	long deadline = slice_ms >= 0 ? cv_coarse_ms() + slice_ms : -1;
	int done = 0;
	for (long spins = 1; done < want; spins++) {
		int n = ibv_poll_cq(cq, CV_COUNT_BATCH, st->raw);
		if (n < 0)
			return cv_neg(n);
		done += n;
		if (n == 0 && deadline >= 0 && spins % CV_POLLS_PER_CLOCK == 0 && cv_coarse_ms() >= deadline)
			break;
	}
	return done;
}

static long cv_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

// cv_wait_fds polls fd a (and b when >= 0) for input, retrying on EINTR
// until timeout_ms (-1 = forever) has passed. Returns a bitmask of ready fds
// (1 = a, 2 = b), 0 on timeout, -errno on failure.
static int cv_wait_fds(int a, int b, int timeout_ms) {
	struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
	long deadline = timeout_ms >= 0 ? cv_now_ms() + timeout_ms : 0;
	for (;;) {
		int left = -1;
		if (timeout_ms >= 0) {
			long l = deadline - cv_now_ms();
			left = l > 0 ? (int)l : 0;
		}
		int n = poll(p, b >= 0 ? 2 : 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		return (p[0].revents ? 1 : 0) | (b >= 0 && p[1].revents ? 2 : 0);
	}
}

// cv_take_event reads and acknowledges one completion event of cq.
static int cv_take_event(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st) {
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return -errno;
	ibv_ack_cq_events(ev_cq, 1);
	if (ev_cq != cq)
		return -EINVAL;
	st->armed = 0;
	return 0;
}

// cv_ready_to_sleep takes up to max completions of cq or, when there are
// none, arms notification so that the next one makes the channel
// readable: 0 means the caller may sleep on the channel's fd now. No
// clock is read and nothing waits: a caller that sleeps in its own poll
// pays one system call to arm and none else.
int cv_ready_to_sleep(struct ibv_cq *cq, struct cv_cq_state *st, int max) {
	int n = cv_poll(cq, st, max);
	if (n != 0 || st->armed)
		return n;
	int rc = ibv_req_notify_cq(cq, 0);
	if (rc)
		return cv_neg(rc);
	st->armed = 1;
	// A completion that arrived between the poll and the arming raises
	// no event.
	return cv_poll(cq, st, max);
}

// cv_woken consumes the event that made the channel readable and takes
// up to max completions.
int cv_woken(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st, int max) {
	int rc = cv_take_event(cq, ch, st);
	if (rc)
		return rc;
	return cv_poll(cq, st, max);
}

// cv_await returns up to max completions of cq, blocking on its channel
// (and on other_fd when >= 0) for at most timeout_ms. Returns the number
// of completions; 0 with st->other_ready set when other_fd became readable
// first; -ETIMEDOUT; or -errno.
int cv_await(struct ibv_cq *cq, struct ibv_comp_channel *ch, struct cv_cq_state *st,
		    int max, int other_fd, int timeout_ms) {
	long deadline = timeout_ms >= 0 ? cv_now_ms() + timeout_ms : 0;
	st->other_ready = 0;
	for (int i = 0; i < st->spin; i++) {
		int n = cv_poll(cq, st, max);
		if (n != 0)
			return n;
	}
	for (;;) {
		int n = cv_poll(cq, st, max);
		if (n != 0)
			return n;
		if (!st->armed) {
			// Arm, then look again: a completion that arrived between the
			// poll and the arming raises no event.
			int rc = ibv_req_notify_cq(cq, 0);
			if (rc)
				return cv_neg(rc);
			st->armed = 1;
			continue;
		}
		int left = -1;
		if (timeout_ms >= 0) {
			long l = deadline - cv_now_ms();
			left = l > 0 ? (int)l : 0;
		}
		int ready = cv_wait_fds(ch->fd, other_fd, left);
		if (ready < 0)
			return ready;
		if (ready == 0)
			return -ETIMEDOUT;
		if (ready & 1) {
			int rc = cv_take_event(cq, ch, st);
			if (rc)
				return rc;
		}
		if (ready & 2) {
			st->other_ready = 1;
			n = cv_poll(cq, st, max);
			return n;
		}
	}
}
