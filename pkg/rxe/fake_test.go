package rxe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// fakeHost is an in-memory Host: AddLink creates a device whose port is
// ACTIVE with the GIDs the kernel would give it (as seen in the lab VM).
type fakeHost struct {
	netdevs   []Netdev
	devs      []Device
	noClass   bool // /sys/class/infiniband missing
	loaded    bool
	notAdmin  bool
	loadErr   error
	addErr    error
	delErr    error
	portState string // state of ports AddLink creates; "" = ACTIVE

	loads, adds, dels []string
	gidReads          int // PortGIDs calls: each is a whole GID table in sysfs
	modules           map[string]bool
}

func (h *fakeHost) Netdevs() ([]Netdev, error) { return h.netdevs, nil }

// Devices returns the devices without GID tables, as the real host does.
func (h *fakeHost) Devices() ([]Device, error) {
	if h.noClass && len(h.devs) == 0 {
		return nil, fmt.Errorf("open %s: %w", host.ClassDir, fs.ErrNotExist)
	}
	out := make([]Device, len(h.devs))
	for i, d := range h.devs {
		out[i] = d
		out[i].Ports = make([]Port, len(d.Ports))
		for j, p := range d.Ports {
			p.GIDs = nil
			out[i].Ports[j] = p
		}
	}
	return out, nil
}

func (h *fakeHost) PortGIDs(device string, port int) ([]rdma.GIDEntry, error) {
	h.gidReads++
	for _, d := range h.devs {
		for _, p := range d.Ports {
			if d.Name == device && p.Num == port {
				return p.GIDs, nil
			}
		}
	}
	return nil, fs.ErrNotExist
}

func (h *fakeHost) ModuleLoaded(name string) bool { return h.loaded || h.modules[name] }

func (h *fakeHost) LoadModule(name string) error {
	h.loads = append(h.loads, name)
	if h.loadErr != nil {
		return h.loadErr
	}
	if h.modules == nil {
		h.modules = map[string]bool{}
	}
	h.modules[name] = true
	return nil
}

func (h *fakeHost) CanAdminNet() bool { return !h.notAdmin }

func (h *fakeHost) AddLink(name, netdev string) error {
	h.adds = append(h.adds, name+"@"+netdev)
	if h.addErr != nil {
		return h.addErr
	}
	nd, err := host.FindNetdev(h.netdevs, netdev)
	if err != nil {
		return err
	}
	h.devs = append(h.devs, rxeDevice(name, nd, h.portState))
	return nil
}

func (h *fakeHost) DelLink(name string) error {
	h.dels = append(h.dels, name)
	if h.delErr != nil {
		return h.delErr
	}
	for i, d := range h.devs {
		if d.Name == name {
			h.devs = append(h.devs[:i], h.devs[i+1:]...)
			return nil
		}
	}
	return errors.New("no such device")
}

// rxeDevice builds the device rdma_rxe creates on nd: a link-local GID at
// index 0, then one per address, all RoCE v2 (kernel 6.1 in the lab).
func rxeDevice(name string, nd Netdev, state string) Device {
	if state == "" {
		state = "ACTIVE"
	}
	p := Port{Num: 1, State: state, PhysState: "LinkUp", LinkLayer: "Ethernet", Netdev: nd.Name}
	if state == "ACTIVE" {
		p.GIDs = append(p.GIDs, rdma.GIDEntry{Index: 0, GID: rdma.GIDFor(netip.MustParseAddr("fe80::24fc:49ff:feb9:d689")), Type: rdma.GIDTypeRoCEv2, Netdev: nd.Name})
		for _, a := range nd.Addrs {
			p.GIDs = append(p.GIDs, rdma.GIDEntry{Index: uint32(len(p.GIDs)), GID: rdma.GIDFor(a.Addr()), Type: rdma.GIDTypeRoCEv2, Netdev: nd.Name})
		}
	} else {
		p.PhysState = "Disabled"
	}
	return Device{Name: name, Parent: nd.Name, Ports: []Port{p}}
}

// labNetdevs is the lab VM's topology.
func labNetdevs() []Netdev {
	return []Netdev{
		{Name: "lo", Index: 1, AdminUp: true, OperUp: true, State: "unknown", MTU: 65536, Loopback: true,
			Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}},
		{Name: "veth1", Kind: "veth", Index: 2, AdminUp: true, OperUp: true, State: "up", MTU: 1500,
			Addrs: []netip.Prefix{netip.MustParsePrefix("10.9.0.2/24"), netip.MustParsePrefix("fd09::2/64")}},
		{Name: "veth0", Kind: "veth", Index: 3, AdminUp: true, OperUp: true, State: "up", MTU: 1500,
			Addrs: []netip.Prefix{netip.MustParsePrefix("10.9.0.1/24"), netip.MustParsePrefix("fd09::1/64")}},
	}
}

func testIO() (*cli.IOStreams, *bytes.Buffer) {
	out := &bytes.Buffer{}
	return cli.Test(nil, out, &bytes.Buffer{}), out
}

func wantExit(t *testing.T, err error, code int) {
	t.Helper()
	if got := cli.ExitCode(err); got != code {
		t.Fatalf("exit code %d, want %d (err: %v)", got, code, err)
	}
}
