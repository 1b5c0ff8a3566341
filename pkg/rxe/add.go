// Package rxe sets up Soft-RoCE (rdma_rxe) links over RDMA netlink, the
// job rxe_cfg and `rdma link add … type rxe` used to do.
package rxe

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/gids"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Module is the Soft-RoCE kernel module.
const Module = "rdma_rxe"

// cmModules are what rdma_cm programs (rping, rdmactl ping) need beside
// the device; rxe_cfg loaded them too, so a host is ready after `rxe add`.
var cmModules = []string{"ib_uverbs", "rdma_ucm"}

// DefaultTimeout bounds the wait for a new port to become ACTIVE.
const DefaultTimeout = 10 * time.Second

// pollInterval is how often the port is re-read while waiting.
const pollInterval = 100 * time.Millisecond

// AddOptions are the inputs of `rdmactl rxe add`.
type AddOptions struct {
	IO      *cli.IOStreams
	JSON    bool
	Netdev  string
	Name    string        // empty: DefaultName(Netdev)
	Timeout time.Duration // zero: DefaultTimeout
	Host    host.Host
}

// DefaultName is the link name used when none is given.
func DefaultName(netdev string) string { return "rxe_" + netdev }

// LabHint points users of a kernel without RDMA at the project's VM.
const LabHint = "try it in the lab VM (make lab, or scripts/lab.sh run -- 'COMMAND')"

// Add creates a Soft-RoCE link on opts.Netdev unless one exists, waits for
// its port to become ACTIVE and prints the device, state and GIDs.
func Add(opts *AddOptions) error {
	h := opts.Host
	timeout := opts.Timeout
	if timeout < 0 {
		return cli.Usagef("invalid --timeout %v: it must be positive", timeout)
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if opts.Name != "" {
		if err := ValidName(opts.Name); err != nil {
			return cli.Usagef("invalid --name %q: %v", opts.Name, err)
		}
	}
	netdevs, err := h.Netdevs()
	if err != nil {
		return cli.Failf("%v", err)
	}
	nd, err := host.FindNetdev(netdevs, opts.Netdev)
	if err != nil {
		return cli.Failf("network device %q does not exist (see `ip link show`)", opts.Netdev)
	}
	if nd.Loopback {
		return cli.Failf("%s is a loopback device: its packets never leave this host, so no peer can reach an RDMA device on it; "+
			"choose the netdev that carries the address peers use (see rdmactl rxe status)", nd.Name)
	}
	devs, devsErr := h.Devices()
	if devsErr != nil && !errors.Is(devsErr, fs.ErrNotExist) {
		return cli.Failf("reading RDMA devices: %v", devsErr)
	}

	name, created := "", false
	if d, ok := rxeOn(devs, nd.Name); ok {
		name = d.Name
		noteIgnoredName(opts, d)
	} else {
		if name, created, err = create(opts, h, nd, devs, devsErr); err != nil {
			return err
		}
	}

	dev, port, err := waitReady(h, name, nd, timeout)
	if err != nil {
		if created {
			return removeAgain(h, name, nd, err)
		}
		return err
	}
	return printAdded(opts, dev, port, nd, created)
}

// create loads the modules and adds the link; created is false when a
// concurrent `rxe add` won the race and the netdev has its link now.
func create(opts *AddOptions, h host.Host, nd host.Netdev, devs []host.Device, devsErr error) (name string, created bool, err error) {
	name = opts.Name
	if name == "" {
		name = DefaultName(nd.Name)
	}
	if d, ok := findDevice(devs, name); ok {
		return "", false, cli.Failf("RDMA device %s already exists%s; choose another --name", name, onNetdev(d))
	}
	if !h.CanAdminNet() {
		return "", false, cli.Failf("creating RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe add %s)", nd.Name)
	}
	if !nd.AdminUp {
		return "", false, cli.Failf("%s is down, so its RDMA port would stay DOWN; fix: ip link set %s up, then rdmactl rxe add %s", nd.Name, nd.Name, nd.Name)
	}
	if !h.ModuleLoaded(Module) {
		if err := h.LoadModule(Module); err != nil {
			return "", false, moduleFailure(err, devsErr)
		}
	}
	for _, m := range cmModules {
		if !h.ModuleLoaded(m) {
			if err := h.LoadModule(m); err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "rdmactl: note: %v: rdma_cm programs such as rping will not start\n", err)
			}
		}
	}
	addErr := h.AddLink(name, nd.Name)
	if addErr == nil {
		return name, true, nil
	}
	// Two adds racing on one netdev: the kernel refuses the second with
	// EEXIST or, from the name allocator, ENFILE. What counts is whether
	// the netdev has its link now; the winner's device can show in sysfs
	// a moment after the kernel refused this add.
	if errors.Is(addErr, unix.EEXIST) || errors.Is(addErr, unix.ENFILE) {
		for deadline := time.Now().Add(raceSettle); ; time.Sleep(pollInterval) {
			if now, err := h.Devices(); err == nil {
				if d, ok := rxeOn(now, nd.Name); ok {
					return d.Name, false, nil
				}
				if d, ok := findDevice(now, name); ok {
					return "", false, cli.Failf("RDMA device %s already exists%s; choose another --name", name, onNetdev(d))
				}
			}
			if time.Now().After(deadline) {
				break
			}
		}
	}
	return "", false, linkAddFailure(addErr, name, nd.Name)
}

