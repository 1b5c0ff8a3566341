package cgoverbs

import "github.com/rdmactl/rdmactl/pkg/rdma"

// WaitFds returns the completion channel's fd and also's (-1 when also is
// nil, not this package's, or the CQ has no channel).
func (cq cmCQ) WaitFds(also rdma.EventChannel) (channel, other int) {
	channel, other = -1, -1
	if cq.CQ.ch != nil {
		channel = cq.CQ.ch.Fd()
	}
	if ec, ok := also.(*EventChannel); ok && ec != nil {
		other = int(ec.fd())
	}
	return channel, other
}
