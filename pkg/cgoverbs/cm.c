#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "cm.h"
#include "qpinit.h"
#include "waitfd.h"

// librdmacm's calls return -1 and set errno.
#define CM_CALL(call) ((call) ? -errno : 0)

socklen_t cm_to_sockaddr(const struct cm_addr *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		s->sin_family = AF_INET;
		s->sin_port = htons(a->port);
		memcpy(&s->sin_addr, a->ip, 4);
		return sizeof *s;
	}
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(a->port);
	s->sin6_scope_id = a->scope;
	memcpy(&s->sin6_addr, a->ip, 16);
	return sizeof *s;
}

int cm_resolve_addr(struct rdma_cm_id *id, const struct cm_addr *src, const struct cm_addr *dst, int timeout_ms)
{
	struct sockaddr_storage s, d;
	cm_to_sockaddr(dst, &d);
	if (!src->family)
		return rdma_resolve_addr(id, NULL, (struct sockaddr *)&d, timeout_ms) ? -errno : 0;
	cm_to_sockaddr(src, &s);
	return rdma_resolve_addr(id, (struct sockaddr *)&s, (struct sockaddr *)&d, timeout_ms) ? -errno : 0;
}

int cm_bind_addr(struct rdma_cm_id *id, const struct cm_addr *a)
{
	struct sockaddr_storage s;
	cm_to_sockaddr(a, &s);
	return rdma_bind_addr(id, (struct sockaddr *)&s) ? -errno : 0;
}

int cm_lookup(const char *name, struct cm_addr *out)
{
	struct addrinfo *res;
	int rc = getaddrinfo(name, NULL, NULL, &res);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	if (res->ai_family == AF_INET) {
		out->family = AF_INET;
		memcpy(out->ip, &((struct sockaddr_in *)res->ai_addr)->sin_addr, 4);
	} else if (res->ai_family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)res->ai_addr;
		out->family = AF_INET6;
		memcpy(out->ip, &s->sin6_addr, 16);
		out->scope = s->sin6_scope_id;
	} else {
		rc = 1;
	}
	freeaddrinfo(res);
	return rc;
}

int cm_create_channel(struct rdma_event_channel **out)
{
	*out = rdma_create_event_channel();
	return *out ? 0 : -errno;
}

int cm_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **out)
{
	return CM_CALL(rdma_create_id(ch, out, NULL, RDMA_PS_TCP));
}

int cm_destroy_id(struct rdma_cm_id *id)
{
	return CM_CALL(rdma_destroy_id(id));
}

int cm_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	return CM_CALL(rdma_migrate_id(id, ch));
}

int cm_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	return CM_CALL(rdma_resolve_route(id, timeout_ms));
}

int cm_listen(struct rdma_cm_id *id, int backlog)
{
	return CM_CALL(rdma_listen(id, backlog));
}

int cm_establish(struct rdma_cm_id *id)
{
	return CM_CALL(rdma_establish(id));
}

int cm_disconnect(struct rdma_cm_id *id)
{
	return CM_CALL(rdma_disconnect(id));
}

int cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	return CM_CALL(rdma_create_qp(id, pd, attr));
}

int cm_wait_readable(int fd, int timeout_ms)
{
	int ready = cv_wait_fds(fd, -1, cv_deadline(timeout_ms));
	if (ready < 0)
		return ready;
	return ready ? 0 : -ETIMEDOUT;
}

int cm_get_event(struct rdma_event_channel *ch, int timeout_ms, struct cm_event_copy *out)
{
	// Without a bound the channel's blocking read is the wait: one
	// system call an event, as the C tools'.
	if (timeout_ms >= 0) {
		int rc = cm_wait_readable(ch->fd, timeout_ms);
		if (rc)
			return rc;
	}
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		return -errno;
	out->type = ev->event;
	out->status = ev->status;
	out->id = ev->id;
	out->listen_id = ev->listen_id;
	out->is_ud = ev->id->ps == RDMA_PS_UDP || ev->id->ps == RDMA_PS_IPOIB;
	const void *pd = out->is_ud ? ev->param.ud.private_data : ev->param.conn.private_data;
	int len = out->is_ud ? ev->param.ud.private_data_len : ev->param.conn.private_data_len;
	out->private_len = pd && len > 0 ? (len < CM_PRIVATE_DATA_MAX ? len : CM_PRIVATE_DATA_MAX) : 0;
	if (out->private_len)
		memcpy(out->private_data, pd, out->private_len);
	if (out->is_ud) {
		out->qp_num = ev->param.ud.qp_num;
		out->qkey = ev->param.ud.qkey;
		cmg_ah_from(&ev->param.ud.ah_attr, &out->ah);
	} else {
		out->resp_res = ev->param.conn.responder_resources;
		out->init_depth = ev->param.conn.initiator_depth;
		out->retry = ev->param.conn.retry_count;
		out->rnr_retry = ev->param.conn.rnr_retry_count;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

int cm_connect(struct rdma_cm_id *id, int with_param, uint8_t resp, uint8_t init,
	       uint8_t retry, uint8_t rnr, uint32_t qpn, int accept)
{
	struct rdma_conn_param p;
	memset(&p, 0, sizeof p);
	p.responder_resources = resp;
	p.initiator_depth = init;
	p.retry_count = retry;
	p.rnr_retry_count = rnr;
	p.qp_num = qpn;
	if (accept)
		return CM_CALL(rdma_accept(id, with_param ? &p : NULL));
	return CM_CALL(rdma_connect(id, with_param ? &p : NULL));
}

int cm_init_own_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	return cv_qp_to_init(qp, id->port_num, 0);
}

int cm_ready_own_qp(struct rdma_cm_id *id, struct ibv_qp *qp, int min_rnr_timer, int rnr_retry,
		    int *failed_step)
{
	static const enum ibv_qp_state steps[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS};
	for (int i = 0; i < 3; i++) {
		struct ibv_qp_attr a;
		int mask;
		memset(&a, 0, sizeof a);
		a.qp_state = steps[i];
		if (rdma_init_qp_attr(id, &a, &mask)) {
			*failed_step = 0;
			return -errno;
		}
		if (steps[i] == IBV_QPS_RTR && min_rnr_timer >= 0) {
			a.min_rnr_timer = (uint8_t)min_rnr_timer;
			mask |= IBV_QP_MIN_RNR_TIMER;
		}
		if (steps[i] == IBV_QPS_RTS && rnr_retry >= 0) {
			a.rnr_retry = (uint8_t)rnr_retry;
			mask |= IBV_QP_RNR_RETRY;
		}
		// ibv_modify_qp returns the errno itself.
		int rc = ibv_modify_qp(qp, &a, mask);
		if (rc) {
			*failed_step = 1;
			return rc > 0 ? -rc : rc;
		}
	}
	return 0;
}

int cm_peer(struct rdma_cm_id *id, uint8_t *ip, uint16_t *port)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)sa;
		memcpy(ip, &s->sin_addr, 4);
		*port = ntohs(s->sin_port);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;
		memcpy(ip, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		return AF_INET6;
	}
	return 0;
}
