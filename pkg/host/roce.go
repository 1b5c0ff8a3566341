package host

import (
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// RoCEPort is an RDMA port that carries an IP address as a RoCE v2 GID.
type RoCEPort struct {
	Device   string
	Port     int
	GIDIndex int
}

// FindRoCEPort returns the ACTIVE port under dir (normally ClassDir) whose
// RoCE v2 GID carries ip: the device rdma_cm binds for ip, and so the one
// the RC demo must open (in one kernel both ends of a connection must use
// the same rxe device). The devices on netdev, when given, are searched
// first: a GID table has hundreds of slots and reading them all from sysfs
// takes seconds under emulation, so the search stops at the first match.
func FindRoCEPort(dir, netdev string, ip netip.Addr) (RoCEPort, bool) {
	ip = ip.Unmap()
	devs, err := ReadDevices(dir)
	if err != nil {
		return RoCEPort{}, false
	}
	if netdev != "" {
		slices.SortStableFunc(devs, func(a, b Device) int {
			return rank(!onNetdev(dir, a, netdev)) - rank(!onNetdev(dir, b, netdev))
		})
	}
	port, _, ok := firstGID(dir, devs, func(e rdma.GIDEntry) bool {
		return ip.Is4() && rdma.RoCEv2(e) && e.Carries(ip)
	})
	return port, ok
}

// HasRDMA tells whether an RDMA device under dir sits on netdev.
func HasRDMA(dir, netdev string) bool {
	devs, _ := ReadDevices(dir)
	for _, d := range devs {
		if onNetdev(dir, d, netdev) {
			return true
		}
	}
	return false
}

// FirstRoCEAddr is the IPv4 address of the first RoCE v2 GID of the first
// ACTIVE port, in the kernel's device order: what a loopback smoke run
// answers and pings on.
func FirstRoCEAddr(dir string) (netip.Addr, bool) {
	devs, _ := ReadDevices(dir)
	_, e, ok := firstGID(dir, devs, func(e rdma.GIDEntry) bool {
		_, ok := e.GID.IPv4()
		return rdma.RoCEv2(e) && ok
	})
	a, _ := e.GID.IPv4()
	return a, ok
}

// firstGID searches the ACTIVE ports of devs, in order, for the first GID
// entry match accepts.
func firstGID(dir string, devs []Device, match func(rdma.GIDEntry) bool) (RoCEPort, rdma.GIDEntry, bool) {
	for _, d := range devs {
		for _, p := range d.Ports {
			if !p.Active() {
				continue
			}
			if e := eachGID(portDir(dir, d.Name, p.Num), p, match); e != nil {
				return RoCEPort{Device: d.Name, Port: p.Num, GIDIndex: int(e.Index)}, *e, true
			}
		}
	}
	return RoCEPort{}, rdma.GIDEntry{}, false
}

func rank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func portDir(dir, device string, port int) string {
	return filepath.Join(dir, device, "ports", strconv.Itoa(port))
}

// onNetdev tells whether d sits on netdev: an rxe device's parent, or a
// NIC's own netdev.
func onNetdev(dir string, d Device, netdev string) bool {
	if d.Parent == netdev {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, d.Name, "device", "net", netdev))
	return err == nil
}

// eachGID reads the port's GID entries in index order and returns the
// first one match accepts, without reading the rest of the table.
func eachGID(dir string, p Port, match func(rdma.GIDEntry) bool) *rdma.GIDEntry {
	ll := ParseSysfsLinkLayer(p.LinkLayer)
	for i := uint32(0); ; i++ {
		e, err := ReadSysfsGID(dir, i, ll)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // past the end of the table
		}
		if err == nil && match(e) {
			return &e
		}
	}
}
