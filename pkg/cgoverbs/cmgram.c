#include <errno.h>
#include <endian.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "cmgram.h"
#include "cverrno.h"

#define CMG_CALL(call) ((call) ? -errno : 0)

enum { CMG_MAX_POLL = 16 };

void cmg_ah_from(const struct ibv_ah_attr *a, struct cmg_ah *out)
{
	memset(out, 0, sizeof *out);
	memcpy(out->dgid, a->grh.dgid.raw, 16);
	out->flow_label = a->grh.flow_label;
	out->dlid = a->dlid;
	out->sl = a->sl;
	out->port = a->port_num;
	out->is_global = a->is_global;
	out->sgid_index = a->grh.sgid_index;
	out->hop_limit = a->grh.hop_limit;
	out->traffic_class = a->grh.traffic_class;
	out->static_rate = a->static_rate;
	out->src_path_bits = a->src_path_bits;
}

int cmg_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **out, int ps)
{
	return CMG_CALL(rdma_create_id(ch, out, NULL, (enum rdma_port_space)ps));
}

int cmg_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *send, struct ibv_cq *recv,
		  const struct ibv_qp_cap *cap, int sig_all, int qp_type, int block_self_mcast)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof a);
	a.cap = *cap;
	a.sq_sig_all = sig_all;
	a.qp_type = qp_type;
	a.send_cq = send;
	a.recv_cq = recv;
	if (pd) {
		a.comp_mask |= IBV_QP_INIT_ATTR_PD;
		a.pd = pd;
	}
	if (block_self_mcast) {
		a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	}
	return CMG_CALL(rdma_create_qp_ex(id, &a));
}

static socklen_t cmg_sockaddr(int family, const uint8_t *ip, uint32_t scope, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, ip, 4);
		return sizeof *s;
	}
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
	s->sin6_family = AF_INET6;
	s->sin6_scope_id = scope;
	memcpy(&s->sin6_addr, ip, 16);
	return sizeof *s;
}

int cmg_join(struct rdma_cm_id *id, int family, const uint8_t *ip, uint32_t scope, int send_only)
{
	struct sockaddr_storage ss;
	struct rdma_cm_join_mc_attr_ex mc;

	cmg_sockaddr(family, ip, scope, &ss);
	memset(&mc, 0, sizeof mc);
	mc.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	mc.addr = (struct sockaddr *)&ss;
	mc.join_flags = send_only ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER : RDMA_MC_JOIN_FLAG_FULLMEMBER;
	return CMG_CALL(rdma_join_multicast_ex(id, &mc, NULL));
}

int cmg_leave(struct rdma_cm_id *id, int family, const uint8_t *ip, uint32_t scope)
{
	struct sockaddr_storage ss;

	cmg_sockaddr(family, ip, scope, &ss);
	return CMG_CALL(rdma_leave_multicast(id, (struct sockaddr *)&ss));
}

int cmg_reject(struct rdma_cm_id *id)
{
	return CMG_CALL(rdma_reject(id, NULL, 0));
}

int cmg_set_u8_option(struct rdma_cm_id *id, int name, uint8_t v)
{
	return CMG_CALL(rdma_set_option(id, RDMA_OPTION_ID, name, &v, sizeof v));
}

int cmg_active_mtu(struct rdma_cm_id *id, int *mtu)
{
	struct ibv_port_attr pa;
	int rc = ibv_query_port(id->verbs, id->port_num, &pa);

	if (rc)
		return cv_neg(rc);
	*mtu = 1 << (pa.active_mtu + 7);
	return 0;
}
int cmg_qkey(struct ibv_qp *qp, uint32_t *out)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int rc = ibv_query_qp(qp, &a, IBV_QP_QKEY, &ia);

	if (rc)
		return cv_neg(rc);
	*out = a.qkey;
	return 0;
}

int cmg_poll_reply(struct ibv_cq *cq, struct cmg_wc *out, int max, int want, struct ibv_pd *pd, void *grh,
		   uint8_t port, struct ibv_ah **ah, int *ah_err)
{
	struct ibv_wc wc[CMG_MAX_POLL];

	if (max > CMG_MAX_POLL)
		max = CMG_MAX_POLL;
	int n = ibv_poll_cq(cq, max, wc);
	if (n < 0)
		return cv_neg(n);
	for (int i = 0; i < n; i++) {
		out[i].wr_id = wc[i].wr_id;
		out[i].status = wc[i].status;
		out[i].opcode = wc[i].opcode;
		out[i].byte_len = wc[i].byte_len;
		out[i].has_imm = !!(wc[i].wc_flags & IBV_WC_WITH_IMM);
		out[i].imm = out[i].has_imm ? be32toh(wc[i].imm_data) : 0;
	}
	if (n && want) {
		*ah = ibv_create_ah_from_wc(pd, &wc[0], grh, port);
		if (!*ah)
			*ah_err = -(errno ? errno : EINVAL);
	}
	return n;
}
