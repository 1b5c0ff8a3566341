// Package host is the machine rdmactl's setup and diagnosis commands act on:
// network devices over rtnetlink, RDMA devices in sysfs, RDMA links over
// RDMA netlink, kernel modules and capabilities. The factory in pkg/cli
// hands out System(); tests give commands a fake Host. Pure Go: no cgo.
package host

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Host is the machine: System() is the real one, tests use a fake.
type Host interface {
	Netdevs() ([]Netdev, error)
	// Devices lists RDMA devices and their ports' states, without GID
	// tables; an error wrapping fs.ErrNotExist means the kernel has no
	// RDMA core loaded at all.
	Devices() ([]Device, error)
	// PortGIDs reads the populated GID entries of one port.
	PortGIDs(device string, port int) ([]rdma.GIDEntry, error)
	ModuleLoaded(name string) bool
	// LoadModule loads a kernel module; a failure is a *ModuleError.
	LoadModule(name string) error
	// CanAdminNet tells whether this process holds CAP_NET_ADMIN.
	CanAdminNet() bool
	AddLink(name, netdev string) error
	DelLink(name string) error
}

// ModuleError says which module could not be loaded and why, in
// modprobe's own words.
type ModuleError struct {
	Module  string
	Message string
}

func (e *ModuleError) Error() string {
	return fmt.Sprintf("cannot load kernel module %s: %s", e.Module, e.Message)
}

// System returns the real host: rtnetlink, RDMA netlink, sysfs, modprobe.
func System() Host { return systemHost{} }

type systemHost struct{}

func (systemHost) Netdevs() ([]Netdev, error) { return ListNetdevs() }

func (systemHost) Devices() ([]Device, error) { return ReadDevices(ClassDir) }

func (systemHost) PortGIDs(device string, port int) ([]rdma.GIDEntry, error) {
	return ReadPortGIDs(ClassDir, device, port)
}

func (systemHost) ModuleLoaded(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/module", name))
	return err == nil
}

func (systemHost) LoadModule(name string) error {
	out, err := exec.Command("modprobe", name).CombinedOutput()
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(string(out))
	if errors.Is(err, exec.ErrNotFound) {
		msg = "modprobe is not installed (it comes with kmod)"
	} else if msg == "" {
		msg = "modprobe: " + err.Error()
	}
	// modprobe may print several lines; the last one names the failure.
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	return &ModuleError{Module: name, Message: msg}
}

func (systemHost) CanAdminNet() bool {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return os.Geteuid() == 0
	}
	defer f.Close()
	caps, err := EffectiveCaps(f)
	if err != nil {
		return os.Geteuid() == 0
	}
	return caps&(1<<CapNetAdmin) != 0
}

func (systemHost) AddLink(name, netdev string) error {
	return netlink.RdmaLinkAdd(name, "rxe", netdev)
}

func (systemHost) DelLink(name string) error { return netlink.RdmaLinkDel(name) }

// Capability bit numbers from linux/capability.h.
const (
	CapNetAdmin = 12
	CapIPCLock  = 14
)

// EffectiveCaps reads the CapEff mask from /proc/PID/status text.
func EffectiveCaps(status io.Reader) (uint64, error) {
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no CapEff line in process status")
}
