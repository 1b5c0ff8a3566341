package pollwait

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RawPoll sleeps until fd a or b (ignored when negative) is readable or
// timeout has passed, and says which are readable. A signal ends it
// early (neither ready, no error).
//
// Why raw: a cgo call or an ordinary system call that blocks tells the
// scheduler, and the Go runtime then retakes the thread's P, wakes
// another thread to hold it, lets sysmon fall asleep and wakes it again
// at the next call: several context switches per wait on top of the
// wait's own one, which one CPU pays for in time. A raw system call keeps
// the P, so a wait costs one sleep and one wake-up, as in C. The price:
// the P runs nothing else meanwhile, so callers bound timeout (the
// scheduler's preemption signal also ends the sleep after 10 ms) and use
// it only where no other goroutine needs that P.
func RawPoll(a, b int, timeout time.Duration) (aReady, bReady bool, err error) {
	fds := [2]unix.PollFd{{Fd: int32(a), Events: unix.POLLIN}, {Fd: int32(b), Events: unix.POLLIN}}
	n := uintptr(1)
	if b >= 0 {
		n = 2
	}
	ts := unix.NsecToTimespec(int64(max(timeout, 0)))
	_, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), n,
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	switch {
	case errno == unix.EINTR:
		return false, false, nil
	case errno != 0:
		return false, false, errno
	case fds[0].Revents&unix.POLLNVAL != 0 || fds[1].Revents&unix.POLLNVAL != 0:
		return false, false, unix.EBADF
	}
	return fds[0].Revents != 0, fds[1].Revents != 0, nil
}
