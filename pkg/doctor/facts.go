package doctor

import (
	"net/netip"

	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/host"
)

// Facts is everything the checks look at, gathered from the system once
// (Gather) or loaded from a capture, so that every check is a pure
// function of it. `rdmactl doctor --facts` prints it as JSON.
type Facts struct {
	KernelRelease string `json:"kernel_release"`

	// Modules holds the kernel modules the checks care about.
	Modules []Module `json:"modules"`
	// ModuleIndexErr is set when /lib/modules/RELEASE/modules.dep could
	// not be read, so availability of unloaded modules is unknown.
	ModuleIndexErr string `json:"module_index_err,omitempty"`

	// RDMAClass tells whether /sys/class/infiniband exists (ib_core loaded).
	RDMAClass bool          `json:"rdma_class"`
	Devices   []host.Device `json:"devices"`
	// Uverbs maps an RDMA device to its uverbs node name ("uverbs0").
	Uverbs map[string]string `json:"uverbs"`
	// DevNodes lists /dev/infiniband: name and whether this process can
	// open it for reading and writing.
	DevNodes []DevNode `json:"dev_nodes"`

	Netdevs []host.Netdev `json:"netdevs"`

	Firewall []FirewallDump `json:"firewall"`

	// Memlock is RLIMIT_MEMLOCK's soft limit in bytes; MemlockUnlimited
	// is set for RLIM_INFINITY.
	Memlock          uint64 `json:"memlock"`
	MemlockUnlimited bool   `json:"memlock_unlimited"`
	CapIPCLock       bool   `json:"cap_ipc_lock"`

	// VerbsDevices are the devices libibverbs lists (ibv_get_device_list);
	// VerbsErr is set when that call failed.
	VerbsDevices []string `json:"verbs_devices"`
	VerbsErr     string   `json:"verbs_err,omitempty"`

	// Counters are the error counters that rose between two reads of the
	// port counters a second apart; nil when they could not be read.
	Counters *CounterFacts `json:"counters,omitempty"`

	// Target is set for --ip: the address and, when it is not local, the
	// route the kernel would take to it.
	Target *Target `json:"target,omitempty"`
}

// CounterFacts are two reads of the port counters, Window apart.
type CounterFacts struct {
	WindowSeconds float64         `json:"window_seconds"`
	Rising        []counters.Rise `json:"rising"`
}

// Module is the state of one kernel module.
type Module struct {
	Name      string `json:"name"`
	Loaded    bool   `json:"loaded"`
	Builtin   bool   `json:"builtin"`
	Available bool   `json:"available"` // listed in modules.dep
}

// DevNode is one entry of /dev/infiniband.
type DevNode struct {
	Name      string `json:"name"`
	AccessErr string `json:"access_err,omitempty"`
}

// FirewallDump is the output of one firewall tool.
type FirewallDump struct {
	Tool    string `json:"tool"`    // "iptables-save" or "nft"
	Missing bool   `json:"missing"` // not installed
	Output  string `json:"output,omitempty"`
	Err     string `json:"err,omitempty"`
	// TimedOut is set when the tool was killed at its time bound.
	TimedOut bool `json:"timed_out,omitempty"`
}

// Target is the --ip address and how the kernel reaches it.
type Target struct {
	Addr netip.Addr `json:"addr"`
	// RouteNetdev and RouteSrc are the egress netdev and source address
	// for a non-local Addr; RouteErr is set when there is no route.
	RouteNetdev string     `json:"route_netdev,omitempty"`
	RouteSrc    netip.Addr `json:"route_src,omitempty"`
	RouteErr    string     `json:"route_err,omitempty"`
	// Neighbour is the next hop on an on-link route (the target itself or
	// its gateway) and NeighState its ARP state after a probe: REACHABLE,
	// STALE…, or FAILED/INCOMPLETE when it did not answer within NeighWait.
	Neighbour  netip.Addr `json:"neighbour,omitempty"`
	NeighState string     `json:"neigh_state,omitempty"`
	NeighWait  string     `json:"neigh_wait,omitempty"`
}

// module returns the named module's state (zero value when not gathered).
func (f *Facts) module(name string) Module {
	for _, m := range f.Modules {
		if m.Name == name {
			return m
		}
	}
	return Module{Name: name}
}

// devNode returns /dev/infiniband/name if present.
func (f *Facts) devNode(name string) (DevNode, bool) {
	for _, n := range f.DevNodes {
		if n.Name == name {
			return n, true
		}
	}
	return DevNode{}, false
}

// rdmaNetdevs maps each netdev that has an RDMA port (directly, or as an
// upper device with GIDs of its own) to the device names on it.
func (f *Facts) rdmaNetdevs() map[string][]string {
	m := map[string][]string{}
	add := func(nd, dev string) {
		if nd == "" {
			return
		}
		for _, d := range m[nd] {
			if d == dev {
				return
			}
		}
		m[nd] = append(m[nd], dev)
	}
	for _, d := range f.Devices {
		add(d.Parent, d.Name)
		for _, p := range d.Ports {
			add(p.Netdev, d.Name)
			for _, g := range p.GIDs {
				add(g.Netdev, d.Name)
			}
		}
	}
	return m
}
