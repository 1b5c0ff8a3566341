#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <unistd.h>
#include "cmtimer.h"

// cmtime stamps with gettimeofday: so do its figures here.
static int64_t ct_now_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static int ct_async(int step)
{
	return step == CT_RESOLVE_ADDR || step == CT_RESOLVE_ROUTE || step == CT_CONNECT || step == CT_DISCONNECT;
}

// ct_note records a failure; t->mu held. A note that finds no room is
// dropped: the connection still counts as failed.
static void ct_note(struct ct *t, int conn, int event, int err)
{
	if (t->nnotes == t->cap_notes) {
		int cap = t->cap_notes ? 2 * t->cap_notes : 16;
		struct ct_note *p = realloc(t->notes, cap * sizeof *p);
		if (!p)
			return;
		t->notes = p;
		t->cap_notes = cap;
	}
	t->notes[t->nnotes++] = (struct ct_note){.conn = conn, .event = event, .err = err};
}

// ct_end stamps the end of c's operation of the step under way, once,
// at now, and says whether it did: an event of no awaited operation
// counts for nothing. t->mu held.
static int ct_end(struct ct *t, struct ct_conn *c, int step, int64_t now)
{
	if (step != t->step || !c->start_us || c->end_us)
		return 0;
	c->end_us = now;
	t->last_end_us = now;
	// the waiter wants the step's end, not each operation's: a wake per
	// event would cost it a context switch per connection
	if (++t->done >= t->started)
		pthread_cond_broadcast(&t->cond);
	return 1;
}

// ct_fail ends c's operation of step at now with the error event ev.
// t->mu held.
static void ct_fail(struct ct *t, struct ct_conn *c, int step, const struct rdma_cm_event *ev, int64_t now)
{
	ct_note(t, (int)(c - t->conns), ev->event, ev->status);
	ct_end(t, c, step, now);
	c->failed = 1;
}

static void ct_handle(struct ct *t, struct rdma_cm_event *ev)
{
	struct ct_conn *c = ev->id->context;
	if (!c)
		return;
	// the clock is read outside the lock, which the issuing loop takes at
	// every call: a clock read can be a system call
	int64_t now = ct_now_us();
	pthread_mutex_lock(&t->mu);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ct_end(t, c, CT_RESOLVE_ADDR, now);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ct_end(t, c, CT_RESOLVE_ROUTE, now);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ct_end(t, c, CT_CONNECT, now);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		if (c->retries > 0) {
			c->retries--;
			if (!rdma_resolve_addr(c->id, t->has_src ? (struct sockaddr *)&t->src : NULL, (struct sockaddr *)&t->dst, t->resolve_ms))
				break;
		}
		ct_fail(t, c, CT_RESOLVE_ADDR, ev, now);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		if (c->retries > 0) {
			c->retries--;
			if (!rdma_resolve_route(c->id, t->resolve_ms))
				break;
		}
		ct_fail(t, c, CT_RESOLVE_ROUTE, ev, now);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		ct_fail(t, c, CT_CONNECT, ev, now);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		// the peer's, before ours: our rdma_disconnect will raise none
		if (!ct_end(t, c, CT_DISCONNECT, now))
			c->disconnected = 1;
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&t->mu);
}

