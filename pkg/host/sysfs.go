package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/rdma"
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
	// GIDs is the populated part of the GID table; ReadDevices leaves it
	// empty (a table is 1024 sysfs files): callers that need it fill it in
	// from PortGIDs.
	GIDs []rdma.GIDEntry `json:"gids"`
}

// Active tells whether the port can carry traffic.
func (p Port) Active() bool { return p.State == "ACTIVE" }

// IsEthernet tells whether the port speaks RoCE.
func (p Port) IsEthernet() bool { return p.LinkLayer == "Ethernet" }

// ReadDevices reads every device under dir (normally ClassDir) with its
// ports' states, without their GID tables. A missing dir means no RDMA
// core in the kernel and returns fs.ErrNotExist.
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
		if p.IsEthernet() {
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
	return p, nil
}

// ReadPortGIDs reads the populated GID entries of one port under dir
// (normally ClassDir).
func ReadPortGIDs(dir, device string, port int) ([]rdma.GIDEntry, error) {
	return ReadSysfsGIDs(portDir(dir, device, port))
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
