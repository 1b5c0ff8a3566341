package cgoverbs

import (
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestCMEventNamesAreLibrdmacms(t *testing.T) {
	for ty := rdma.CMEventAddrResolved; ty <= rdma.CMEventTimewaitExit; ty++ {
		if got, want := ty.String(), cmEventStr(ty); got != want {
			t.Errorf("event %d: rdma names it %q, librdmacm %q", int(ty), got, want)
		}
	}
}
