package rdmatest

import (
	"fmt"
	"net/netip"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// DeviceConfig describes a device's one port.
type DeviceConfig struct {
	Name      string
	LinkLayer rdma.LinkLayer
	ActiveMTU rdma.MTU // 0: 1024
	LID       uint16
	GIDs      []rdma.GIDEntry
}

// Device is an open device with one port (rdma.Device and
// rdma.VerbsDevice), which makes perf endpoints (rdma.Perf, perf.go).
type Device struct {
	fabric   *Fabric
	cfg      DeviceConfig
	failVerb map[string][]error
}

// AddDevice puts a device on the fabric.
func (f *Fabric) AddDevice(cfg DeviceConfig) *Device {
	if cfg.ActiveMTU == 0 {
		cfg.ActiveMTU = rdma.MTU1024
	}
	d := &Device{fabric: f, cfg: cfg, failVerb: map[string][]error{}}
	f.mu.Lock()
	f.devices = append(f.devices, d)
	f.mu.Unlock()
	return d
}

// AddRoCEDevice puts a Soft-RoCE-like device on the fabric: Ethernet link
// layer, no LID, the link-local GID at index 0 (RoCE v1) and 1 (v2), and
// ip's GID at index 2 (v1) and 3 (v2).
func (f *Fabric) AddRoCEDevice(name string, ip netip.Addr) *Device {
	ll := rdma.GID{0xfe, 0x80, 14: byte(len(f.devices)), 15: 1}
	g := rdma.GIDFor(ip)
	return f.AddDevice(DeviceConfig{Name: name, LinkLayer: rdma.LinkLayerEthernet, GIDs: []rdma.GIDEntry{
		{Index: 0, GID: ll, Type: rdma.GIDTypeRoCEv1, Netdev: "veth0"},
		{Index: 1, GID: ll, Type: rdma.GIDTypeRoCEv2, Netdev: "veth0"},
		{Index: 2, GID: g, Type: rdma.GIDTypeRoCEv1, Netdev: "veth0"},
		{Index: 3, GID: g, Type: rdma.GIDTypeRoCEv2, Netdev: "veth0"},
	}})
}

// AddIBDevice puts an InfiniBand device with the given LID on the fabric.
func (f *Fabric) AddIBDevice(name string, lid uint16) *Device {
	return f.AddDevice(DeviceConfig{Name: name, LinkLayer: rdma.LinkLayerInfiniBand, LID: lid, GIDs: []rdma.GIDEntry{
		{Index: 0, GID: rdma.GID{0xfe, 0x80, 15: byte(lid)}, Type: rdma.GIDTypeIB},
	}})
}

// FailNext is Fabric.FailNext for the calls on this device alone (and
// the resources made on it): one side of a connection can fail where
// the other does not.
func (d *Device) FailNext(verb string, err error) {
	d.fabric.mu.Lock()
	defer d.fabric.mu.Unlock()
	d.failVerb[verb] = append(d.failVerb[verb], err)
}

func (d *Device) verb(name string) error {
	d.fabric.mu.Lock()
	defer d.fabric.mu.Unlock()
	return d.fabric.callOn(d, name)
}

// QueryDevice is a device with one port.
func (d *Device) QueryDevice() (rdma.DeviceAttr, error) {
	if err := d.verb("ibv_query_device_ex"); err != nil {
		return rdma.DeviceAttr{}, err
	}
	return rdma.DeviceAttr{PhysPortCnt: 1, MaxQP: 1 << 16, MaxQPWR: 1 << 14, MaxSGE: 32, MaxCQE: 1 << 16,
		MaxSRQ: 1 << 10, MaxSRQWR: 1 << 14, MaxSRQSGE: 27, MaxAH: 1 << 10, AtomicCap: rdma.AtomicCap(1), MaxQPRdAtom: maxRDAtomic}, nil
}

// QueryPort is port 1's attributes; other ports are EINVAL.
func (d *Device) QueryPort(port uint8) (rdma.PortAttr, error) {
	if err := d.verb("ibv_query_port"); err != nil {
		return rdma.PortAttr{}, err
	}
	if port != 1 {
		return rdma.PortAttr{}, rdma.Errorf(fmt.Sprintf("ibv_query_port(%d)", port), syscall.EINVAL)
	}
	return rdma.PortAttr{
		State: rdma.PortActive, MaxMTU: rdma.MTU4096, ActiveMTU: d.cfg.ActiveMTU, GIDTblLen: 16,
		LID: d.cfg.LID, LinkLayer: d.cfg.LinkLayer, PhysState: rdma.PhysState(5), MaxMsgSz: 1 << 31,
	}, nil
}

// QueryGIDEntry is the entry at index; rdma.ErrNoGID when none is there.
func (d *Device) QueryGIDEntry(port uint8, index uint32) (rdma.GIDEntry, error) {
	if err := d.verb("ibv_query_gid_ex"); err != nil {
		return rdma.GIDEntry{}, err
	}
	if port != 1 {
		return rdma.GIDEntry{}, rdma.Errorf("ibv_query_gid_ex", syscall.EINVAL)
	}
	if e, ok := d.gid(index); ok {
		return e, nil
	}
	if index >= 16 {
		return rdma.GIDEntry{}, rdma.Errorf("ibv_query_gid_ex", syscall.EINVAL)
	}
	return rdma.GIDEntry{}, rdma.ErrNoGID
}

func (d *Device) gid(index uint32) (rdma.GIDEntry, bool) {
	for _, e := range d.cfg.GIDs {
		if e.Index == index {
			return e, true
		}
	}
	return rdma.GIDEntry{}, false
}

// Close does nothing: the device stays on the fabric.
func (d *Device) Close() error { return nil }

// VerbsContext is the device's resource factory.
func (d *Device) VerbsContext() rdma.Context { return &verbsContext{dev: d} }

var (
	_ rdma.Device      = (*Device)(nil)
	_ rdma.VerbsDevice = (*Device)(nil)
)
