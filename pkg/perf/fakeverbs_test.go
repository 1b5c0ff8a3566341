package perf

import (
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The verbs of rdma.PD and rdma.QP that perf never calls: this fake
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
func (*fakeCtlQP) PostRecvSGL(uint64, []rdma.SGE) error {
	return rdma.Errorf("ibv_post_recv", syscall.ENOSYS)
}
func (*fakeCtlQP) ToInit(rdma.InitAttr) error { return rdma.Errorf("ibv_modify_qp", syscall.ENOSYS) }
func (*fakeCtlQP) ToRTR(rdma.RTRAttr) error   { return rdma.Errorf("ibv_modify_qp", syscall.ENOSYS) }
func (*fakeCtlQP) ToRTS(rdma.RTSAttr) error   { return rdma.Errorf("ibv_modify_qp", syscall.ENOSYS) }
func (*fakeCtlQP) Query() (rdma.QPInfo, error) {
	return rdma.QPInfo{}, rdma.Errorf("ibv_query_qp", syscall.ENOSYS)
}
