package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rxe"
)

// watchedModules are the modules the kernel-modules check reports on.
var watchedModules = []string{"ib_core", "ib_uverbs", "rdma_ucm", rxe.Module}

// toolTimeout bounds each firewall tool run: iptables-save took more than
// 5 s in a cold lab VM.
var toolTimeout = 30 * time.Second

// neighWait bounds the ARP probe of --ip's next hop: the kernel gives up
// after 3 unanswered requests a second apart.
const neighWait = 4 * time.Second

// Gather reads the facts from h and the verbs device list from v. target,
// when valid, is the --ip address.
func Gather(h host.Host, v rdma.Verbs, target netip.Addr) *Facts {
	f := &Facts{Uverbs: map[string]string{}}
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		f.KernelRelease = unix.ByteSliceToString(uts.Release[:])
	}
	gatherModules(f)

	devs, err := h.Devices()
	f.RDMAClass = !errors.Is(err, fs.ErrNotExist)
	for i := range devs {
		for j := range devs[i].Ports {
			p := &devs[i].Ports[j]
			p.GIDs, _ = h.PortGIDs(devs[i].Name, p.Num)
			for _, g := range p.GIDs {
				if g.Netdev != "" {
					p.Netdev = g.Netdev
					break
				}
			}
		}
	}
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

	f.Netdevs, _ = h.Netdevs()
	f.Firewall = []FirewallDump{runTool("iptables-save"), runTool("nft", "list", "ruleset")}

	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil {
		f.Memlock = rl.Cur
		f.MemlockUnlimited = rl.Cur == unix.RLIM_INFINITY
	}
	if st, err := os.Open("/proc/self/status"); err == nil {
		if caps, err := host.EffectiveCaps(st); err == nil {
			f.CapIPCLock = caps&(1<<host.CapIPCLock) != 0
		}
		st.Close()
	}

	if vd, err := v.DeviceList(); err != nil {
		f.VerbsErr = err.Error()
	} else {
		for _, d := range vd {
			f.VerbsDevices = append(f.VerbsDevices, d.Name)
		}
	}

	if target.IsValid() {
		f.Target = gatherTarget(target, f.Netdevs)
	}
	if rising := counters.RisingNow(counters.FromHost(h), counterWindow); rising != nil {
		f.Counters = &CounterFacts{WindowSeconds: counterWindow.Seconds(), Rising: rising}
	}
	return f
}

// counterWindow separates the two reads of the port counters.
const counterWindow = time.Second

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
		if ctx.Err() != nil {
			d.TimedOut = true
			d.Err = fmt.Sprintf("timed out after %v", toolTimeout)
			return d
		}
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
func gatherTarget(addr netip.Addr, netdevs []host.Netdev) *Target {
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
	t.Neighbour = addr
	if gw, ok := netip.AddrFromSlice(routes[0].Gw); ok && gw.IsValid() && !gw.IsUnspecified() {
		t.Neighbour = gw.Unmap()
	}
	if t.Neighbour.Is4() {
		t.NeighState = probeNeighbour(routes[0].LinkIndex, addr, t.Neighbour)
		t.NeighWait = neighWait.String()
	}
	return t
}

// probeNeighbour makes the kernel resolve the next hop as rdma_resolve_addr
// would, by sending one UDP datagram to the discard port of addr, and
// returns the ARP state of next hop once it has settled or neighWait passed.
func probeNeighbour(linkIndex int, addr, next netip.Addr) string {
	if c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 9))); err == nil {
		_, _ = c.Write([]byte{0})
		c.Close()
	}
	state := ""
	deadline := time.Now().Add(neighWait)
	for {
		state = neighState(linkIndex, next)
		switch state {
		case "", "INCOMPLETE", "PROBE", "DELAY", "NONE":
		default:
			return state // REACHABLE, STALE, PERMANENT, NOARP, FAILED
		}
		if time.Now().After(deadline) {
			return state
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func neighState(linkIndex int, next netip.Addr) string {
	neighs, err := netlink.NeighList(linkIndex, netlink.FAMILY_V4)
	if err != nil {
		return ""
	}
	for _, n := range neighs {
		if a, ok := netip.AddrFromSlice(n.IP); ok && a.Unmap() == next {
			return neighStateName(n.State)
		}
	}
	return ""
}

// neighStateName names NUD_* states as `ip neigh` does.
func neighStateName(s int) string {
	switch s {
	case netlink.NUD_INCOMPLETE:
		return "INCOMPLETE"
	case netlink.NUD_REACHABLE:
		return "REACHABLE"
	case netlink.NUD_STALE:
		return "STALE"
	case netlink.NUD_DELAY:
		return "DELAY"
	case netlink.NUD_PROBE:
		return "PROBE"
	case netlink.NUD_FAILED:
		return "FAILED"
	case netlink.NUD_NOARP:
		return "NOARP"
	case netlink.NUD_PERMANENT:
		return "PERMANENT"
	}
	return "NONE"
}

// localNetdev returns the netdev that holds addr.
func localNetdev(netdevs []host.Netdev, addr netip.Addr) (host.Netdev, bool) {
	for _, nd := range netdevs {
		for _, p := range nd.Addrs {
			if p.Addr() == addr {
				return nd, true
			}
		}
	}
	return host.Netdev{}, false
}
