// Package rxe sets up Soft-RoCE (rdma_rxe) links over RDMA netlink, the
// job rxe_cfg and `rdma link add … type rxe` used to do.
package rxe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/gids"
)

// Module is the Soft-RoCE kernel module.
const Module = "rdma_rxe"

// DefaultTimeout bounds the wait for a new port to become ACTIVE.
const DefaultTimeout = 10 * time.Second

// pollInterval is how often sysfs is re-read while waiting.
const pollInterval = 100 * time.Millisecond

// AddOptions are the inputs of `rdmactl rxe add`.
type AddOptions struct {
	IO      *cli.IOStreams
	JSON    bool
	Netdev  string
	Name    string        // empty: DefaultName(Netdev)
	Timeout time.Duration // zero: DefaultTimeout
	Host    Host          // nil: System()
}

// DefaultName is the link name used when none is given.
func DefaultName(netdev string) string { return "rxe_" + netdev }

// LabHint points users of a kernel without RDMA at the project's VM.
const LabHint = "try it in the lab VM (make lab, or scripts/lab.sh run -- 'COMMAND')"

// Add creates a Soft-RoCE link on opts.Netdev unless one exists, waits for
// its port to become ACTIVE and prints the device, state and GIDs.
func Add(opts *AddOptions) error {
	h := opts.Host
	if h == nil {
		h = System()
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	netdevs, err := h.Netdevs()
	if err != nil {
		return cli.Failf("%v", err)
	}
	nd, err := FindNetdev(netdevs, opts.Netdev)
	if err != nil {
		return cli.Failf("network device %q does not exist (see `ip link show`)", opts.Netdev)
	}
	devs, devsErr := h.Devices()
	if devsErr != nil && !errors.Is(devsErr, fs.ErrNotExist) {
		return cli.Failf("reading RDMA devices: %v", devsErr)
	}

	var name string
	created := false
	if d, ok := rxeOn(devs, nd.Name); ok {
		name = d.Name
	} else {
		name = opts.Name
		if name == "" {
			name = DefaultName(nd.Name)
		}
		if d, ok := findDevice(devs, name); ok {
			return cli.Failf("RDMA device %s already exists%s; choose another --name", name, onNetdev(d))
		}
		if !h.CanAdminNet() {
			return cli.Failf("creating RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe add %s)", nd.Name)
		}
		if !h.ModuleLoaded(Module) {
			if err := h.LoadModule(Module); err != nil {
				return moduleFailure(err, devsErr)
			}
		}
		if err := h.AddLink(name, nd.Name); err != nil {
			return linkAddFailure(err, name, nd.Name)
		}
		created = true
	}

	dev, err := waitReady(h, name, nd, timeout)
	if err != nil {
		return err
	}
	return printAdded(opts, dev, nd, created)
}

func moduleFailure(err, devsErr error) error {
	var me *ModuleError
	if !errors.As(err, &me) {
		return cli.Failf("%v", err)
	}
	if errors.Is(devsErr, fs.ErrNotExist) {
		return cli.Failf("this kernel has no RDMA support: %s does not exist and %s cannot be loaded (%s); %s",
			ClassDir, me.Module, me.Message, LabHint)
	}
	return cli.Failf("%v", me)
}

func linkAddFailure(err error, name, netdev string) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return cli.Failf("creating RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe add %s)", netdev)
	case errors.Is(err, unix.EEXIST):
		return cli.Failf("rdma link add %s type rxe netdev %s: an RDMA device with that name, or an rxe link on %s, already exists", name, netdev, netdev)
	}
	return cli.Failf("rdma link add %s type rxe netdev %s: %v (the kernel log may say why: dmesg | tail)", name, netdev, err)
}

// waitReady polls sysfs until the device's first port is ACTIVE and, when
// the netdev has IPv4 addresses, their RoCE v2 GIDs are in the table
// (the kernel fills it a moment after the port comes up).
func waitReady(h Host, name string, nd Netdev, timeout time.Duration) (Device, error) {
	deadline := time.Now().Add(timeout)
	for {
		devs, err := h.Devices()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Device{}, cli.Failf("reading RDMA devices: %v", err)
		}
		dev, found := findDevice(devs, name)
		if found && len(dev.Ports) > 0 && dev.Ports[0].Active() && hasIPv4GIDs(dev.Ports[0], nd) {
			return dev, nil
		}
		if time.Now().After(deadline) {
			switch {
			case !found:
				return Device{}, cli.Failf("%s did not appear in %s within %v", name, ClassDir, timeout)
			case len(dev.Ports) == 0:
				return Device{}, cli.Failf("%s has no ports", name)
			case !dev.Ports[0].Active():
				return Device{}, cli.Failf("%s port %d is %s after %v: %s", name, dev.Ports[0].Num, dev.Ports[0].State, timeout, downHint(nd))
			}
			// ACTIVE but a GID is late: show what the table holds.
			return dev, nil
		}
		time.Sleep(pollInterval)
	}
}

func downHint(nd Netdev) string {
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

func hasIPv4GIDs(p Port, nd Netdev) bool {
	for _, a := range nd.IPv4() {
		if _, ok := p.RoCEv2GID(a.Addr()); !ok {
			return false
		}
	}
	return true
}

func rxeOn(devs []Device, netdev string) (Device, bool) {
	for _, d := range devs {
		if d.IsRxe() && d.Parent == netdev {
			return d, true
		}
	}
	return Device{}, false
}

func findDevice(devs []Device, name string) (Device, bool) {
	for _, d := range devs {
		if d.Name == name {
			return d, true
		}
	}
	return Device{}, false
}

func onNetdev(d Device) string {
	if d.Parent == "" {
		return ""
	}
	return " on " + d.Parent
}

// addResult is the --json form of `rxe add`.
type addResult struct {
	Device   string `json:"device"`
	Netdev   string `json:"netdev"`
	Created  bool   `json:"created"`
	Port     int    `json:"port"`
	State    string `json:"state"`
	GIDs     []GID  `json:"gids"`
	GIDIndex *int   `json:"gid_index"`
}

func printAdded(opts *AddOptions, dev Device, nd Netdev, created bool) error {
	port := dev.Ports[0]
	if opts.JSON {
		res := addResult{Device: dev.Name, Netdev: nd.Name, Created: created, Port: port.Num, State: port.State, GIDs: port.GIDs}
		if choice, ok := ChooseGID(port, nd); ok {
			res.GIDIndex = &choice.Index
		}
		if res.GIDs == nil {
			res.GIDs = []GID{}
		}
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	out := opts.IO.Out
	if created {
		fmt.Fprintf(out, "%s: created on %s, port %d %s\n", dev.Name, nd.Name, port.Num, port.State)
	} else {
		fmt.Fprintf(out, "%s: already on %s (nothing changed), port %d %s\n", dev.Name, nd.Name, port.Num, port.State)
	}
	return gids.WriteTable(out, port.showGIDs(dev.Name), opts.IO.Palette())
}
