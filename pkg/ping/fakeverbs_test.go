package ping

import (
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The verbs of rdma.PD and rdma.QP that ping never calls: this fake
// refuses them.

func (*fakePD) CreateQP(rdma.QPInitAttr) (rdma.QP, error) {
	return nil, rdma.Errorf("ibv_create_qp", syscall.ENOSYS)
}
func (*fakePD) CreateAH(rdma.AHAttr) (rdma.AH, error) {
	return nil, rdma.Errorf("ibv_create_ah", syscall.ENOSYS)
}
func (*fakePD) CreateSRQ(rdma.SRQAttr) (rdma.SRQ, error) {
	return nil, rdma.Errorf("ibv_create_srq", syscall.ENOSYS)
}
func (*fakeQP) PostRecvSGL(uint64, []rdma.SGE) error {
	return rdma.Errorf("ibv_post_recv", syscall.ENOSYS)
}
func (*fakeQP) ToInit(rdma.InitAttr) error { return rdma.Errorf("ibv_modify_qp", syscall.ENOSYS) }
func (*fakeQP) ToRTR(rdma.RTRAttr) error   { return rdma.Errorf("ibv_modify_qp", syscall.ENOSYS) }
func (*fakeQP) ToRTS(rdma.RTSAttr) error   { return rdma.Errorf("ibv_modify_qp", syscall.ENOSYS) }
func (*fakeQP) Query() (rdma.QPInfo, error) {
	return rdma.QPInfo{}, rdma.Errorf("ibv_query_qp", syscall.ENOSYS)
}
