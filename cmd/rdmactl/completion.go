package main

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/spf13/cobra"
)

// Completion that knows the host: RDMA devices, their ports and GIDs, the
// RoCE addresses and the netdevs, read from sysfs only — no device is
// opened, no module loaded, nothing waited for — and silent on errors
// (an empty list, never a message in the middle of the user's line).

// sysfs roots; tests point them at a fake tree.
var (
	rdmaClassDir = rdma.SysfsClassDir
	netClassDir  = "/sys/class/net"
)

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// registerCompletions attaches the host-aware completions to every command
// of the tree by flag name, so that commands need no completion code.
func registerCompletions(root *cobra.Command) {
	byFlag := map[string]completeFunc{
		"ib-dev":  completeDevices,
		"ib-port": completePorts,
		"gid-idx": completeGIDIndexes,
		"addr":    completeRoCEAddrs,
		"source":  completeRoCEAddrs,
		"ip":      completeRoCEAddrs,
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range byFlag {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if add, _, err := root.Find([]string{"rxe", "add"}); err == nil && add.Name() == "add" {
		add.ValidArgsFunction = firstArgOnly(completeFreeNetdevs)
	}
	if rm, _, err := root.Find([]string{"rxe", "remove"}); err == nil && rm.Name() == "remove" {
		rm.ValidArgsFunction = firstArgOnly(completeRxeLinks)
	}
}

func firstArgOnly(fn completeFunc) completeFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(c, args, toComplete)
	}
}

const noFiles = cobra.ShellCompDirectiveNoFileComp

func completeDevices(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, d := range rdmaDevices() {
		desc := "RDMA device"
		if parent := readSysfs(filepath.Join(rdmaClassDir, d, "parent")); parent != "" {
			desc = "Soft-RoCE on " + parent
		}
		out = append(out, d+"\t"+desc)
	}
	return out, noFiles
}

func completePorts(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	dev := chosenDevice(c)
	var out []string
	for _, p := range devicePorts(dev) {
		state := readSysfs(filepath.Join(rdmaClassDir, dev, "ports", strconv.Itoa(p), "state"))
		if _, name, ok := strings.Cut(state, ":"); ok {
			state = strings.TrimSpace(name)
		}
		out = append(out, fmt.Sprintf("%d\t%s port %d %s", p, dev, p, state))
	}
	return out, noFiles
}

func completeGIDIndexes(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	dev := chosenDevice(c)
	port := 1
	if fl := c.Flags().Lookup("ib-port"); fl != nil && fl.Changed {
		if n, err := strconv.Atoi(fl.Value.String()); err == nil {
			port = n
		}
	}
	var out []string
	for _, g := range portGIDs(dev, port) {
		desc := g.typ + " " + g.addrText()
		if g.netdev != "" {
			desc += " (" + g.netdev + ")"
		}
		out = append(out, fmt.Sprintf("%d\t%s", g.index, desc))
	}
	if c.Name() == "demo" {
		out = append(out, "auto\tthe RoCE v2 GID of the TCP connection's address")
	}
	return out, noFiles
}

// completeRoCEAddrs offers the IPv4 addresses that have a RoCE v2 GID:
// the ones rdma_cm and the demo can actually use.
func completeRoCEAddrs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var out []string
	seen := map[string]bool{}
	for _, dev := range rdmaDevices() {
		for _, p := range devicePorts(dev) {
			for _, g := range portGIDs(dev, p) {
				a, ok := g.ipv4()
				if !ok || g.typ != "RoCE v2" || seen[a.String()] {
					continue
				}
				seen[a.String()] = true
				desc := fmt.Sprintf("%s port %d", dev, p)
				if g.netdev != "" {
					desc += " on " + g.netdev
				}
				out = append(out, a.String()+"\t"+desc)
			}
		}
	}
	return out, noFiles
}

// completeFreeNetdevs offers the netdevs `rxe add` can use: not loopback
// and not already carrying an RDMA device.
func completeFreeNetdevs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	taken := map[string]bool{}
	for _, dev := range rdmaDevices() {
		if parent := readSysfs(filepath.Join(rdmaClassDir, dev, "parent")); parent != "" {
			taken[parent] = true
		}
		for _, p := range devicePorts(dev) {
			for _, g := range portGIDs(dev, p) {
				if g.netdev != "" {
					taken[g.netdev] = true
				}
			}
		}
	}
	entries, err := os.ReadDir(netClassDir)
	if err != nil {
		return nil, noFiles
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		// ARPHRD_ETHER (1) only: rdma_rxe needs Ethernet, which also
		// leaves out loopback (772) and tunnels.
		if taken[name] || readSysfs(filepath.Join(netClassDir, name, "type")) != "1" {
			continue
		}
		out = append(out, name+"\t"+"netdev, "+readSysfs(filepath.Join(netClassDir, name, "operstate")))
	}
	return out, noFiles
}

func completeRxeLinks(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, dev := range rdmaDevices() {
		if parent := readSysfs(filepath.Join(rdmaClassDir, dev, "parent")); parent != "" {
			out = append(out, dev+"\tSoft-RoCE on "+parent)
		}
	}
	return out, noFiles
}

// chosenDevice is the -d value already on the line, else the first device
// (the one every command defaults to).
func chosenDevice(c *cobra.Command) string {
	if fl := c.Flags().Lookup("ib-dev"); fl != nil && fl.Value.String() != "" {
		return fl.Value.String()
	}
	if devs := rdmaDevices(); len(devs) > 0 {
		return devs[0]
	}
	return ""
}

func rdmaDevices() []string {
	entries, err := os.ReadDir(rdmaClassDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func devicePorts(dev string) []int {
	if dev == "" {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(rdmaClassDir, dev, "ports"))
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

type sysfsGID struct {
	index  int
	addr   netip.Addr
	typ    string
	netdev string
}

func (g sysfsGID) ipv4() (netip.Addr, bool) {
	if g.addr.Is4In6() {
		return g.addr.Unmap(), true
	}
	return netip.Addr{}, false
}

// addrText shows an IPv4-mapped GID as its IPv4 address, as show_gids does.
func (g sysfsGID) addrText() string {
	if a, ok := g.ipv4(); ok {
		return a.String()
	}
	return g.addr.String()
}

// portGIDs reads the populated entries of one port's GID table; an unused
// entry reads as zeros and its type file fails.
func portGIDs(dev string, port int) []sysfsGID {
	if dev == "" {
		return nil
	}
	dir := filepath.Join(rdmaClassDir, dev, "ports", strconv.Itoa(port))
	entries, err := os.ReadDir(filepath.Join(dir, "gids"))
	if err != nil {
		return nil
	}
	var out []sysfsGID
	for _, e := range entries {
		idx, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		addr, err := netip.ParseAddr(readSysfs(filepath.Join(dir, "gids", e.Name())))
		if err != nil || addr.IsUnspecified() {
			continue
		}
		typ := readSysfs(filepath.Join(dir, "gid_attrs", "types", e.Name()))
		if typ == "" {
			continue
		}
		out = append(out, sysfsGID{index: idx, addr: addr, typ: typ, netdev: readSysfs(filepath.Join(dir, "gid_attrs", "ndevs", e.Name()))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// readSysfs returns a trimmed attribute, or "" when it cannot be read.
func readSysfs(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