// raceSettle bounds the wait for a concurrent add's device to show in
// sysfs after the kernel refused this one.
const raceSettle = 2 * time.Second

// noteIgnoredName says that --name had no effect because the netdev
// already has its link (a netdev carries one rxe device).
func noteIgnoredName(opts *AddOptions, d host.Device) {
	if opts.Name != "" && opts.Name != d.Name {
		fmt.Fprintf(opts.IO.ErrOut, "rdmactl: note: --name %s ignored: %s already has %s (remove it first to rename: rdmactl rxe remove %s)\n",
			opts.Name, d.Parent, d.Name, d.Name)
	}
}

// removeAgain deletes a link this run created whose port never became
// usable, so that a failed add leaves the host as it found it.
func removeAgain(h host.Host, name string, nd host.Netdev, cause error) error {
	if err := h.DelLink(name); err != nil {
		return cli.Failf("%v; %s was left behind (removing it failed: %v): rdmactl rxe remove %s", cause, name, err, name)
	}
	return cli.Failf("%v; %s was removed again, run rdmactl rxe add %s once that is fixed", cause, name, nd.Name)
}

// ValidName checks an RDMA device name as the kernel treats it: it
// refuses '%', cuts names at 63 bytes and sysfs turns '/' into '!', so
// such names would not be the device that gets created.
func ValidName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return errors.New("not a device name")
	case len(name) > 63:
		return fmt.Errorf("%d bytes, the kernel keeps at most 63", len(name))
	}
	for _, r := range name {
		switch {
		case r == '%':
			return errors.New("the kernel refuses '%' in device names")
		case r == '/':
			return errors.New("the kernel would rename it ('/' becomes '!')")
		case r <= ' ' || r == 0x7f:
			return errors.New("spaces and control characters are not allowed")
		}
	}
	return nil
}

func moduleFailure(err, devsErr error) error {
	var me *host.ModuleError
	if !errors.As(err, &me) {
		return cli.Failf("%v", err)
	}
	if errors.Is(devsErr, fs.ErrNotExist) {
		return cli.Failf("this kernel has no RDMA support: %s does not exist and %s cannot be loaded (%s); %s",
			host.ClassDir, me.Module, me.Message, LabHint)
	}
	return cli.Failf("%v", me)
}

func linkAddFailure(err error, name, netdev string) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return cli.Failf("creating RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe add %s)", netdev)
	case errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENFILE):
		return cli.Failf("rdma link add %s type rxe netdev %s: an RDMA device with that name, or an rxe link on %s, already exists", name, netdev, netdev)
	}
	return cli.Failf("rdma link add %s type rxe netdev %s: %v (the kernel log may say why: dmesg | tail)", name, netdev, err)
}

