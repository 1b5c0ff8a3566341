#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "slice.h"

#define CV_SLICE_SIGNAL (SIGRTMIN + 7)

static __thread volatile sig_atomic_t cv_slice_fired;

static void cv_on_slice_signal(int sig)
{
	(void)sig;
	cv_slice_fired = 1;
}

static pthread_once_t cv_signal_once = PTHREAD_ONCE_INIT;
static int cv_signal_err;

static void cv_install_slice_signal(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = cv_on_slice_signal;
	// the Go runtime asks every handler for the alternate stack
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(CV_SLICE_SIGNAL, &sa, NULL))
		cv_signal_err = errno;
}

static struct timespec cv_ms(int ms)
{
	return (struct timespec){.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
}

int cv_slice_arm(void)
{
	pthread_once(&cv_signal_once, cv_install_slice_signal);
	if (cv_signal_err)
		return -cv_signal_err;
	// a runLoop thread starts with every signal blocked
	sigset_t own;
	sigemptyset(&own);
	sigaddset(&own, CV_SLICE_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &own, NULL);
	cv_slice_fired = 0;
	return 0;
}

int cv_slice_start(timer_t *t, int every_ms)
{
	int rc = cv_slice_arm();
	if (rc)
		return rc;
	struct sigevent sev = {0};
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = CV_SLICE_SIGNAL;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, t))
		return -errno;
	struct timespec every = cv_ms(every_ms > 0 ? every_ms : 1);
	struct itimerspec its = {.it_value = every, .it_interval = every};
	if (timer_settime(*t, 0, &its, NULL)) {
		int err = -errno;
		timer_delete(*t);
		return err;
	}
	return 0;
}

long cv_coarse_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int cv_coarse_passed(long *deadline, int timeout_ms)
{
	if (*deadline >= 0)
		return cv_coarse_ms() >= *deadline;
	struct timespec res;
	long res_ms = 1;
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0)
		res_ms = (res.tv_sec * 1000000000L + res.tv_nsec + 999999) / 1000000;
	*deadline = cv_coarse_ms() + timeout_ms + res_ms;
	return 0;
}

int cv_slice_signal(pid_t tid)
{
	return syscall(SYS_tgkill, getpid(), tid, CV_SLICE_SIGNAL) ? -errno : 0;
}

int cv_slice_take(void)
{
	if (!cv_slice_fired)
		return 0;
	cv_slice_fired = 0;
	return 1;
}
