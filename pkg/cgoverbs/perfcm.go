package cgoverbs

import (
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

var _ rdma.PerfCMID = (*CMID)(nil)

// ReadyPerfQP brings QP qp of a perf endpoint of this package to RTS for
// the id's connection (rdmactl perf -R).
func (id *CMID) ReadyPerfQP(ep rdma.PerfEndpoint, qp int, minRNRTimer uint8) error {
	e, ok := ep.(*perfEndpoint)
	if !ok {
		return &rdma.Error{Op: "ibv_modify_qp", Errno: syscall.EINVAL}
	}
	q, err := e.qpAt(qp)
	if err != nil {
		return err
	}
	return id.readyQP(q.qp, int(minRNRTimer))
}
