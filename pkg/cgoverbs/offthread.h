// A C loop on a thread of its own, for the loops that run as long as a
// benchmark: see runLoop in offthread.go.
#ifndef RDMACTL_OFFTHREAD_H
#define RDMACTL_OFFTHREAD_H

struct cv_off {
	void (*fn)(void *);
	void *arg;
	int efd; // written once fn returned
};

// cv_off_start runs o->fn(o->arg) on a new detached thread, which then
// adds 1 to o->efd. 0 or -errno of pthread_create.
int cv_off_start(struct cv_off *o);

// cv_off_call runs o->fn(o->arg) on this thread.
void cv_off_call(const struct cv_off *o);

#endif
