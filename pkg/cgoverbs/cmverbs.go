package cgoverbs

import (
	"errors"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The data-path verbs as pkg/rdma's interfaces, for CM connections and
// for programs that make their own QPs: thin views of the types in
// verbs.go whose errors become rdma.Error with the C call's name and
// errno.

type (
	cmContext     struct{ *Context }
	cmPD          struct{ *PD }
	cmCompChannel struct{ *CompChannel }
	cmCQ          struct{ *CQ }
	cmQP          struct{ *QP }
	cmMR          struct {
		*MR
		buf *Buffer
	}
)

var (
	_ rdma.Context = cmContext{}
	_ rdma.PD      = cmPD{}
	_ rdma.MR      = cmMR{}
	_ rdma.CQ      = cmCQ{}
	_ rdma.QP      = cmQP{}
	_ rdma.AH      = (*AH)(nil)
	_ rdma.SRQ     = (*SRQ)(nil)

	_ rdma.VerbsDevice = (*Context)(nil)
)

// VerbsContext is the open device as rdma's resource factory.
func (c *Context) VerbsContext() rdma.Context { return cmContext{c} }

// asRDMAError gives err, which verbs.go wraps around an errno, the
// convention of this boundary; an error without errno stays as it is.
func asRDMAError(op string, err error) error {
	if err == nil {
		return nil
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return &rdma.Error{Op: op, Errno: en}
	}
	return err
}

func (c cmContext) AllocPD() (rdma.PD, error) {
	pd, err := c.Context.AllocPD()
	if err != nil {
		return nil, asRDMAError("ibv_alloc_pd", err)
	}
	return cmPD{pd}, nil
}

func (c cmContext) CreateCompChannel() (rdma.CompChannel, error) {
	ch, err := c.Context.CreateCompChannel()
	if err != nil {
		return nil, asRDMAError("ibv_create_comp_channel", err)
	}
	return cmCompChannel{ch}, nil
}

func (c cmContext) CreateCQ(cqe int, ch rdma.CompChannel) (rdma.CQ, error) {
	var own *CompChannel
	if ch != nil {
		cc, ok := ch.(cmCompChannel)
		if !ok {
			return nil, &rdma.Error{Op: "ibv_create_cq", Errno: syscall.EINVAL}
		}
		own = cc.CompChannel
	}
	cq, err := c.Context.CreateCQ(cqe, own)
	if err != nil {
		return nil, asRDMAError("ibv_create_cq", err)
	}
	return cmCQ{cq}, nil
}

func (c cmCompChannel) Close() error {
	return asRDMAError("ibv_destroy_comp_channel", c.CompChannel.Close())
}

// ownVerbs unwraps a PD and two CQs that must come from this package.
func ownVerbs(op string, pd rdma.PD, send, recv rdma.CQ) (*PD, *CQ, *CQ, error) {
	p, ok1 := pd.(cmPD)
	s, ok2 := send.(cmCQ)
	r, ok3 := recv.(cmCQ)
	if !ok1 || !ok2 || !ok3 {
		return nil, nil, nil, &rdma.Error{Op: op, Errno: syscall.EINVAL}
	}
	return p.PD, s.CQ, r.CQ, nil
}

// RegMR allocates C memory (the collector must never move what the device
// writes) and registers it.
func (p cmPD) RegMR(size int, access rdma.Access) (rdma.MR, error) {
	buf, err := AllocBuffer(size)
	if err != nil {
		return nil, asRDMAError(rdma.OpMalloc, err)
	}
	mr, err := p.PD.RegMR(buf, Access(access))
	if err != nil {
		buf.Close()
		return nil, asRDMAError("ibv_reg_mr", err)
	}
	return cmMR{mr, buf}, nil
}

func (p cmPD) CreateRCQP(send, recv rdma.CQ, cap rdma.QPCap) (rdma.QP, error) {
	_, s, r, err := ownVerbs("ibv_create_qp", p, send, recv)
	if err != nil {
		return nil, err
	}
	qp, err := p.PD.CreateRCQP(s, r, QPCap(cap))
	if err != nil {
		return nil, asRDMAError("ibv_create_qp", err)
	}
	return cmQP{qp}, nil
}

func (p cmPD) CreateQP(a rdma.QPInitAttr) (rdma.QP, error) {
	_, s, r, err := ownVerbs("ibv_create_qp", p, a.SendCQ, a.RecvCQ)
	if err != nil {
		return nil, err
	}
	var srq *SRQ
	if a.SRQ != nil {
		if srq, _ = a.SRQ.(*SRQ); srq == nil {
			return nil, &rdma.Error{Op: "ibv_create_qp", Errno: syscall.EINVAL}
		}
	}
	qp, err := p.PD.CreateQP(a.Type, s, r, srq, QPCap(a.Cap))
	if err != nil {
		return nil, err
	}
	return cmQP{qp}, nil
}

func (p cmPD) CreateAH(a rdma.AHAttr) (rdma.AH, error) {
	ah, err := p.PD.CreateAH(a)
	if err != nil {
		return nil, err
	}
	return ah, nil
}

func (p cmPD) CreateSRQ(a rdma.SRQAttr) (rdma.SRQ, error) {
	srq, err := p.PD.CreateSRQ(a)
	if err != nil {
		return nil, err
	}
	return srq, nil
}

func (p cmPD) Close() error { return asRDMAError("ibv_dealloc_pd", p.PD.Close()) }

func (m cmMR) Bytes() []byte { return m.buf.Bytes() }

func (m cmMR) Close() error {
	err := m.MR.Close()
	m.buf.Close()
	return asRDMAError("ibv_dereg_mr", err)
}

// Await waits on the CQ's channel and on also's fd in one poll.
func (cq cmCQ) Await(wc []rdma.WC, also rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	fd := -1
	if also != nil {
		ec, ok := also.(*EventChannel)
		if !ok {
			return 0, false, &rdma.Error{Op: "poll", Errno: syscall.EINVAL}
		}
		fd = int(ec.fd())
	}
	n, ready, err := cq.CQ.Await(wc, fd, timeout)
	if err != nil && !errors.Is(err, rdma.ErrTimeout) {
		err = asRDMAError("waiting for completions", err)
	}
	return n, ready, err
}

func (cq cmCQ) SetSpin(polls int) { cq.CQ.SetSpin(polls) }

func (cq cmCQ) Close() error { return asRDMAError("ibv_destroy_cq", cq.CQ.Close()) }

func (qp cmQP) PostSend(wr rdma.SendWR) error {
	return asRDMAError("ibv_post_send", qp.QP.PostSend(wr))
}

func (qp cmQP) PostSendN(wr rdma.SendWR, n int) (int, error) {
	k, err := qp.QP.PostSendN(wr, n)
	return k, asRDMAError("ibv_post_send", err)
}

func (qp cmQP) ToInit(a rdma.InitAttr) error { return qp.QP.Init(a) }
func (qp cmQP) ToRTR(a rdma.RTRAttr) error   { return qp.QP.ReadyToReceive(a) }
func (qp cmQP) ToRTS(a rdma.RTSAttr) error   { return qp.QP.ReadyToSend(a) }

func (qp cmQP) PostRecv(id uint64, sge rdma.SGE) error {
	return asRDMAError("ibv_post_recv", qp.QP.PostRecv(id, SGE(sge)))
}

func (qp cmQP) ToError() error { return asRDMAError("ibv_modify_qp", qp.QP.ToError()) }

func (qp cmQP) Close() error { return asRDMAError("ibv_destroy_qp", qp.QP.Close()) }
