package demo

import (
	"errors"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The original's fixed connection attributes (modify_qp_to_rtr/rts).
const (
	pathMTU         = cgoverbs.MTU256
	minRNRTimer     = 0x12
	maxRdAtomic     = 1
	hopLimit        = 1
	ackTimeout      = 0x12
	retryCount      = 6
	rnrRetry        = 0
	startPSN        = 0
	accessAllRights = cgoverbs.AccessLocalWrite | cgoverbs.AccessRemoteRead | cgoverbs.AccessRemoteWrite
)

// RealVerbs is the demo's RDMA side on libibverbs.
type RealVerbs struct{}

// DeviceNames lists devices in libibverbs' order.
func (RealVerbs) DeviceNames() ([]string, error) {
	devs, err := cgoverbs.Devices()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.Name
	}
	return names, nil
}

// Open opens the named device.
func (RealVerbs) Open(name string) (Device, error) {
	c, err := cgoverbs.Open(name)
	if err != nil {
		return nil, err
	}
	return &realDevice{ctx: c}, nil
}

type realDevice struct{ ctx *cgoverbs.Context }

func (d *realDevice) QueryPort(port int) (Port, error) {
	a, err := d.ctx.QueryPort(uint8(port))
	return Port{State: int(a.State), SMLID: a.SMLID, LID: a.LID, LMC: a.LMC, LinkLayer: int(a.LinkLayer)}, err
}

func (d *realDevice) QueryGID(port, index int) (GID, error) {
	e, err := d.ctx.QueryGIDEntry(uint8(port), uint32(index))
	if errors.Is(err, rdma.ErrNoGID) {
		return GID{}, nil // what ibv_query_gid gives for an empty entry
	}
	return GID(e.GID), err
}

func (d *realDevice) GIDTable(port int) ([]rdma.GIDEntry, error) {
	a, err := d.ctx.QueryPort(uint8(port))
	if err != nil {
		return nil, err
	}
	var out []rdma.GIDEntry
	for i := 0; i < int(a.GIDTblLen); i++ {
		e, err := d.ctx.QueryGIDEntry(uint8(port), uint32(i))
		if errors.Is(err, rdma.ErrNoGID) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (d *realDevice) Close() error { return d.ctx.Close() }

func (d *realDevice) Setup(size int) (Endpoint, error) {
	e := &realEndpoint{}
	var err error
	if e.pd, err = d.ctx.AllocPD(); err != nil {
		return nil, &SetupError{StepPD, err}
	}
	// One CQ entry, as the original: there is never more than one
	// completion outstanding.
	if e.cq, err = d.ctx.CreateCQ(1, nil); err != nil {
		e.Close()
		return nil, &SetupError{StepCQ, err}
	}
	if e.buf, err = cgoverbs.AllocBuffer(size); err != nil {
		e.Close()
		return nil, &SetupError{StepBuffer, err}
	}
	if e.mr, err = e.pd.RegMR(e.buf, accessAllRights); err != nil {
		e.Close()
		return nil, &SetupError{StepMR, err}
	}
	return e, nil
}

type realEndpoint struct {
	pd  *cgoverbs.PD
	cq  *cgoverbs.CQ
	buf *cgoverbs.Buffer
	mr  *cgoverbs.MR
	qp  *cgoverbs.QP
	wc  [1]rdma.WC
}

func (e *realEndpoint) Buffer() []byte { return e.buf.Bytes() }
func (e *realEndpoint) Addr() uint64   { return e.buf.Addr() }
func (e *realEndpoint) LKey() uint32   { return e.mr.LKey() }
func (e *realEndpoint) RKey() uint32   { return e.mr.RKey() }
func (e *realEndpoint) QPNum() uint32  { return e.qp.Num() }

func (e *realEndpoint) CreateQP() error {
	qp, err := e.pd.CreateRCQP(e.cq, e.cq, cgoverbs.QPCap{
		MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, SigAll: true,
	})
	e.qp = qp
	return err
}

func (e *realEndpoint) ToInit(port int) error { return e.qp.ModifyToInit(port, accessAllRights) }

func (e *realEndpoint) ToRTR(r RTR) error {
	a := cgoverbs.RTRAttr{
		PathMTU:         pathMTU,
		DestQPN:         r.DestQPN,
		RQPSN:           startPSN,
		MaxDestRdAtomic: maxRdAtomic,
		MinRNRTimer:     minRNRTimer,
		DLID:            r.DestLID,
		Port:            uint8(r.Port),
	}
	if r.GRH {
		a.GRH = &cgoverbs.GRH{DGID: r.DestGID, SGIDIndex: uint8(r.SGIDIndex), HopLimit: hopLimit}
	}
	return e.qp.ModifyToRTR(a)
}

func (e *realEndpoint) ToRTS() error {
	return e.qp.ModifyToRTS(cgoverbs.RTSAttr{
		Timeout: ackTimeout, RetryCnt: retryCount, RNRRetry: rnrRetry, SQPSN: startPSN, MaxRdAtomic: maxRdAtomic,
	})
}

func (e *realEndpoint) PostRecv(length uint32) error {
	return e.qp.PostRecv(0, e.mr.SGE(length))
}

func (e *realEndpoint) PostSend(op Op, length uint32, remoteAddr uint64, rkey uint32) error {
	wr := cgoverbs.SendWR{Local: e.mr.SGE(length), Signaled: true, RemoteAddr: remoteAddr, RKey: rkey}
	switch op {
	case OpSend:
		wr.Op, wr.RemoteAddr, wr.RKey = cgoverbs.OpSend, 0, 0
	case OpRDMARead:
		wr.Op = cgoverbs.OpRDMARead
	case OpRDMAWrite:
		wr.Op = cgoverbs.OpRDMAWrite
	}
	return e.qp.PostSend(wr)
}

func (e *realEndpoint) Poll() (Completion, bool, error) {
	n, err := e.cq.Poll(e.wc[:])
	if err != nil || n == 0 {
		return Completion{}, false, err
	}
	return Completion{Status: uint32(e.wc[0].Status), VendorErr: e.wc[0].VendorErr}, true, nil
}

// Close releases in the original's order: QP, MR, buffer, CQ, PD.
func (e *realEndpoint) Close() error {
	var errs []error
	if e.qp != nil {
		errs = append(errs, e.qp.Close())
	}
	if e.mr != nil {
		errs = append(errs, e.mr.Close())
	}
	e.buf.Close()
	if e.cq != nil {
		errs = append(errs, e.cq.Close())
	}
	if e.pd != nil {
		errs = append(errs, e.pd.Close())
	}
	return errors.Join(errs...)
}
