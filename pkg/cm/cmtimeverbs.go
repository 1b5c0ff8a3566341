package cm

import (
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// cmtimeVerbs are the PD and CQs every QP of cmtime's server shares.
// cmtime passes one init-attribute struct to every rdma_create_qp, and
// the call writes the CQs it made for the first QP back into it, so each
// later QP is created on those CQs and costs a QP alone. rdmactl shares
// them on purpose, so that it does the same work (the client's QPs, made
// by the rdma.CMTimer, share theirs too).
type cmtimeVerbs struct {
	pd         rdma.PD
	send, recv rdma.CQ
}

var cmtimeQPCap = rdma.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}

// createQP makes id's RC QP on the shared verbs, making them on the first
// call from id's device.
func (v *cmtimeVerbs) createQP(id rdma.CMID) (rdma.QP, error) {
	dg, ok := id.(rdma.DatagramID)
	if !ok {
		return nil, &rdma.Error{Op: "rdma_create_qp", Errno: syscall.ENOSYS}
	}
	if v.pd == nil {
		if err := v.open(id); err != nil {
			return nil, err
		}
	}
	return dg.CreateTypedQP(v.pd, v.send, v.recv, cmtimeQPCap, rdma.QPTypeRC, false)
}

func (v *cmtimeVerbs) open(id rdma.CMID) error {
	ctx := id.Context()
	if ctx == nil {
		return &rdma.Error{Op: "rdma_create_qp", Errno: syscall.EINVAL}
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		return err
	}
	send, err := ctx.CreateCQ(int(cmtimeQPCap.MaxSendWR), nil)
	if err != nil {
		pd.Close()
		return err
	}
	recv, err := ctx.CreateCQ(int(cmtimeQPCap.MaxRecvWR), nil)
	if err != nil {
		send.Close()
		pd.Close()
		return err
	}
	v.pd, v.send, v.recv = pd, send, recv
	return nil
}

// close frees the shared verbs once no QP is left on them.
func (v *cmtimeVerbs) close() {
	if v.pd == nil {
		return
	}
	v.recv.Close()
	v.send.Close()
	v.pd.Close()
	*v = cmtimeVerbs{}
}
