package doctor

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/rxe"
)

// watchedModules are the modules the kernel-modules check reports on.
var watchedModules = []string{"ib_core", "ib_uverbs", "rdma_ucm", rxe.Module}

// toolTimeout bounds each firewall tool run.
const toolTimeout = 5 * time.Second

// Gather reads the facts from this system. target, when valid, is the
// --ip address.
func Gather(target netip.Addr) *Facts {
	f := &Facts{Uverbs: map[string]string{}}
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		f.KernelRelease = unix.ByteSliceToString(uts.Release[:])
	}
	gatherModules(f)

	devs, err := rxe.ReadDevices(rxe.ClassDir)
	f.RDMAClass = !errors.Is(err, fs.ErrNotExist)
	f.Devices = devs
	if ents, err := os.ReadDir("/sys/class/infiniband_verbs"); err == nil {
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join("/sys/class/infiniband_verbs", e.Name(), "ibdev")); err == nil {
				f.Uverbs[strings.TrimSpace(string(b))] = e.Name()
			}
		}
	}
	if ents, err := os.ReadDir("/dev/infiniband"); err == nil {
		for _, e := range ents {
			n := DevNode{Name: e.Name()}
			if err := unix.Access(filepath.Join("/dev/infiniband", e.Name()), unix.R_OK|unix.W_OK); err != nil {
				n.AccessErr = err.Error()
			}
			f.DevNodes = append(f.DevNodes, n)
		}
	}

	f.Netdevs, _ = rxe.ListNetdevs()
	f.Firewall = []FirewallDump{runTool("iptables-save"), runTool("nft", "list", "ruleset")}

	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil {
		f.Memlock = rl.Cur
		f.MemlockUnlimited = rl.Cur == unix.RLIM_INFINITY
	}
	if st, err := os.Open("/proc/self/status"); err == nil {
		if caps, err := rxe.EffectiveCaps(st); err == nil {
			f.CapIPCLock = caps&(1<<rxe.CapIPCLock) != 0
		}
		st.Close()
	}

	if vd, err := cgoverbs.Devices(); err != nil {
		f.VerbsErr = err.Error()
	} else {
		for _, d := range vd {
			f.VerbsDevices = append(f.VerbsDevices, d.Name)
		}
	}

	if target.IsValid() {
		f.Target = gatherTarget(target, f.Netdevs)
	}
	return f
}

func gatherModules(f *Facts) {
	proc, _ := os.ReadFile("/proc/modules")
	loaded := ParseProcModules(string(proc))
	dir := filepath.Join("/lib/modules", f.KernelRelease)
	builtinText, _ := os.ReadFile(filepath.Join(dir, "modules.builtin"))
	builtin := ParseModuleIndex(string(builtinText))
	depText, err := os.ReadFile(filepath.Join(dir, "modules.dep"))
	if err != nil {
		f.ModuleIndexErr = err.Error()
	}
	available := ParseModuleIndex(string(depText))
	for _, name := range watchedModules {
		f.Modules = append(f.Modules, Module{
			Name:      name,
			Loaded:    loaded[name],
			Builtin:   builtin[name],
			Available: available[name],
		})
	}
}

func runTool(name string, args ...string) FirewallDump {
	d := FirewallDump{Tool: name}
	if _, err := exec.LookPath(name); err != nil {
		d.Missing = true
		return d
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// The first line names the problem; keep the check to one line.
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		d.Err = msg
		return d
	}
	d.Output = stdout.String()
	return d
}

// gatherTarget asks the kernel how it would reach a non-local address, as
// rdma_resolve_addr does; it sends nothing.
func gatherTarget(addr netip.Addr, netdevs []rxe.Netdev) *Target {
	t := &Target{Addr: addr}
	if _, ok := localNetdev(netdevs, addr); ok {
		return t
	}
	routes, err := netlink.RouteGet(addr.AsSlice())
	if err != nil || len(routes) == 0 {
		if err == nil {
			err = unix.ENETUNREACH
		}
		t.RouteErr = err.Error()
		return t
	}
	if l, err := netlink.LinkByIndex(routes[0].LinkIndex); err == nil {
		t.RouteNetdev = l.Attrs().Name
	} else {
		t.RouteErr = err.Error()
	}
	if src, ok := netip.AddrFromSlice(routes[0].Src); ok {
		t.RouteSrc = src.Unmap()
	}
	return t
}

// localNetdev returns the netdev that holds addr.
func localNetdev(netdevs []rxe.Netdev, addr netip.Addr) (rxe.Netdev, bool) {
	for _, nd := range netdevs {
		for _, p := range nd.Addrs {
			if p.Addr() == addr {
				return nd, true
			}
		}
	}
	return rxe.Netdev{}, false
}
