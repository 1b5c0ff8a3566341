#include <endian.h>
#include <errno.h>
#include "cverrno.h"
#include "cq.h"
#include "slice.h"
#include "waitfd.h"

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

// cv_arm_or_sleep is one step of a wait on cq's channel ch that sleeps
// (perftest's and the ibv_*_pingpong tools' -e), taken after a poll found
// cq empty: unarmed, it asks for the next completion event and returns 1
// (poll once more: a completion that came before the arming raises none);
// armed, it sleeps until an event, takes it and returns 1, or until a
// signal (the slice timer's), 0. Or -errno.
int cv_arm_or_sleep(struct ibv_cq *cq, struct ibv_comp_channel *ch, int *armed) {
	if (!*armed) {
		int rc = ibv_req_notify_cq(cq, 0);
		if (rc)
			return cv_neg(rc);
		*armed = 1;
		return 1;
	}
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return errno == EINTR ? 0 : -errno;
	ibv_ack_cq_events(ev_cq, 1);
	*armed = 0;
	return 1;
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
	int64_t deadline = cv_deadline(timeout_ms);
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
		int ready = cv_wait_fds(ch->fd, other_fd, deadline);
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
