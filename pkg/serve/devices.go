package serve

import (
	"net"
	"net/netip"

	"github.com/rdmactl/rdmactl/pkg/host"
)

// SysfsDevices is Config.Devices on this host, read per client so that
// devices added after the start are found.
func SysfsDevices(ip netip.Addr) (string, int) {
	if p, ok := host.FindRoCEPort(host.ClassDir, netdevOf(ip), ip); ok {
		return p.Device, p.Port
	}
	return "", 1
}

// netdevOf names the interface that holds ip ("" when none does).
func netdevOf(ip netip.Addr) string {
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if x, ok := netip.AddrFromSlice(n.IP); ok && x.Unmap() == ip.Unmap() {
					return ifc.Name
				}
			}
		}
	}
	return ""
}
