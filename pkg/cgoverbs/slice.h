// The time slices of rdmactl's loops in C that sleep on a completion
// channel. A slice ends with a signal to the looping thread: its wait for
// an event can then sleep in read, as the tools' -e does, with no poll()
// beside it, and the signal ends the read (its handler is installed
// without SA_RESTART). The timer repeats until the loop is out, so a
// signal that came between a look at the clock or the flag and the read
// is followed by another.
#ifndef RDMACTL_SLICE_H
#define RDMACTL_SLICE_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

// cv_slice_arm lets the slice signal reach this thread and clears the
// flag cv_slice_take reads. 0 or -errno.
int cv_slice_arm(void);

// cv_slice_start is cv_slice_arm and a timer that signals this thread
// every every_ms (at least 1). 0 or -errno.
int cv_slice_start(timer_t *t, int every_ms);

// cv_slice_signal sends the slice signal to thread tid of this process,
// one that called cv_slice_arm. 0 or -errno.
int cv_slice_signal(pid_t tid);

// cv_slice_take says whether the slice signal reached this thread since
// cv_slice_start or the last cv_slice_take, and clears the flag.
int cv_slice_take(void);

enum { CV_SLICE_REPEAT_MS = 10 };

// cv_now_ns is CLOCK_MONOTONIC in nanoseconds. Inline: the loops stamp
// messages with it.
static inline int64_t cv_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// cv_coarse_ms is CLOCK_MONOTONIC_COARSE in milliseconds. It is read from
// the vDSO's page, without a system call even where the precise clock
// needs one and a read of the clock hardware (the lab's guest emulates an
// hpet for it); a bound of milliseconds needs no more.
long cv_coarse_ms(void);

// cv_coarse_passed bounds a busy loop that looks at cv_coarse_ms now and
// then: the first look (*deadline negative) sets the deadline timeout_ms
// away, later ones say whether it has passed. The deadline adds the
// coarse clock's resolution, by which it lags the precise one, so it
// passes no earlier than timeout_ms after the first look.
int cv_coarse_passed(long *deadline, int timeout_ms);

// CV_POLLS_PER_CLOCK is how many empty polls a busy loop makes between two
// looks at cv_coarse_ms.
enum { CV_POLLS_PER_CLOCK = 4096 };

#endif