// ct_events is cmtime's event thread. The channel's fd does not block,
// so that a write to stop_fd can end the wait. It waits only when a read
// finds no event: a wait before each read would put a system call more
// on every event's way, and a step whose events come faster than the
// thread takes them would queue them behind it.
static void *ct_events(void *arg)
{
	struct ct *t = arg;
	struct pollfd p[2] = {{.fd = t->ch->fd, .events = POLLIN}, {.fd = t->stop_fd, .events = POLLIN}};
	for (;;) {
		struct rdma_cm_event *ev;
		if (!rdma_get_cm_event(t->ch, &ev)) {
			ct_handle(t, ev);
			rdma_ack_cm_event(ev);
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			break;
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			return NULL;
	}
	pthread_mutex_lock(&t->mu);
	t->read_err = errno ? -errno : -EIO;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int ct_open(struct ct *t, int n)
{
	memset(t, 0, sizeof *t);
	t->stop_fd = -1;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->n = n;
	t->conns = calloc(n > 0 ? n : 1, sizeof *t->conns);
	if (!t->conns)
		return -ENOMEM;
	t->ch = rdma_create_event_channel();
	if (!t->ch)
		return errno ? -errno : -ENODEV;
	int fl = fcntl(t->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(t->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	t->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (t->stop_fd < 0)
		return -errno;
	int rc = pthread_create(&t->thread, NULL, ct_events, t);
	if (rc)
		return -rc;
	t->thread_started = 1;
	return 0;
}

// ct_create_qp makes c's RC QP on the CQs every QP shares, made from the
// first id's device: cmtime's rdma_create_qp writes the CQs it made for
// its first QP back into the attributes every later call gets.
static int ct_create_qp(struct ct *t, struct ct_conn *c)
{
	if (!t->send_cq) {
		t->send_cq = ibv_create_cq(c->id->verbs, 1, NULL, NULL, 0);
		if (!t->send_cq)
			return errno ? -errno : -ENOMEM;
		t->recv_cq = ibv_create_cq(c->id->verbs, 1, NULL, NULL, 0);
		if (!t->recv_cq)
			return errno ? -errno : -ENOMEM;
	}
	struct ibv_qp_init_attr attr = {
		.send_cq = t->send_cq, .recv_cq = t->recv_cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	};
	if (rdma_create_qp(c->id, NULL, &attr))
		return -errno;
	c->qp = c->id->qp;
	return 0;
}

static int ct_op(struct ct *t, int step, struct ct_conn *c)
{
	switch (step) {
	case CT_CREATE_ID:
		return rdma_create_id(t->ch, &c->id, c, RDMA_PS_TCP) ? -errno : 0;
	case CT_BIND:
		return rdma_bind_addr(c->id, (struct sockaddr *)&t->src) ? -errno : 0;
	case CT_RESOLVE_ADDR:
		c->retries = t->retries;
		return rdma_resolve_addr(c->id, t->has_src ? (struct sockaddr *)&t->src : NULL, (struct sockaddr *)&t->dst, t->resolve_ms) ? -errno : 0;
	case CT_RESOLVE_ROUTE:
		c->retries = t->retries;
		return rdma_resolve_route(c->id, t->resolve_ms) ? -errno : 0;
	case CT_CREATE_QP:
		return ct_create_qp(t, c);
	case CT_CONNECT:
		return rdma_connect(c->id, &t->param) ? -errno : 0;
	case CT_DISCONNECT:
		// as cmtime: whatever rdma_disconnect says, the QP goes
		rdma_disconnect(c->id);
		if (c->qp) {
			rdma_destroy_qp(c->id);
			c->qp = NULL;
		}
		return 0;
	case CT_DESTROY:
		if (c->qp) // a connection that failed keeps its QP
			rdma_destroy_qp(c->id);
		c->qp = NULL;
		if (c->id)
			rdma_destroy_id(c->id);
		c->id = NULL;
		return 0;
	}
	return -EINVAL;
}

// ct_wait waits until the step's operations all ended, at most idle_ms
// after the last one that did (or after the wait began). t->mu held. 0,
// -ETIMEDOUT or the thread's read_err.
static int ct_wait(struct ct *t, int idle_ms)
{
	int64_t began = ct_now_us();
	while (t->done < t->started && !t->read_err) {
		if (idle_ms < 0) {
			pthread_cond_wait(&t->cond, &t->mu);
			continue;
		}
		int64_t until = (t->last_end_us > began ? t->last_end_us : began) + (int64_t)idle_ms * 1000;
		if (ct_now_us() >= until)
			return -ETIMEDOUT;
		// gettimeofday's clock is the realtime one the wait counts in
		struct timespec deadline = {.tv_sec = until / 1000000, .tv_nsec = (long)(until % 1000000) * 1000};
		pthread_cond_timedwait(&t->cond, &t->mu, &deadline);
	}
	return t->done < t->started ? t->read_err : 0;
}

int ct_step(struct ct *t, int step, const struct cm_addr *src, const struct cm_addr *dst, int retries, int resolve_ms,
	    uint8_t retry_count, int idle_ms, int64_t *start_us, int64_t *end_us)
{
	if (step < 0 || step >= CT_STEPS)
		return -EINVAL;
	pthread_mutex_lock(&t->mu);
	t->step = step;
	t->started = t->done = 0;
	t->last_end_us = 0;
	t->nnotes = 0;
	t->retries = retries;
	t->resolve_ms = resolve_ms;
	t->has_src = src && src->family;
	if (t->has_src)
		cm_to_sockaddr(src, &t->src);
	if (dst && dst->family)
		cm_to_sockaddr(dst, &t->dst);
	t->param = (struct rdma_conn_param){.responder_resources = 1, .initiator_depth = 1, .retry_count = retry_count};
	for (int i = 0; i < t->n; i++)
		t->conns[i].start_us = t->conns[i].end_us = 0;
	pthread_mutex_unlock(&t->mu);
	int async = ct_async(step);
	*end_us = 0;
	*start_us = ct_now_us();
	for (int i = 0; i < t->n; i++) {
		struct ct_conn *c = &t->conns[i];
		// cmtime creates and destroys every id, failed or not
		if (step != CT_CREATE_ID && step != CT_DESTROY && (c->failed || !c->id))
			continue;
		int64_t now = ct_now_us();
		pthread_mutex_lock(&t->mu);
		c->start_us = now;
		// counted before the call, so that its event never comes first;
		// a connection its peer ended awaits no disconnect event
		int awaits = async && !(step == CT_DISCONNECT && c->disconnected);
		t->started += awaits;
		pthread_mutex_unlock(&t->mu);
		int rc = ct_op(t, step, c);
		if (!rc && awaits)
			continue;
		now = ct_now_us();
		pthread_mutex_lock(&t->mu);
		if (!rc) {
			c->end_us = now;
		} else {
			ct_note(t, i, 0, rc);
			c->failed = 1;
			t->started -= awaits;
		}
		pthread_mutex_unlock(&t->mu);
		if (rc && step == CT_CREATE_ID) {
			// cmtime gives up, destroying the ids it made
			for (int j = 0; j < i; j++) {
				rdma_destroy_id(t->conns[j].id);
				t->conns[j].id = NULL;
			}
			return 0;
		}
	}
	int rc = 0;
	if (async) {
		pthread_mutex_lock(&t->mu);
		rc = ct_wait(t, idle_ms);
		pthread_mutex_unlock(&t->mu);
	}
	if (!rc)
		*end_us = ct_now_us();
	return rc;
}

void ct_close(struct ct *t)
{
	if (t->thread_started) {
		uint64_t one = 1;
		if (write(t->stop_fd, &one, sizeof one) == sizeof one)
			pthread_join(t->thread, NULL);
		else
			pthread_detach(t->thread);
	}
	for (int i = 0; t->conns && i < t->n; i++) {
		struct ct_conn *c = &t->conns[i];
		if (c->qp)
			rdma_destroy_qp(c->id);
		if (c->id)
			rdma_destroy_id(c->id);
	}
	if (t->recv_cq)
		ibv_destroy_cq(t->recv_cq);
	if (t->send_cq)
		ibv_destroy_cq(t->send_cq);
	if (t->ch)
		rdma_destroy_event_channel(t->ch);
	if (t->stop_fd >= 0)
		close(t->stop_fd);
	free(t->conns);
	free(t->notes);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cond);
	memset(t, 0, sizeof *t);
	t->stop_fd = -1;
}
