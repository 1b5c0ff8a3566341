package serve

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// ClassDir is where the kernel lists RDMA devices.
const ClassDir = rdma.SysfsClassDir

// RoCEPort is an RDMA port that carries an IP address as a RoCE v2 GID.
type RoCEPort struct {
	Device   string
	Port     int
	GIDIndex int
}

// FindRoCEPort returns the ACTIVE port under classDir whose RoCE v2 GID
// carries ip: the device rdma_cm binds for ip, and so the one the RC demo
// must open (in one kernel both ends of a connection must use the same
// rxe device). The devices on netdev, when given, are searched first: a
// GID table has hundreds of slots and reading them all from sysfs takes
// seconds under emulation, so the search stops at the first match.
func FindRoCEPort(classDir, netdev string, ip netip.Addr) (RoCEPort, bool) {
	ip = ip.Unmap()
	ents, err := os.ReadDir(classDir)
	if err != nil {
		return RoCEPort{}, false
	}
	devs := make([]string, 0, len(ents))
	for _, e := range ents {
		devs = append(devs, e.Name())
	}
	if netdev != "" {
		slices.SortStableFunc(devs, func(a, b string) int {
			return boolRank(!onNetdev(classDir, a, netdev)) - boolRank(!onNetdev(classDir, b, netdev))
		})
	}
	for _, dev := range devs {
		ports, _ := os.ReadDir(filepath.Join(classDir, dev, "ports"))
		for _, pe := range ports {
			num, err := strconv.Atoi(pe.Name())
			if err != nil {
				continue
			}
			dir := filepath.Join(classDir, dev, "ports", pe.Name())
			if state, _ := readAttr(filepath.Join(dir, "state")); !strings.HasSuffix(state, "ACTIVE") {
				continue
			}
			if idx, ok := roceV2Index(dir, ip); ok {
				return RoCEPort{Device: dev, Port: num, GIDIndex: idx}, true
			}
		}
	}
	return RoCEPort{}, false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// onNetdev tells whether dev sits on netdev: an rxe device's parent, or a
// NIC's own netdev.
func onNetdev(classDir, dev, netdev string) bool {
	if parent, err := readAttr(filepath.Join(classDir, dev, "parent")); err == nil && parent == netdev {
		return true
	}
	_, err := os.Stat(filepath.Join(classDir, dev, "device", "net", netdev))
	return err == nil
}

// roceV2Index finds ip's RoCE v2 entry in the port's GID table.
func roceV2Index(portDir string, ip netip.Addr) (int, bool) {
	slots, err := os.ReadDir(filepath.Join(portDir, "gids"))
	if err != nil {
		return 0, false
	}
	idxs := make([]int, 0, len(slots))
	for _, s := range slots {
		if i, err := strconv.Atoi(s.Name()); err == nil {
			idxs = append(idxs, i)
		}
	}
	slices.Sort(idxs)
	for _, i := range idxs {
		e, err := rdma.ReadSysfsGID(portDir, uint32(i), rdma.LinkLayerEthernet)
		if err == nil && e.Type == rdma.GIDTypeRoCEv2 && netip.AddrFrom16(e.GID).Unmap() == ip {
			return i, true
		}
	}
	return 0, false
}

func readAttr(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// SysfsDevices is Config.Devices on this host, read per client so that
// devices added after the start are found.
func SysfsDevices(ip netip.Addr) (string, int) {
	if p, ok := FindRoCEPort(ClassDir, netdevOf(ip), ip); ok {
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

// HasRDMA tells whether an RDMA device under classDir sits on netdev.
func HasRDMA(classDir, netdev string) bool {
	ents, _ := os.ReadDir(classDir)
	for _, e := range ents {
		if onNetdev(classDir, e.Name(), netdev) {
			return true
		}
	}
	return false
}

// FirstRoCEAddr is the IPv4 address of the first RoCE v2 GID of the
// first ACTIVE port, in the kernel's device order: what a loopback smoke
// run answers and pings on.
func FirstRoCEAddr(classDir string) (netip.Addr, bool) {
	ents, _ := os.ReadDir(classDir)
	for _, e := range ents {
		ports, _ := os.ReadDir(filepath.Join(classDir, e.Name(), "ports"))
		for _, pe := range ports {
			dir := filepath.Join(classDir, e.Name(), "ports", pe.Name())
			if state, _ := readAttr(filepath.Join(dir, "state")); !strings.HasSuffix(state, "ACTIVE") {
				continue
			}
			for i := 0; ; i++ {
				n := strconv.Itoa(i)
				raw, err := readAttr(filepath.Join(dir, "gids", n))
				if err != nil {
					break
				}
				g, err := netip.ParseAddr(raw)
				if err != nil || !g.Is4In6() {
					continue
				}
				if typ, _ := readAttr(filepath.Join(dir, "gid_attrs", "types", n)); typ == "RoCE v2" {
					return g.Unmap(), true
				}
			}
		}
	}
	return netip.Addr{}, false
}
