#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "offthread.h"

void cv_off_call(const struct cv_off *o)
{
	o->fn(o->arg);
}

static void *cv_off_main(void *p)
{
	struct cv_off *o = p;
	// Signals sent to the process (SIGINT, SIGTERM) go to Go's threads,
	// which handle them; a loop that needs one of its own unblocks it.
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	// A thread that shares its descriptor table (with Go's threads) makes
	// the kernel take and drop a reference on the file of every system
	// call, the post_send doorbell's among them; the single-threaded tools
	// skip that, and so does a table of the thread's own. A failure only
	// leaves the shared one. Descriptors closed meanwhile stay open in
	// this copy until the thread ends, with the slice.
	unshare(CLONE_FILES);
	// The kernel places a new thread by load figures that lag behind a
	// moment of Go's threads at work, and can put it beside the peer's
	// poller until its next rebalance, milliseconds of round trips later.
	// A wake-up takes an idle CPU if the thread's own is busy, as the
	// tools' loop does after their last blocking read: a nap first.
	struct timespec nap = {.tv_nsec = 1};
	nanosleep(&nap, NULL);
	cv_off_call(o);
	uint64_t one = 1;
	// an eventfd's write of 1 fails only at its count's limit
	while (write(o->efd, &one, sizeof one) < 0)
		;
	return NULL;
}

int cv_off_start(struct cv_off *o)
{
	pthread_attr_t at;
	int rc = pthread_attr_init(&at);
	if (rc)
		return -rc;
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	rc = pthread_create(&t, &at, cv_off_main, o);
	pthread_attr_destroy(&at);
	return -rc;
}
