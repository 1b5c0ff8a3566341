#include <errno.h>
#include <stdlib.h>
#include "device.h"
#include "cverrno.h"

// ibv_query_port is a macro; cgo needs a function to call.
int rdmactl_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	return cv_neg(ibv_query_port(ctx, port, attr));
}

// ibv_query_gid_ex returns the errno itself; ENODATA is an empty slot.
int rdmactl_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
				struct ibv_gid_entry *entry)
{
	return cv_neg(ibv_query_gid_ex(ctx, port, index, entry, 0));
}

// rdmactl_gid_table copies port's populated GID entries, at most max, to
// out and returns their number, or -errno. The device's whole table is
// read in one ibv_query_gid_table call, sized by the ports' table
// lengths: a few system calls instead of one per slot (rxe has 1024).
ssize_t rdmactl_gid_table(struct ibv_context *ctx, uint8_t port, struct ibv_gid_entry *out, size_t max)
{
	struct ibv_device_attr da;
	int rc = cv_neg(ibv_query_device(ctx, &da));
	if (rc)
		return rc;
	size_t total = 0;
	for (int p = 1; p <= da.phys_port_cnt; p++) {
		struct ibv_port_attr pa;
		if ((rc = rdmactl_query_port(ctx, p, &pa)))
			return rc;
		total += pa.gid_tbl_len;
	}
	if (total == 0)
		return 0;
	struct ibv_gid_entry *all = calloc(total, sizeof *all);
	if (!all)
		return -ENOMEM;
	ssize_t n = ibv_query_gid_table(ctx, all, total, 0);
	if (n < 0) {
		free(all);
		return n;
	}
	size_t k = 0;
	for (ssize_t i = 0; i < n && k < max; i++)
		if (all[i].port_num == port)
			out[k++] = all[i];
	free(all);
	return (ssize_t)k;
}
