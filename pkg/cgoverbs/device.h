// Device and port queries cgo cannot call directly (macros, or several
// calls that are cheaper done in C); each returns 0 or -errno.
#ifndef RDMACTL_DEVICE_H
#define RDMACTL_DEVICE_H

#include <sys/types.h>
#include <infiniband/verbs.h>

int rdmactl_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
int rdmactl_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index, struct ibv_gid_entry *entry);
// rdmactl_gid_table copies port's populated GID entries, at most max, to
// out and returns their number, or -errno.
ssize_t rdmactl_gid_table(struct ibv_context *ctx, uint8_t port, struct ibv_gid_entry *out, size_t max);

#endif
