package serve

import (
	"net/netip"

	"github.com/rdmactl/rdmactl/pkg/rxe"
)

// RoCEPort is an RDMA port that carries an IP address as a RoCE v2 GID.
type RoCEPort struct {
	Device   string
	Port     int
	GIDIndex int
	Netdev   string
}

// FindRoCEPort returns the ACTIVE port whose RoCE v2 GID table holds ip:
// the device rdma_cm binds for ip, and the one the RC demo must open (in
// one kernel both ends of a connection must use the same rxe device).
func FindRoCEPort(devs []rxe.Device, ip netip.Addr) (RoCEPort, bool) {
	for _, d := range devs {
		for _, p := range d.Ports {
			if !p.Active() {
				continue
			}
			if g, ok := p.RoCEv2GID(ip.Unmap()); ok {
				return RoCEPort{Device: d.Name, Port: p.Num, GIDIndex: g.Index, Netdev: p.Netdev}, true
			}
		}
	}
	return RoCEPort{}, false
}

// SysfsDevices is Config.Devices over /sys/class/infiniband, read per
// client so that devices added after the start are found.
func SysfsDevices(ip netip.Addr) (string, int) {
	devs, _ := rxe.ReadDevices(rxe.ClassDir)
	if p, ok := FindRoCEPort(devs, ip); ok {
		return p.Device, p.Port
	}
	return "", 1
}
