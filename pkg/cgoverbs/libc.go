package cgoverbs

/*
#include <string.h>
#include <infiniband/verbs.h>
*/
import "C"

import (
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The C libraries' own texts. pkg/rdma keeps pure-Go copies of them so
// that commands format without cgo; the tests hold the copies to these.

func libcStrerror(e syscall.Errno) string { return C.GoString(C.strerror(C.int(e))) }

func libibverbsWCStatusText(s rdma.WCStatus) string {
	return C.GoString(C.ibv_wc_status_str(C.enum_ibv_wc_status(s)))
}
