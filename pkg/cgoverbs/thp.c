// rdmactl's memory is a few megabytes: a heap of about one, thread stacks,
// and RDMA buffers the device reads through its own page tables. With
// transparent huge pages "always" (Debian's default) the first touch of a
// thread's 8 MB stack can fault in a whole 2 MB page: the lab saw a
// ping -s -P server's RSS jump by 2 MB that way, at random, at start-up
// or every few hundred clients. The constructor below turns THP off
// for the process; the programs it starts (modprobe, iptables) inherit
// the setting, small and short-lived as they are.
#include <sys/prctl.h>

// Before the Go runtime starts a thread, as cv_one_malloc_arena: a huge
// page faulted in before the switch stays.
__attribute__((constructor)) static void cv_no_huge_pages(void)
{
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}
