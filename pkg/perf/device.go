package perf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Port is what the tests need of the local port.
type Port struct {
	Active    bool
	ActiveMTU int // enum ibv_mtu: 1=256 … 5=4096
	LID       uint16
	Ethernet  bool // RoCE: QPs address each other by GID
}

// perfDevice is an open device that makes perf's endpoints.
type perfDevice interface {
	rdma.Device
	rdma.Perf
}

// openDevice opens the named device, or the first one the stack lists,
// naming the fix when there is none.
func openDevice(v rdma.Verbs, name string) (perfDevice, string, error) {
	if name == "" {
		devs, err := v.DeviceList()
		if err != nil {
			return nil, "", err
		}
		if len(devs) == 0 {
			return nil, "", cli.WithHint(errors.New("no RDMA device: libibverbs lists none"), "run 'rdmactl doctor' to see why and what to do")
		}
		name = devs[0].Name
	}
	d, err := v.Open(name)
	if err != nil {
		if errors.Is(err, syscall.ENODEV) {
			return nil, "", cli.UnknownDevice(name, "-d", deviceNames(v))
		}
		return nil, "", err
	}
	pd, ok := d.(perfDevice)
	if !ok {
		d.Close()
		return nil, "", fmt.Errorf("%s: this RDMA stack makes no perftest endpoints: %w", name, errors.ErrUnsupported)
	}
	return pd, name, nil
}

// deviceNames lists the devices there are, for the error naming a wrong one.
func deviceNames(v rdma.Verbs) []string {
	devs, _ := v.DeviceList()
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.Name
	}
	return names
}

func queryPort(d rdma.Device, port int) (Port, error) {
	a, err := d.QueryPort(uint8(port))
	if err != nil {
		return Port{}, err
	}
	return Port{
		Active: a.State == rdma.PortActive, ActiveMTU: int(a.ActiveMTU), LID: a.LID,
		Ethernet: a.LinkLayer == rdma.LinkLayerEthernet,
	}, nil
}

// gidAt is the port's GID at index, zeros for an empty entry.
func gidAt(d rdma.Device, port, index int) ([16]byte, error) {
	e, err := d.QueryGIDEntry(uint8(port), uint32(index))
	if errors.Is(err, rdma.ErrNoGID) {
		return [16]byte{}, nil
	}
	return e.GID, err
}

// autoGID picks the RoCE v2 GID of ip, or the best one when ip is nil.
func autoGID(d rdma.Device, name string, port int, ip net.IP) (int, error) {
	entries, err := rdma.GIDTable(d, uint8(port))
	if err != nil {
		return 0, err
	}
	addr, _ := netip.AddrFromSlice(ip.To16())
	e, ok := rdma.ChooseGID(entries, nil, addr.Unmap())
	if !ok {
		return 0, fmt.Errorf("no GID of %s port %d carries %s", name, port, addr.Unmap())
	}
	return int(e.Index), nil
}

// maxReads is the device's max_qp_rd_atom.
func maxReads(d rdma.Device) (int, error) {
	a, err := d.QueryDevice()
	if err != nil {
		return 0, err
	}
	return int(a.MaxQPRdAtom), nil
}

// perftest's RC attributes (ctx_modify_qp_to_rtr/rts).
const (
	minRNRTimer  = 12
	defQPTimeout = 14
	retryCount   = 7
	rnrRetry     = 7
	hopLimit     = 0xff
)

// connectQP moves ep's QP qp to RTR and RTS towards remote with
// perftest's attributes; gidIndex < 0 addresses the peer by LID alone.
// sl is -S, which perftest sets in the path (a UD QP's address handle).
// A UC QP takes the path and the PSNs only: it neither reads nor
// acknowledges, so retries, timeouts and read depths are RC's.
func connectQP(ep rdma.PerfEndpoint, conn rdma.QPType, qp, port, mtu int, local, remote Dest, gidIndex int, timeout, tclass, sl uint8) error {
	rtr := rdma.RTRAttr{PathMTU: rdma.MTU(mtu), DestQPN: remote.QPN, RQPSN: remote.PSN, DLID: remote.LID, SL: sl, Port: uint8(port)}
	rts := rdma.RTSAttr{SQPSN: local.PSN}
	if conn == rdma.QPTypeRC {
		rtr.MaxDestRdAtomic, rtr.MinRNRTimer = uint8(min(local.OutReads, 255)), minRNRTimer
		rts.Timeout, rts.RetryCnt, rts.RNRRetry = timeout, retryCount, rnrRetry
		rts.MaxRdAtomic = uint8(min(remote.OutReads, 255))
	}
	if gidIndex >= 0 {
		rtr.GRH = &rdma.GRH{DGID: remote.GID, SGIDIndex: uint8(gidIndex), HopLimit: hopLimit, TrafficClass: tclass}
	}
	if err := ep.ToRTR(qp, rtr); err != nil {
		return err
	}
	return ep.ToRTS(qp, rts)
}
