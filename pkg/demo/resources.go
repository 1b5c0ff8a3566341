package demo

import (
	"errors"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// resources are the example's verbs objects: a PD, a one-entry CQ that is
// only polled (there is never more than one completion outstanding), the
// registered buffer and an RC QP with one WR and one SGE each way.
type resources struct {
	pd rdma.PD
	cq rdma.CQ
	mr rdma.MR
	qp rdma.QP
	wc [1]rdma.WC
}

// allocate is the original's resources_create from the PD to the MR, with
// its failure lines; the server announces its message between the buffer
// and its registration, as the original does.
func (r *runner) allocate() bool {
	vd, ok := r.dev.(rdma.VerbsDevice)
	if !ok {
		r.fail("ibv_alloc_pd failed") // a device that makes no resources
		return false
	}
	ctx := vd.VerbsContext()
	var err error
	if r.res.pd, err = ctx.AllocPD(); err != nil {
		r.fail("ibv_alloc_pd failed")
		return false
	}
	if r.res.cq, err = ctx.CreateCQ(1, nil); err != nil {
		r.fail("failed to create CQ with 1 entries")
		return false
	}
	r.res.mr, err = r.res.pd.RegMR(bufferSize, accessAllRights)
	if e := (*rdma.Error)(nil); errors.As(err, &e) && e.Op == rdma.OpMalloc {
		r.fail("failed to malloc %d bytes to memory buffer", msgSize)
		return false
	}
	if !r.client() {
		r.printf("going to send the message: '%s'\n", r.opts.message())
	}
	if err != nil {
		r.fail("ibv_reg_mr failed with mr_flags=0x%x", mrFlags)
		return false
	}
	return true
}

// createQP makes the RC QP on the one CQ, every send signalled.
func (res *resources) createQP() (err error) {
	res.qp, err = res.pd.CreateQP(rdma.QPInitAttr{
		Type: rdma.QPTypeRC, SendCQ: res.cq, RecvCQ: res.cq,
		Cap: rdma.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, SigAll: true},
	})
	return err
}

// postRecv posts a receive into the first n bytes of the buffer.
func (res *resources) postRecv(n uint32) error { return res.qp.PostRecv(0, rdma.SGEOf(res.mr, n)) }

// postSend posts op over the first n bytes of the buffer; remoteAddr and
// rkey name the peer's buffer for RDMA reads and writes.
func (res *resources) postSend(op rdma.WROpcode, n uint32, remoteAddr uint64, rkey uint32) error {
	return res.qp.PostSend(rdma.SendWR{Op: op, Local: rdma.SGEOf(res.mr, n), Signaled: true, RemoteAddr: remoteAddr, RKey: rkey})
}

// poll returns at most one completion without waiting.
func (res *resources) poll() (rdma.WC, bool, error) {
	n, err := res.cq.Poll(res.wc[:])
	if err != nil || n == 0 {
		return rdma.WC{}, false, err
	}
	return res.wc[0], true, nil
}

// close releases in the original's order: QP, MR and its memory, CQ, PD.
func (res *resources) close() error {
	var errs []error
	if res.qp != nil {
		errs = append(errs, res.qp.Close())
	}
	if res.mr != nil {
		errs = append(errs, res.mr.Close())
	}
	if res.cq != nil {
		errs = append(errs, res.cq.Close())
	}
	if res.pd != nil {
		errs = append(errs, res.pd.Close())
	}
	return errors.Join(errs...)
}
