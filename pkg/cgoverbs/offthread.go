package cgoverbs

/*
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include "offthread.h"
*/
import "C"

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// offThread runs the C function fn(arg) on a thread of its own and waits
// for it parked on an eventfd, so that no P of the Go runtime sits in a
// cgo call meanwhile. A P in a long cgo call keeps the runtime's monitor
// thread waking every few tens of microseconds for the first ten
// milliseconds (it hands such a P off only after that, when another P is
// idle: GOMAXPROCS above 1), and each wake takes a CPU from the loop or
// from its peer; a parked goroutine leaves every P idle and the monitor
// asleep. fn and arg must stay valid until offThread returns.
func offThread(fn, arg unsafe.Pointer) error {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		en, _ := err.(syscall.Errno)
		return rdma.Errorf("eventfd", en)
	}
	f := os.NewFile(uintptr(efd), "loop-done")
	defer f.Close()
	o := (*C.struct_cv_off)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_cv_off{}))))
	if o == nil {
		return rdma.Errorf("loop thread", syscall.ENOMEM)
	}
	defer C.free(unsafe.Pointer(o))
	o.fn, o.arg, o.efd = (*[0]byte)(fn), arg, C.int(efd)
	if rc := C.cv_off_start(o); rc != 0 {
		return callErr("pthread_create", rc)
	}
	var b [8]byte
	if _, err := f.Read(b[:]); err == nil {
		return nil
	}
	// The poller did not take the fd: the thread still holds o, so wait
	// for it in poll(2).
	fds := []unix.PollFd{{Fd: int32(efd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err == nil {
			if _, err := unix.Read(efd, b[:]); err == nil {
				return nil
			}
		}
	}
}
