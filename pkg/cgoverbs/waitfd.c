#include <errno.h>
#include <poll.h>
#include "slice.h"
#include "waitfd.h"

int64_t cv_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : cv_now_ns() + (int64_t)timeout_ms * 1000000;
}

// cv_poll_timeout is poll(2)'s timeout for deadline: the milliseconds
// left, rounded up, since a part of one dropped would end the wait before
// its deadline.
static int cv_poll_timeout(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t left = deadline - cv_now_ns();
	if (left <= 0)
		return 0;
	return (int)((left + 999999) / 1000000);
}

int cv_wait_fds(int a, int b, int64_t deadline)
{
	struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
	for (;;) {
		int n = poll(p, b >= 0 ? 2 : 1, cv_poll_timeout(deadline));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		return (p[0].revents ? 1 : 0) | (b >= 0 && p[1].revents ? 2 : 0);
	}
}
