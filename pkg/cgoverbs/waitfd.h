// Waits on file descriptors that end at a deadline, never before it: a
// caller that times out at the end of a timed run takes a timeout for
// "the run is over" and checks that against its own clock.
#ifndef RDMACTL_WAITFD_H
#define RDMACTL_WAITFD_H

#include <stdint.h>

// cv_deadline is timeout_ms from now on CLOCK_MONOTONIC, in ns; -1 (no
// deadline) when timeout_ms is negative.
int64_t cv_deadline(int timeout_ms);

// cv_wait_fds polls fd a (and b when >= 0) for input until deadline (see
// cv_deadline), retrying on EINTR. Returns a bitmask of the ready fds
// (1 = a, 2 = b), 0 once the deadline has passed, or -errno.
int cv_wait_fds(int a, int b, int64_t deadline);

#endif
