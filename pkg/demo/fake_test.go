package demo

import (
	"errors"
	"sync"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// fabric is an in-memory RDMA network for running both sides of the flow
// in one test: QPs find each other by number, RDMA reads and writes reach
// the peer's buffer by address.
type fabric struct {
	mu      sync.Mutex
	nextQPN uint32
	nextKey uint32
	qps     map[uint32]*fakeEndpoint
	// gids is every device's GID table (port 1).
	gids map[string][]rdma.GIDEntry
	// failSetup makes Setup fail at a step.
	failSetup *rdma.SetupStep
	// dropSends loses every SEND (the peer's receive never completes).
	dropSends bool
	// opens counts devices opened: a server that opens one makes RDMA
	// resources.
	opens int
}

func newFabric() *fabric {
	return &fabric{nextQPN: 0x11, nextKey: 0x224, qps: map[uint32]*fakeEndpoint{}, gids: map[string][]rdma.GIDEntry{}}
}

type fakeVerbs struct {
	f       *fabric
	devices []string
	port    rdma.PortAttr
	listErr error
}

func (v *fakeVerbs) DeviceList() ([]rdma.DeviceEntry, error) {
	if v.listErr != nil {
		return nil, v.listErr
	}
	var out []rdma.DeviceEntry
	for _, d := range v.devices {
		out = append(out, rdma.DeviceEntry{Name: d})
	}
	return out, nil
}

func (v *fakeVerbs) Open(name string) (rdma.Device, error) {
	for _, d := range v.devices {
		if d == name {
			v.f.mu.Lock()
			v.f.opens++
			v.f.mu.Unlock()
			return &fakeDevice{f: v.f, name: name, port: v.port}, nil
		}
	}
	return nil, errors.New("no such device")
}

type fakeDevice struct {
	f    *fabric
	name string
	port rdma.PortAttr
}

func (d *fakeDevice) QueryDevice() (rdma.DeviceAttr, error) {
	return rdma.DeviceAttr{PhysPortCnt: 1}, nil
}

func (d *fakeDevice) QueryPort(port uint8) (rdma.PortAttr, error) {
	if port != 1 {
		return rdma.PortAttr{}, errors.New("invalid port")
	}
	p := d.port
	p.GIDTblLen = 16
	return p, nil
}

func (d *fakeDevice) QueryGIDEntry(port uint8, index uint32) (rdma.GIDEntry, error) {
	if port != 1 || index >= 16 {
		return rdma.GIDEntry{}, errors.New("invalid argument")
	}
	for _, e := range d.f.gids[d.name] {
		if e.Index == index {
			return e, nil
		}
	}
	return rdma.GIDEntry{}, rdma.ErrNoGID
}

func (d *fakeDevice) Close() error { return nil }

func (d *fakeDevice) NewPerfEndpoint(rdma.PerfConfig) (rdma.PerfEndpoint, error) {
	return nil, errors.New("the demo's fake has no perf endpoints")
}

func (d *fakeDevice) SetupRC(size int, access rdma.Access) (rdma.RCEndpoint, error) {
	if d.f.failSetup != nil {
		return nil, &rdma.SetupError{Step: *d.f.failSetup, Err: errors.New("injected")}
	}
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	key := d.f.nextKey
	d.f.nextKey += 0x182
	return &fakeEndpoint{f: d.f, dev: d, buf: make([]byte, size), addr: 0x5592_32d0_eda0 + uint64(key)<<12, key: key}, nil
}

type fakeEndpoint struct {
	f         *fabric
	dev       *fakeDevice
	buf       []byte
	addr      uint64
	key       uint32
	qpn       uint32
	sgid      rdma.GID
	dest      uint32
	state     string
	recvLen   uint32
	recvReady bool
	cq        []rdma.WC
}

func (e *fakeEndpoint) Buffer() []byte { return e.buf }
func (e *fakeEndpoint) Addr() uint64   { return e.addr }
func (e *fakeEndpoint) LKey() uint32   { return e.key }
func (e *fakeEndpoint) RKey() uint32   { return e.key }
func (e *fakeEndpoint) QPNum() uint32  { return e.qpn }

func (e *fakeEndpoint) CreateQP() error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.qpn = e.f.nextQPN
	e.f.nextQPN++
	e.f.qps[e.qpn] = e
	e.state = "RESET"
	return nil
}

func (e *fakeEndpoint) ToInit(port uint8, access rdma.Access) error { e.state = "INIT"; return nil }

// ToRTR fails like rxe does when either GID is link-local while the other
// is not: the kernel cannot resolve a route between them.
func (e *fakeEndpoint) ToRTR(a rdma.RTRAttr) error {
	if a.GRH != nil {
		g, err := queryGID(e.dev, int(a.Port), int(a.GRH.SGIDIndex))
		if err != nil || g.IsZero() {
			return errors.New("invalid argument")
		}
		e.sgid = g
		if e.sgid.IsLinkLocal() != a.GRH.DGID.IsLinkLocal() {
			return errors.New("invalid argument")
		}
	}
	e.dest, e.state = a.DestQPN, "RTR"
	return nil
}

func (e *fakeEndpoint) ToRTS(rdma.RTSAttr) error { e.state = "RTS"; return nil }

func (e *fakeEndpoint) PostRecv(length uint32) error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.recvLen, e.recvReady = length, true
	return nil
}

func (e *fakeEndpoint) PostSend(op rdma.SendOp, length uint32, remoteAddr uint64, rkey uint32) error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	if e.state != "RTS" {
		return errors.New("QP not in RTS")
	}
	peer := e.f.qps[e.dest]
	if peer == nil {
		return errors.New("no peer")
	}
	switch op {
	case rdma.OpSend:
		if e.f.dropSends {
			return nil
		}
		if !peer.recvReady {
			e.cq = append(e.cq, rdma.WC{Status: rdma.WCRNRRetryErr})
			return nil
		}
		if length > peer.recvLen {
			// What rxe does: the receiver's completion is a local length
			// error, the sender's a remote operation error.
			peer.recvReady = false
			peer.cq = append(peer.cq, rdma.WC{Status: rdma.WCLocLenErr, Opcode: rdma.WCRecv})
			e.cq = append(e.cq, rdma.WC{Status: rdma.WCRemOpErr})
			return nil
		}
		copy(peer.buf[:peer.recvLen], e.buf[:length])
		peer.recvReady = false
		peer.cq = append(peer.cq, rdma.WC{Opcode: rdma.WCRecv, ByteLen: length})
	case rdma.OpRDMARead, rdma.OpRDMAWrite:
		if rkey != peer.key || remoteAddr != peer.addr {
			e.cq = append(e.cq, rdma.WC{Status: rdma.WCRemAccessErr, VendorErr: 0x88})
			return nil
		}
		if op == rdma.OpRDMARead {
			copy(e.buf[:length], peer.buf)
		} else {
			copy(peer.buf, e.buf[:length])
		}
	}
	e.cq = append(e.cq, rdma.WC{})
	return nil
}

func (e *fakeEndpoint) Poll() (rdma.WC, bool, error) {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	if len(e.cq) == 0 {
		return rdma.WC{}, false, nil
	}
	c := e.cq[0]
	e.cq = e.cq[1:]
	return c, true, nil
}

func (e *fakeEndpoint) Close() error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	delete(e.f.qps, e.qpn)
	return nil
}
