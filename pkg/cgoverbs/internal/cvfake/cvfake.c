#include <errno.h>
#include <stdlib.h>
#include "cvfake.h"

static struct cvf *cvf_of(struct ibv_context *c)
{
	return (struct cvf *)c;
}

static int cvf_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct cvf *f = cvf_of(qp->context);
	*bad = wr;
	errno = f->err;
	return f->post_rc;
}

static int cvf_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct cvf *f = cvf_of(qp->context);
	*bad = wr;
	errno = f->err;
	return f->post_rc;
}

static int cvf_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct cvf *f = cvf_of(srq->context);
	*bad = wr;
	errno = f->err;
	return f->post_rc;
}

static int cvf_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct cvf *f = cvf_of(cq->context);
	errno = f->err;
	return f->poll_rc;
}

static int cvf_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return cvf_of(cq->context)->notify_rc;
}

struct cvf *cvf_new(int post_rc, int poll_rc, int notify_rc, int err)
{
	struct cvf *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->post_rc = post_rc;
	f->poll_rc = poll_rc;
	f->notify_rc = notify_rc;
	f->err = err;
	f->ctx.ops.post_send = cvf_post_send;
	f->ctx.ops.post_recv = cvf_post_recv;
	f->ctx.ops.post_srq_recv = cvf_post_srq_recv;
	f->ctx.ops.poll_cq = cvf_poll_cq;
	f->ctx.ops.req_notify_cq = cvf_req_notify_cq;
	f->qp.context = f->cq.context = f->srq.context = f->ah.context = f->ch.context = &f->ctx;
	f->qp.send_cq = f->qp.recv_cq = &f->cq;
	f->qp.qp_type = IBV_QPT_RC;
	f->cq.channel = &f->ch;
	f->ch.fd = -1;
	return f;
}
