package cgoverbs

import (
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestCMEventNamesAreLibrdmacms(t *testing.T) {
	for ty := rdma.CMEventAddrResolved; ty <= rdma.CMEventTimewaitExit; ty++ {
		if got, want := ty.String(), cmEventStr(ty); got != want {
			t.Errorf("event %d: rdma names it %q, librdmacm %q", int(ty), got, want)
		}
	}
}

// The CM event wait keeps its deadline when signals interrupt poll: a
// steady stream of them must not make a 200 ms wait last until they stop.
func TestEventWaitKeepsDeadlineAcrossSignals(t *testing.T) {
	fd := silentPipe(t)
	underSignals(t, 10*time.Millisecond, func() {
		start := time.Now()
		errno := waitReadable(fd, 200*time.Millisecond)
		took := time.Since(start)
		if errno != syscall.ETIMEDOUT {
			t.Fatalf("wait returned errno %d (%v), want ETIMEDOUT", int(errno), errno)
		}
		if took > 700*time.Millisecond {
			t.Fatalf("a 200ms wait took %v under signals", took)
		}
	})
}