// waitReady polls until the device's first port is ACTIVE and, when the
// netdev has IPv4 addresses, their RoCE v2 GIDs are in the table (the
// kernel fills it a moment after the port comes up). Only that port's
// GID table is read.
func waitReady(h host.Host, name string, nd host.Netdev, timeout time.Duration) (host.Device, host.Port, error) {
	deadline := time.Now().Add(timeout)
	for {
		devs, err := h.Devices()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return host.Device{}, host.Port{}, cli.Failf("reading RDMA devices: %v", err)
		}
		dev, found := findDevice(devs, name)
		var port host.Port
		if found && len(dev.Ports) > 0 {
			port = dev.Ports[0]
		}
		if port.Active() {
			if port.GIDs, err = h.PortGIDs(name, port.Num); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return dev, port, cli.Failf("reading the GIDs of %s port %d: %v", name, port.Num, err)
			}
			if hasIPv4GIDs(port.GIDs, nd) {
				return dev, port, nil
			}
		}
		if time.Now().After(deadline) {
			switch {
			case !found:
				return dev, port, cli.Failf("%s did not appear in %s within %v", name, host.ClassDir, timeout)
			case len(dev.Ports) == 0:
				return dev, port, cli.Failf("%s has no ports", name)
			case !port.Active():
				return dev, port, cli.Failf("%s port %d is %s after %v: %s", name, port.Num, port.State, timeout, downHint(nd))
			}
			// ACTIVE but a GID is late: show what the table holds.
			return dev, port, nil
		}
		time.Sleep(pollInterval)
	}
}

func downHint(nd host.Netdev) string {
	switch {
	case !nd.AdminUp:
		return fmt.Sprintf("%s is down; fix: ip link set %s up", nd.Name, nd.Name)
	case !nd.OperUp && nd.Kind == "veth":
		return fmt.Sprintf("%s is %s; fix: set its veth peer up (ip link set PEER up)", nd.Name, nd.State)
	case !nd.OperUp:
		return fmt.Sprintf("%s is %s: it has no carrier (check its cable or lower device)", nd.Name, nd.State)
	}
	return fmt.Sprintf("%s is up; see the kernel log (dmesg | tail)", nd.Name)
}

func hasIPv4GIDs(entries []rdma.GIDEntry, nd host.Netdev) bool {
	for _, a := range nd.IPv4() {
		if _, ok := rdma.ChooseGID(entries, rdma.RoCEv2, a.Addr()); !ok {
			return false
		}
	}
	return true
}

// ipv4Addrs are the netdev's IPv4 addresses, in its order.
func ipv4Addrs(nd host.Netdev) []netip.Addr {
	var out []netip.Addr
	for _, a := range nd.IPv4() {
		out = append(out, a.Addr())
	}
	return out
}

func rxeOn(devs []host.Device, netdev string) (host.Device, bool) {
	for _, d := range devs {
		if d.IsRxe() && d.Parent == netdev {
			return d, true
		}
	}
	return host.Device{}, false
}

func findDevice(devs []host.Device, name string) (host.Device, bool) {
	for _, d := range devs {
		if d.Name == name {
			return d, true
		}
	}
	return host.Device{}, false
}

func onNetdev(d host.Device) string {
	if d.Parent == "" {
		return ""
	}
	return " on " + d.Parent
}

// addResult is the --json form of `rxe add`.
type addResult struct {
	Device   string          `json:"device"`
	Netdev   string          `json:"netdev"`
	Created  bool            `json:"created"`
	Port     int             `json:"port"`
	State    string          `json:"state"`
	GIDs     []rdma.GIDEntry `json:"gids"`
	GIDIndex *uint32         `json:"gid_index"`
}

func printAdded(opts *AddOptions, dev host.Device, port host.Port, nd host.Netdev, created bool) error {
	if opts.JSON {
		res := addResult{Device: dev.Name, Netdev: nd.Name, Created: created, Port: port.Num, State: port.State, GIDs: port.GIDs}
		if choice, ok := rdma.ChooseGID(port.GIDs, rdma.RoCEv2, ipv4Addrs(nd)...); ok {
			res.GIDIndex = &choice.Index
		}
		if res.GIDs == nil {
			res.GIDs = []rdma.GIDEntry{}
		}
		return cli.WriteJSON(opts.IO.Out, res)
	}
	out := opts.IO.Out
	if created {
		fmt.Fprintf(out, "%s: created on %s, port %d %s\n", dev.Name, nd.Name, port.Num, port.State)
	} else {
		fmt.Fprintf(out, "%s: already on %s (nothing changed), port %d %s\n", dev.Name, nd.Name, port.Num, port.State)
	}
	return gids.WriteTable(out, showGIDs(dev.Name, port), opts.IO.Palette())
}
