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
	failSetup *SetupStep
	// dropSends loses every SEND (the peer's receive never completes).
	dropSends bool
}

func newFabric() *fabric {
	return &fabric{nextQPN: 0x11, nextKey: 0x224, qps: map[uint32]*fakeEndpoint{}, gids: map[string][]rdma.GIDEntry{}}
}

type fakeVerbs struct {
	f       *fabric
	devices []string
	port    Port
}

func (v *fakeVerbs) DeviceNames() ([]string, error) { return v.devices, nil }

func (v *fakeVerbs) Open(name string) (Device, error) {
	for _, d := range v.devices {
		if d == name {
			return &fakeDevice{f: v.f, name: name, port: v.port}, nil
		}
	}
	return nil, errors.New("no such device")
}

type fakeDevice struct {
	f    *fabric
	name string
	port Port
}

func (d *fakeDevice) QueryPort(port int) (Port, error) {
	if port != 1 {
		return Port{}, errors.New("invalid port")
	}
	return d.port, nil
}

func (d *fakeDevice) QueryGID(port, index int) (GID, error) {
	if port != 1 || index >= 16 {
		return GID{}, errors.New("invalid argument")
	}
	for _, e := range d.f.gids[d.name] {
		if int(e.Index) == index {
			return GID(e.GID), nil
		}
	}
	return GID{}, nil
}

func (d *fakeDevice) GIDTable(port int) ([]rdma.GIDEntry, error) {
	if port != 1 {
		return nil, errors.New("invalid port")
	}
	return d.f.gids[d.name], nil
}

func (d *fakeDevice) Close() error { return nil }

func (d *fakeDevice) Setup(size int) (Endpoint, error) {
	if d.f.failSetup != nil {
		return nil, &SetupError{*d.f.failSetup, errors.New("injected")}
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
	sgid      GID
	dest      uint32
	state     string
	recvLen   uint32
	recvReady bool
	cq        []Completion
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

func (e *fakeEndpoint) ToInit(port int) error { e.state = "INIT"; return nil }

// ToRTR fails like rxe does when either GID is link-local while the other
// is not: the kernel cannot resolve a route between them.
func (e *fakeEndpoint) ToRTR(r RTR) error {
	if r.GRH {
		var err error
		if e.sgid, err = e.dev.QueryGID(r.Port, r.SGIDIndex); err != nil || e.sgid.IsZero() {
			return errors.New("invalid argument")
		}
		if e.sgid.IsLinkLocal() != r.DestGID.IsLinkLocal() {
			return errors.New("invalid argument")
		}
	}
	e.dest, e.state = r.DestQPN, "RTR"
	return nil
}

func (e *fakeEndpoint) ToRTS() error { e.state = "RTS"; return nil }

func (e *fakeEndpoint) PostRecv(length uint32) error {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	e.recvLen, e.recvReady = length, true
	return nil
}

func (e *fakeEndpoint) PostSend(op Op, length uint32, remoteAddr uint64, rkey uint32) error {
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
	case OpSend:
		if e.f.dropSends {
			return nil
		}
		if !peer.recvReady {
			e.cq = append(e.cq, Completion{Status: 13}) // RNR retry exceeded
			return nil
		}
		copy(peer.buf[:peer.recvLen], e.buf[:length])
		peer.recvReady = false
		peer.cq = append(peer.cq, Completion{})
	case OpRDMARead, OpRDMAWrite:
		if rkey != peer.key || remoteAddr != peer.addr {
			e.cq = append(e.cq, Completion{Status: 10, VendorErr: 0x88}) // remote access error
			return nil
		}
		if op == OpRDMARead {
			copy(e.buf[:length], peer.buf)
		} else {
			copy(peer.buf, e.buf[:length])
		}
	}
	e.cq = append(e.cq, Completion{})
	return nil
}

func (e *fakeEndpoint) Poll() (Completion, bool, error) {
	e.f.mu.Lock()
	defer e.f.mu.Unlock()
	if len(e.cq) == 0 {
		return Completion{}, false, nil
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
