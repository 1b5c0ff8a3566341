package doctor

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rxe"
)

// Status is a check's verdict.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Result is one check's outcome: what was found and, when not ok, the fix.
type Result struct {
	Name   string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"message"`
	Fix    string `json:"hint,omitempty"`
}

// MarshalJSON adds the verdict every rdmactl document carries: ok is false
// only for a failed check (a warning passes, as in the exit status).
func (r Result) MarshalJSON() ([]byte, error) {
	type result Result // without this method
	return json.Marshal(struct {
		Name string `json:"check"`
		OK   bool   `json:"ok"`
		result
	}{r.Name, r.Status != Fail, result(r)})
}

// Check names, in the order they run.
const (
	CheckModules  = "kernel-modules"
	CheckUverbs   = "uverbs"
	CheckRdmaCM   = "rdma-cm"
	CheckProvider = "provider"
	CheckPorts    = "active-port"
	CheckGIDs     = "roce-gids"
	CheckAddrs    = "addr-device"
	CheckFirewall = "firewall"
	CheckMemlock  = "memlock"
	// CheckCounters runs only when the port counters could be read.
	CheckCounters = "port-counters"
)

// minMemlock is the RLIMIT_MEMLOCK at or below which libibverbs itself
// warns that memory registration will be severely limited.
const minMemlock = 32 * 1024

// RunChecks runs every check on f. target, when valid, narrows the
// address checks to that one address.
func RunChecks(f *Facts, target netip.Addr) []Result {
	results := []Result{
		checkModules(f),
		checkUverbs(f),
		checkRdmaCM(f),
		checkProvider(f),
		checkPorts(f),
		checkGIDs(f, target),
		checkAddrs(f, target),
		checkFirewall(f),
		checkMemlock(f),
	}
	if f.Counters != nil {
		results = append(results, checkCounters(f.Counters))
	}
	return results
}

// checkCounters warns about error counters rising now, naming what each
// usually means; it cannot fail the host, as traffic that recovers by
// resending still gets through.
func checkCounters(c *CounterFacts) Result {
	window := fmt.Sprintf("%gs", c.WindowSeconds)
	if len(c.Rising) == 0 {
		return result(CheckCounters, OK, fmt.Sprintf("no error counter rose between two reads %s apart", window), "")
	}
	parts := make([]string, len(c.Rising))
	for i, r := range c.Rising {
		parts[i] = fmt.Sprintf("%s/%d %s +%d (%s)", r.Device, r.Port, r.Counter, r.Delta, r.Meaning)
	}
	return result(CheckCounters, Warn,
		fmt.Sprintf("error counters rising now (two reads %s apart): %s", window, strings.Join(parts, "; ")),
		"watch which counters move, and how fast, with 'rdmactl stat --watch'")
}

func result(name string, s Status, detail, fix string) Result {
	return Result{Name: name, Status: s, Detail: detail, Fix: fix}
}

func checkModules(f *Facts) Result {
	var loaded, loadable, missing []string
	onDemand := ""
	for _, name := range []string{"ib_core", "ib_uverbs", "rdma_ucm"} {
		m := f.module(name)
		switch {
		case m.Loaded || m.Builtin:
			loaded = append(loaded, name)
		case m.Available && name == "rdma_ucm":
			// The kernel loads it when a program first opens
			// /dev/infiniband/rdma_cm: nothing to fix.
			onDemand = name + " loads on first use"
		case m.Available:
			loadable = append(loadable, name)
		default:
			missing = append(missing, name)
		}
	}
	// A provider driver: any device means one is loaded; otherwise rxe.
	rxeMod := f.module(rxe.Module)
	switch {
	case rxeMod.Loaded || rxeMod.Builtin:
		loaded = append(loaded, rxe.Module)
	case len(f.Devices) > 0:
	case rxeMod.Available:
		loadable = append(loadable, rxe.Module)
	default:
		missing = append(missing, rxe.Module)
	}
	if len(missing) > 0 {
		where := "not in /lib/modules/" + f.KernelRelease
		if f.ModuleIndexErr != "" {
			where = "no module index (" + f.ModuleIndexErr + ")"
		}
		if slices.Contains(missing, "ib_core") {
			return result(CheckModules, Fail,
				fmt.Sprintf("this kernel (%s) has no RDMA support: %s not loaded and %s", f.KernelRelease, strings.Join(missing, ", "), where),
				"boot a kernel with CONFIG_INFINIBAND and CONFIG_RDMA_RXE, or "+rxe.LabHint)
		}
		return result(CheckModules, Fail,
			fmt.Sprintf("%s not loaded and %s", strings.Join(missing, ", "), where),
			"install the kernel's extra modules (on Ubuntu: apt install linux-modules-extra-$(uname -r))")
	}
	if len(loadable) > 0 {
		fix := "modprobe " + strings.Join(loadable, " && modprobe ")
		if slices.Contains(loadable, rxe.Module) {
			fix = strings.Replace(fix, "modprobe "+rxe.Module, "rdmactl rxe add NETDEV (loads rdma_rxe)", 1)
		}
		return result(CheckModules, Warn,
			fmt.Sprintf("%s not loaded (loadable)", strings.Join(loadable, ", ")), fix)
	}
	detail := strings.Join(loaded, ", ") + " loaded"
	if onDemand != "" {
		detail += "; " + onDemand
	}
	return result(CheckModules, OK, detail, "")
}

func checkUverbs(f *Facts) Result {
	if len(f.Devices) == 0 {
		return result(CheckUverbs, Warn, "no RDMA device, so no /dev/infiniband/uverbs* to check", "")
	}
	var good, bad []string
	fix := ""
	for _, d := range f.Devices {
		node, ok := f.Uverbs[d.Name]
		if !ok {
			bad = append(bad, d.Name+" has no uverbs device (verbs programs cannot open it)")
			fix = "modprobe ib_uverbs"
			continue
		}
		dn, ok := f.devNode(node)
		switch {
		case !ok:
			bad = append(bad, "/dev/infiniband/"+node+" is missing")
			if fix == "" {
				fix = "mount devtmpfs on /dev or run udevadm trigger"
			}
		case dn.AccessErr != "":
			bad = append(bad, "/dev/infiniband/"+node+": "+dn.AccessErr)
			if fix == "" {
				fix = "run as root, or give your user read/write access to /dev/infiniband/uverbs* (udev rule)"
			}
		default:
			good = append(good, d.Name+" → /dev/infiniband/"+node)
		}
	}
	if len(bad) > 0 {
		return result(CheckUverbs, Fail, strings.Join(bad, "; "), fix)
	}
	return result(CheckUverbs, OK, strings.Join(good, ", ")+" (read/write)", "")
}

func checkRdmaCM(f *Facts) Result {
	dn, ok := f.devNode("rdma_cm")
	switch {
	case !ok && !f.RDMAClass:
		return result(CheckRdmaCM, Warn, "no RDMA core in the kernel, so no /dev/infiniband/rdma_cm (see "+CheckModules+")", "")
	case !ok && f.module("rdma_ucm").Available && !f.module("rdma_ucm").Loaded:
		// Seen in the lab: with rdma_ucm unloaded the node is absent, and
		// the first rdma_cm program (rping) loads the module and works.
		return result(CheckRdmaCM, OK,
			"/dev/infiniband/rdma_cm appears when rdma_ucm loads, which the first rdma_cm program does (modprobe rdma_ucm does it now)", "")
	case !ok:
		return result(CheckRdmaCM, Fail,
			"/dev/infiniband/rdma_cm is missing: rping and other rdma_cm programs cannot start", "modprobe rdma_ucm")
	case dn.AccessErr != "":
		return result(CheckRdmaCM, Fail, "/dev/infiniband/rdma_cm: "+dn.AccessErr,
			"run as root, or give your user read/write access to /dev/infiniband/rdma_cm (udev rule)")
	}
	return result(CheckRdmaCM, OK, "/dev/infiniband/rdma_cm (read/write)", "")
}

func checkProvider(f *Facts) Result {
	var kernel []string
	for _, d := range f.Devices {
		// Without a uverbs node libibverbs cannot list a device whatever
		// the provider; the uverbs check reports that.
		if _, ok := f.Uverbs[d.Name]; ok {
			kernel = append(kernel, d.Name)
		}
	}
	if len(kernel) == 0 {
		return result(CheckProvider, Warn, "no RDMA device with a uverbs node, so no provider to check", "")
	}
	if f.VerbsErr != "" {
		return result(CheckProvider, Fail, "ibv_get_device_list: "+f.VerbsErr, "install rdma-core's ibverbs-providers")
	}
	var missing []string
	for _, name := range kernel {
		if !slices.Contains(f.VerbsDevices, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return result(CheckProvider, Fail,
			fmt.Sprintf("libibverbs has no userspace provider for %s (ibv_devices does not list it)", strings.Join(missing, ", ")),
			"install the provider libraries: apt install ibverbs-providers (dnf install libibverbs)")
	}
	return result(CheckProvider, OK, "libibverbs lists "+strings.Join(kernel, ", "), "")
}

func checkPorts(f *Facts) Result {
	if len(f.Devices) == 0 {
		// rxe add can only help where the kernel has rdma_rxe; otherwise
		// the fix is the modules check's.
		if m := f.module(rxe.Module); !m.Loaded && !m.Builtin && !m.Available {
			return result(CheckPorts, Fail, "no RDMA device, and no "+rxe.Module+" module to create one", checkModules(f).Fix)
		}
		return result(CheckPorts, Fail, "no RDMA device", "rdmactl rxe add "+suggestNetdev(f))
	}
	var active, inactive []string
	var adminDown, noCarrier []string
	for _, d := range f.Devices {
		for _, p := range d.Ports {
			name := fmt.Sprintf("%s/%d", d.Name, p.Num)
			if p.Active() {
				active = append(active, name)
				continue
			}
			inactive = append(inactive, fmt.Sprintf("%s %s", name, p.State))
			nd, ok := f.netdev(p.Netdev)
			switch {
			case !ok:
			case !nd.AdminUp:
				adminDown = append(adminDown, nd.Name)
			case !nd.OperUp:
				noCarrier = append(noCarrier, fmt.Sprintf("%s is %s", nd.Name, nd.State))
			}
		}
	}
	// A netdev set down is the usual cause; one without carrier (a veth
	// whose peer is down, an unplugged cable) follows from it or the wire.
	fix := ""
	switch {
	case len(adminDown) > 0:
		fix = "ip link set " + strings.Join(adminDown, " up && ip link set ") + " up"
	case len(noCarrier) > 0:
		fix = strings.Join(noCarrier, ", ") + ": bring up its veth peer or check its cable"
	default:
		fix = "check the port's netdev with ip link"
	}
	switch {
	case len(active) == 0:
		return result(CheckPorts, Fail, "no ACTIVE port: "+strings.Join(inactive, ", "), fix)
	case len(inactive) > 0:
		return result(CheckPorts, Warn, strings.Join(active, ", ")+" ACTIVE; not active: "+strings.Join(inactive, ", "), fix)
	}
	return result(CheckPorts, OK, strings.Join(active, ", ")+" ACTIVE", "")
}

// suggestNetdev names a netdev worth putting Soft-RoCE on: the first that
// is up, not loopback and has an IPv4 address.
func suggestNetdev(f *Facts) string {
	for _, nd := range f.Netdevs {
		if !nd.Loopback && nd.OperUp && len(nd.IPv4()) > 0 {
			return nd.Name
		}
	}
	return "NETDEV"
}

func (f *Facts) netdev(name string) (host.Netdev, bool) {
	for _, nd := range f.Netdevs {
		if nd.Name == name {
			return nd, true
		}
	}
	return host.Netdev{}, false
}

// checkGIDs checks that each IPv4 address of an active RoCE port's netdev
// has its RoCE v2 GID: without it rdma_cm cannot build the path. With a
// target it checks only the address rdma_cm would bind: the target when it
// is local, else the source address of the route to it.
func checkGIDs(f *Facts, target netip.Addr) Result {
	focus := target
	if target.IsValid() {
		if _, local := localNetdev(f.Netdevs, target); !local && f.Target != nil {
			focus = f.Target.RouteSrc
		}
	}
	var good, bad, noAddr []string
	fix, noAddrNetdev := "", ""
	ports := 0
	for _, d := range f.Devices {
		for _, p := range d.Ports {
			nd, ok := f.netdev(p.Netdev)
			if p.LinkLayer != "Ethernet" || !p.Active() || !ok {
				continue
			}
			ports++
			addrs := nd.IPv4()
			if target.IsValid() {
				addrs = filterAddr(addrs, focus)
			} else if len(addrs) == 0 {
				noAddr = append(noAddr, fmt.Sprintf("%s/%d (%s)", d.Name, p.Num, nd.Name))
				if noAddrNetdev == "" {
					noAddrNetdev = nd.Name
				}
			}
			for _, a := range addrs {
				if g, ok := rdma.ChooseGID(p.GIDs, rdma.RoCEv2, a.Addr()); ok {
					good = append(good, fmt.Sprintf("%s → %s/%d index %d", a.Addr(), d.Name, p.Num, g.Index))
					continue
				}
				bad = append(bad, fmt.Sprintf("%s/%d has no RoCE v2 GID for %s (%s)", d.Name, p.Num, a.Addr(), nd.Name))
				if fix == "" {
					fix = "the kernel adds it while the address is valid; check `ip addr show " + nd.Name + "`"
					if d.IsRxe() {
						fix += fmt.Sprintf(", then rdmactl rxe remove %s && rdmactl rxe add %s", d.Name, nd.Name)
					}
				}
			}
		}
	}
	switch {
	case ports == 0:
		return result(CheckGIDs, Warn, "no ACTIVE RoCE port to check", "")
	case len(bad) > 0:
		return result(CheckGIDs, Fail, strings.Join(bad, "; "), fix)
	case len(noAddr) > 0:
		return result(CheckGIDs, Warn, "no IPv4 address on "+strings.Join(noAddr, ", ")+": rdma_cm cannot use these ports",
			"ip addr add ADDR/PREFIX dev "+noAddrNetdev)
	case len(good) == 0:
		return result(CheckGIDs, Warn, "no ACTIVE RoCE port has the address rdma_cm would use for "+target.String()+" (see "+CheckAddrs+")", "")
	}
	return result(CheckGIDs, OK, strings.Join(good, ", "), "")
}

func filterAddr(addrs []netip.Prefix, a netip.Addr) []netip.Prefix {
	for _, p := range addrs {
		if p.Addr() == a {
			return []netip.Prefix{p}
		}
	}
	return nil
}

// checkAddrs finds IPv4 addresses whose netdev has no RDMA device: binding
// rdma_cm to one fails with ENODEV, resolving through one ends in
// RDMA_CM_EVENT_ADDR_ERROR.
func checkAddrs(f *Facts, target netip.Addr) Result {
	rdma := f.rdmaNetdevs()
	if target.IsValid() {
		return checkTarget(f, target, rdma)
	}
	if len(f.Devices) == 0 {
		return result(CheckAddrs, Warn, "no RDMA device at all (see "+CheckPorts+")", "")
	}
	var good, bad []string
	var badNetdev string
	for _, nd := range f.Netdevs {
		if nd.Loopback {
			continue
		}
		for _, a := range nd.IPv4() {
			if devs, ok := rdma[nd.Name]; ok {
				good = append(good, fmt.Sprintf("%s (%s, %s)", a.Addr(), nd.Name, strings.Join(devs, ",")))
				continue
			}
			bad = append(bad, fmt.Sprintf("%s (%s)", a.Addr(), nd.Name))
			if badNetdev == "" {
				badNetdev = nd.Name
			}
		}
	}
	switch {
	case len(bad) > 0:
		fix := "rdmactl rxe add " + badNetdev
		if len(good) > 0 {
			fix += ", or use an address that has one: " + strings.SplitN(good[0], " ", 2)[0]
		}
		return result(CheckAddrs, Fail,
			"no RDMA device on "+strings.Join(bad, ", ")+": rdma_bind_addr fails with ENODEV, rdma_resolve_addr with RDMA_CM_EVENT_ADDR_ERROR",
			fix)
	case len(good) == 0:
		return result(CheckAddrs, Warn, "no IPv4 address outside loopback: rdma_cm needs one",
			"ip addr add ADDR/PREFIX dev "+suggestNetdev(f))
	}
	return result(CheckAddrs, OK, strings.Join(good, ", "), "")
}

func checkFirewall(f *Facts) Result {
	var read, unknown, drops []string
	fix := ""
	for _, d := range f.Firewall {
		switch {
		case d.Missing:
			unknown = append(unknown, d.Tool+" not installed")
			continue
		case d.Err != "":
			unknown = append(unknown, d.Tool+": "+d.Err)
			continue
		}
		read = append(read, d.Tool)
		var found []DropRule
		if d.Tool == "nft" {
			found = NftDrops(d.Output)
		} else {
			found = IptablesDrops(d.Output)
		}
		for _, r := range found {
			drops = append(drops, fmt.Sprintf("%s: %s", d.Tool, r.Rule))
			if fix == "" {
				fix = "delete the rule, or accept UDP 4791 before it: " + acceptCommand(d.Tool, r.Chain)
			}
		}
	}
	switch {
	case len(drops) > 0:
		return result(CheckFirewall, Fail,
			fmt.Sprintf("a rule drops RoCE v2 (UDP %d): %s", RoCEPort, strings.Join(drops, "; ")), fix)
	case len(read) == 0:
		sort.Strings(unknown)
		fix := "run as root with iptables or nft installed to check"
		if timedOut(f.Firewall) {
			fix = "run rdmactl doctor again when the host is less busy"
		}
		return result(CheckFirewall, Warn, "unknown: "+strings.Join(unknown, "; "), fix)
	}
	detail := fmt.Sprintf("no rule drops UDP %d (%s)", RoCEPort, strings.Join(read, ", "))
	if len(unknown) > 0 {
		detail += "; not read: " + strings.Join(unknown, "; ")
	}
	return result(CheckFirewall, OK, detail, "")
}

// acceptCommand is the command that inserts an ACCEPT for RoCE v2 at the
// head of chain ("table/chain" as DropRule names it).
func acceptCommand(tool, chain string) string {
	table, name, _ := strings.Cut(chain, "/")
	if tool == "nft" {
		return fmt.Sprintf("nft insert rule %s %s udp dport %d accept", table, name, RoCEPort)
	}
	t := ""
	if table != "filter" {
		t = "-t " + table + " "
	}
	return fmt.Sprintf("iptables %s-I %s -p udp --dport %d -j ACCEPT", t, name, RoCEPort)
}

func checkMemlock(f *Facts) Result {
	if f.MemlockUnlimited {
		return result(CheckMemlock, OK, "ulimit -l unlimited", "")
	}
	limit := fmt.Sprintf("ulimit -l is %d KiB", f.Memlock/1024)
	if f.Memlock > minMemlock {
		return result(CheckMemlock, OK, limit, "")
	}
	const fix = "ulimit -l unlimited (for good: memlock in /etc/security/limits.conf or LimitMEMLOCK= in the service)"
	if f.CapIPCLock {
		return result(CheckMemlock, Warn,
			limit+": this process has CAP_IPC_LOCK (root) and ignores it, but ibv_reg_mr fails with ENOMEM for other users", fix)
	}
	return result(CheckMemlock, Fail,
		limit+": too small to register memory, ibv_reg_mr fails with ENOMEM (Cannot allocate memory)", fix)
}

func timedOut(dumps []FirewallDump) bool {
	for _, d := range dumps {
		if d.TimedOut {
			return true
		}
	}
	return false
}
