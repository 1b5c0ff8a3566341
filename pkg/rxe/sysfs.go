package rxe

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ClassDir is where the kernel lists RDMA devices.
const ClassDir = "/sys/class/infiniband"

// Device is an RDMA device as sysfs shows it.
type Device struct {
	Name string `json:"name"`
	// Parent is the netdev of a Soft-RoCE device (its "parent" attribute,
	// which only rdma_rxe provides); empty for other drivers.
	Parent string `json:"parent,omitempty"`
	Ports  []Port `json:"ports"`
}

// IsRxe tells whether the device is a Soft-RoCE link.
func (d Device) IsRxe() bool { return d.Parent != "" }

// Port is one port of a device.
type Port struct {
	Num       int    `json:"num"`
	State     string `json:"state"`      // "ACTIVE", "DOWN", …
	PhysState string `json:"phys_state"` // "LinkUp", "Disabled", …
	LinkLayer string `json:"link_layer"` // "Ethernet" or "InfiniBand"
	// Netdev is the network device the port runs over (RoCE only).
	Netdev string `json:"netdev,omitempty"`
	GIDs   []GID  `json:"gids"`
}

// Active tells whether the port can carry traffic.
func (p Port) Active() bool { return p.State == "ACTIVE" }

// GID is one populated entry of a port's GID table.
type GID struct {
	Index  int        `json:"index"`
	Addr   netip.Addr `json:"gid"`
	Type   string     `json:"type"` // "RoCE v2", "IB/RoCE v1"
	Netdev string     `json:"netdev,omitempty"`
}

// IsRoCEv2 tells whether the entry is routable RoCE (UDP port 4791).
func (g GID) IsRoCEv2() bool { return g.Type == "RoCE v2" }

// IPv4 returns the IPv4 address an IPv4-mapped GID stands for.
func (g GID) IPv4() (netip.Addr, bool) {
	if !g.Addr.Is4In6() {
		return netip.Addr{}, false
	}
	return g.Addr.Unmap(), true
}

// ReadDevices reads every device under dir (normally ClassDir). A missing
// dir means no RDMA core in the kernel and returns fs.ErrNotExist.
func ReadDevices(dir string) ([]Device, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var devs []Device
	for _, e := range entries {
		d, err := readDevice(filepath.Join(dir, e.Name()))
		if err != nil {
			// A device unregistered while we read it is simply gone.
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

func readDevice(dir string) (Device, error) {
	d := Device{Name: filepath.Base(dir)}
	if parent, err := readAttr(filepath.Join(dir, "parent")); err == nil {
		d.Parent = parent
	}
	portDirs, err := os.ReadDir(filepath.Join(dir, "ports"))
	if err != nil {
		return d, err
	}
	for _, pe := range portDirs {
		num, err := strconv.Atoi(pe.Name())
		if err != nil {
			continue
		}
		p, err := readPort(filepath.Join(dir, "ports", pe.Name()), num)
		if err != nil {
			return d, err
		}
		if p.Netdev == "" && p.LinkLayer == "Ethernet" {
			p.Netdev = d.Parent
		}
		d.Ports = append(d.Ports, p)
	}
	sort.Slice(d.Ports, func(i, j int) bool { return d.Ports[i].Num < d.Ports[j].Num })
	return d, nil
}

func readPort(dir string, num int) (Port, error) {
	p := Port{Num: num}
	var err error
	if p.State, err = readEnumAttr(filepath.Join(dir, "state")); err != nil {
		return p, err
	}
	if p.PhysState, err = readEnumAttr(filepath.Join(dir, "phys_state")); err != nil {
		return p, err
	}
	if p.LinkLayer, err = readAttr(filepath.Join(dir, "link_layer")); err != nil {
		return p, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "gids"))
	if err != nil {
		return p, err
	}
	for _, e := range entries {
		idx, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		g, ok := readGID(dir, idx)
		if ok {
			p.GIDs = append(p.GIDs, g)
		}
	}
	sort.Slice(p.GIDs, func(i, j int) bool { return p.GIDs[i].Index < p.GIDs[j].Index })
	for _, g := range p.GIDs {
		if g.Netdev != "" {
			p.Netdev = g.Netdev
			break
		}
	}
	return p, nil
}

// readGID reads entry idx; unused entries read as zeros and their type
// files fail with EINVAL, so both count as "not populated".
func readGID(portDir string, idx int) (GID, bool) {
	n := strconv.Itoa(idx)
	raw, err := readAttr(filepath.Join(portDir, "gids", n))
	if err != nil {
		return GID{}, false
	}
	addr, err := netip.ParseAddr(raw)
	if err != nil || addr.IsUnspecified() {
		return GID{}, false
	}
	typ, err := readAttr(filepath.Join(portDir, "gid_attrs", "types", n))
	if err != nil {
		return GID{}, false
	}
	ndev, _ := readAttr(filepath.Join(portDir, "gid_attrs", "ndevs", n))
	return GID{Index: idx, Addr: addr, Type: typ, Netdev: ndev}, true
}

func readAttr(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// readEnumAttr reads attributes written as "4: ACTIVE" and returns the name.
func readEnumAttr(path string) (string, error) {
	v, err := readAttr(path)
	if err != nil {
		return "", err
	}
	_, name, ok := strings.Cut(v, ":")
	if !ok {
		return "", fmt.Errorf("%s: unexpected value %q", path, v)
	}
	return strings.TrimSpace(name), nil
}
