package cgoverbs

/*
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include "offthread.h"
*/
import "C"

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// runLoop runs the C loop fn(arg) and returns once it returned. With
// more than one P (GOMAXPROCS above 1) the loop gets a thread of its own
// and the goroutine waits parked on an eventfd, so that no P sits in a
// cgo call meanwhile: the runtime hands such a P off only after 10 ms
// when another P is idle, and until then its monitor thread wakes every
// few tens of microseconds, each wake taking a CPU from the loop or from
// its peer; a parked goroutine leaves every P idle and the monitor asleep.
// With one P the runtime hands the P off at once, so the loop runs on the
// caller's thread: a new thread for each call cost round trips on one CPU.
// fn and arg must stay valid until runLoop returns.
func runLoop(fn, arg unsafe.Pointer) error {
	o := (*C.struct_cv_off)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_cv_off{}))))
	if o == nil {
		return rdma.Errorf("loop thread", syscall.ENOMEM)
	}
	defer C.free(unsafe.Pointer(o))
	o.fn, o.arg = (*[0]byte)(fn), arg
	if runtime.GOMAXPROCS(0) == 1 {
		C.cv_off_call(o)
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		en, _ := err.(syscall.Errno)
		return rdma.Errorf("eventfd", en)
	}
	f := os.NewFile(uintptr(efd), "loop-done")
	defer f.Close()
	o.efd = C.int(efd)
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
