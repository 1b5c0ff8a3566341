package perf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// RealVerbs is perf's RDMA side on libibverbs.
type RealVerbs struct{}

// Open opens the named device, or the first one libibverbs lists.
func (RealVerbs) Open(name string) (Device, error) {
	if name == "" {
		devs, err := cgoverbs.Devices()
		if err != nil {
			return nil, err
		}
		if len(devs) == 0 {
			return nil, hinted(errors.New("no RDMA device: libibverbs lists none"), "run 'rdmactl doctor' to see why and what to do")
		}
		name = devs[0].Name
	}
	c, err := cgoverbs.Open(name)
	if err != nil {
		if errors.Is(err, syscall.ENODEV) {
			return nil, hinted(fmt.Errorf("-d %s: no such RDMA device", name), "list them with 'rdmactl devices'")
		}
		return nil, err
	}
	return &realDevice{ctx: c}, nil
}

type realDevice struct{ ctx *cgoverbs.Context }

func (d *realDevice) Name() string { return d.ctx.Name() }

func (d *realDevice) Port(port int) (Port, error) {
	a, err := d.ctx.QueryPort(uint8(port))
	if err != nil {
		return Port{}, err
	}
	return Port{
		Active: a.State == portActive, ActiveMTU: int(a.ActiveMTU), LID: a.LID,
		Ethernet: a.LinkLayer == rdma.LinkLayerEthernet,
	}, nil
}

func (d *realDevice) GID(port, index int) ([16]byte, error) {
	e, err := d.ctx.QueryGIDEntry(uint8(port), uint32(index))
	if errors.Is(err, rdma.ErrNoGID) {
		return [16]byte{}, nil
	}
	return e.GID, err
}

func (d *realDevice) AutoGID(port int, ip []byte) (int, error) {
	a, err := d.ctx.QueryPort(uint8(port))
	if err != nil {
		return 0, err
	}
	var entries []rdma.GIDEntry
	for i := 0; i < int(a.GIDTblLen); i++ {
		e, err := d.ctx.QueryGIDEntry(uint8(port), uint32(i))
		if errors.Is(err, rdma.ErrNoGID) {
			continue
		}
		if err != nil {
			return 0, err
		}
		entries = append(entries, e)
	}
	addr, _ := netip.AddrFromSlice(net.IP(ip).To16())
	e, ok := rdma.ChooseGID(entries, addr.Unmap())
	if !ok {
		return 0, fmt.Errorf("no GID of %s on %s port %d carries %s", d.Name(), d.Name(), port, addr.Unmap())
	}
	return int(e.Index), nil
}

func (d *realDevice) MaxReads() (int, error) {
	a, err := d.ctx.QueryDevice()
	if err != nil {
		return 0, err
	}
	return int(a.MaxQPRdAtom), nil
}

func (d *realDevice) Close() error { return d.ctx.Close() }

func (d *realDevice) NewEndpoint(c EndpointConfig) (Endpoint, error) {
	e := &realEndpoint{}
	if err := e.setup(d.ctx, c); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// portActive is IBV_PORT_ACTIVE.
const portActive = 4

const accessAll = cgoverbs.AccessLocalWrite | cgoverbs.AccessRemoteWrite | cgoverbs.AccessRemoteRead

// realEndpoint owns one RC QP, its two CQs (send and receive, as
// perftest), optional completion channels, and the registered buffer.
type realEndpoint struct {
	pd           *cgoverbs.PD
	sendCh       *cgoverbs.CompChannel
	recvCh       *cgoverbs.CompChannel
	sendCQ       *cgoverbs.CQ
	recvCQ       *cgoverbs.CQ
	buf          *cgoverbs.Buffer
	mr           *cgoverbs.MR
	qp           *cgoverbs.QP
	wc           [1]rdma.WC
	ids          [64]uint64
	events       bool
	maxDestReads int
}

func (e *realEndpoint) setup(ctx *cgoverbs.Context, c EndpointConfig) error {
	var err error
	if e.pd, err = ctx.AllocPD(); err != nil {
		return err
	}
	if c.Events {
		if e.sendCh, err = ctx.CreateCompChannel(); err != nil {
			return err
		}
		if e.recvCh, err = ctx.CreateCompChannel(); err != nil {
			return err
		}
		e.events = true
	}
	if e.sendCQ, err = ctx.CreateCQ(c.TxDepth+1, e.sendCh); err != nil {
		return err
	}
	if e.recvCQ, err = ctx.CreateCQ(c.RxDepth+1, e.recvCh); err != nil {
		return err
	}
	if e.buf, err = cgoverbs.AllocBuffer(c.BufSize); err != nil {
		return err
	}
	if e.mr, err = e.pd.RegMR(e.buf, accessAll); err != nil {
		return err
	}
	e.qp, err = e.pd.CreateRCQP(e.sendCQ, e.recvCQ, cgoverbs.QPCap{
		MaxSendWR: uint32(c.TxDepth), MaxRecvWR: uint32(c.RxDepth), MaxSendSGE: 1, MaxRecvSGE: 1,
	})
	if err != nil {
		return err
	}
	return e.qp.ModifyToInit(uint8(c.Port), accessAll)
}

func (e *realEndpoint) QPN() uint32  { return e.qp.Num() }
func (e *realEndpoint) RKey() uint32 { return e.mr.RKey() }
func (e *realEndpoint) Addr() uint64 { return e.buf.Addr() }

// perftest's RC attributes (ctx_modify_qp_to_rtr/rts).
const (
	minRNRTimer = 12
	qpTimeout   = 14
	retryCount  = 7
	rnrRetry    = 7
	hopLimit    = 0xff
)

func (e *realEndpoint) Connect(c Connect) error {
	rtr := rdma.RTRAttr{
		PathMTU: rdma.MTU(c.MTU), DestQPN: c.Remote.QPN, RQPSN: c.Remote.PSN,
		MaxDestRdAtomic: uint8(min(c.Local.OutReads, 255)), MinRNRTimer: minRNRTimer,
		DLID: c.Remote.LID, Port: uint8(c.Port),
	}
	if c.GIDIndex >= 0 {
		rtr.GRH = &rdma.GRH{DGID: c.Remote.GID, SGIDIndex: uint8(c.GIDIndex), HopLimit: hopLimit}
	}
	if err := e.qp.ModifyToRTR(rtr); err != nil {
		return err
	}
	return e.qp.ModifyToRTS(rdma.RTSAttr{
		Timeout: qpTimeout, RetryCnt: retryCount, RNRRetry: rnrRetry, SQPSN: c.Local.PSN,
		MaxRdAtomic: uint8(min(c.Remote.OutReads, 255)),
	})
}

func (e *realEndpoint) PostRecvs(n, off, size int) error {
	return e.qp.PostRecvs(n, e.sge(off, size))
}

func (e *realEndpoint) sge(off, size int) cgoverbs.SGE {
	return cgoverbs.SGE{Addr: e.buf.Addr() + uint64(off), Len: uint32(size), LKey: e.mr.LKey()}
}

func (e *realEndpoint) Close() error {
	err := errors.Join(e.qp.Close(), e.mr.Close())
	e.buf.Close()
	err = errors.Join(err, e.sendCQ.Close(), e.recvCQ.Close(), e.sendCh.Close(), e.recvCh.Close(), e.pd.Close())
	return err
}

// clock is the run's time base: nanoseconds since the endpoint's first
// look, monotonic.
var clockBase = time.Now()

func now() int64 { return int64(time.Since(clockBase)) }
