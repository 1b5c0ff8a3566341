// The one error convention of rdmactl's C helpers: they return 0 on
// success and -errno on failure, and the Go side wraps -rc in rdma.Error.
#ifndef RDMACTL_CVERRNO_H
#define RDMACTL_CVERRNO_H

#include <errno.h>

// cv_neg turns what a verbs call returned on failure into -errno. The
// calls disagree: ibv_modify_qp, ibv_post_send and ibv_req_notify_cq
// return the errno itself, others -1 with errno set, some providers
// -errno. Nothing is replaced: a -1 without errno stays -1 (EPERM's
// number, the best a caller can be told).
static inline int cv_neg(int rc)
{
	if (rc > 0)
		return -rc;
	if (rc == -1 && errno > 0)
		return -errno;
	return rc;
}

#endif
