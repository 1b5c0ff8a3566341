package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Completion that knows the host: RDMA devices, their ports and GIDs, the
// RoCE addresses and the netdevs, read through the factory's Host (sysfs
// and rtnetlink) — no device is opened, no module loaded, nothing waited
// for — and silent on errors (an empty list, never a message in the middle
// of the user's line).

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

const noFiles = cobra.ShellCompDirectiveNoFileComp

// completer answers completion requests from what the host shows.
type completer struct {
	host func() host.Host
}

// registerCompletions attaches the host-aware completions to every command
// of the tree by flag name, so that commands need no completion code.
func registerCompletions(root *cobra.Command, f *cli.Factory) {
	c := completer{host: f.Host}
	byFlag := map[string]completeFunc{
		"ib-dev":  c.devices,
		"ib-port": c.ports,
		"gid-idx": c.gidIndexes,
		"addr":    c.roceAddrs,
		"source":  c.roceAddrs,
		"ip":      c.roceAddrs,
	}
	// Files a flag writes, offered by the extension the command gives them.
	fileExt := map[string]string{"plot": "svg"}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for name, fn := range byFlag {
			if cmd.Flags().Lookup(name) != nil {
				_ = cmd.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for name, ext := range fileExt {
			if cmd.Flags().Lookup(name) != nil {
				_ = cmd.MarkFlagFilename(name, ext)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if add, _, err := root.Find([]string{"rxe", "add"}); err == nil && add.Name() == "add" {
		add.ValidArgsFunction = firstArgOnly(c.freeNetdevs)
	}
	if rm, _, err := root.Find([]string{"rxe", "remove"}); err == nil && rm.Name() == "remove" {
		rm.ValidArgsFunction = firstArgOnly(c.rxeLinks)
	}
	if g, _, err := root.Find([]string{"gids"}); err == nil && g.Name() == "gids" {
		g.ValidArgsFunction = firstArgOnly(c.devices)
	}
}

func firstArgOnly(fn completeFunc) completeFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, noFiles
		}
		return fn(c, args, toComplete)
	}
}

func (c completer) devices(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, d := range c.rdmaDevices() {
		desc := "RDMA device"
		if d.IsRxe() {
			desc = "Soft-RoCE on " + d.Parent
		}
		out = append(out, d.Name+"\t"+desc)
	}
	return out, noFiles
}

func (c completer) ports(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	dev, ok := c.chosenDevice(cmd)
	if !ok {
		return nil, noFiles
	}
	var out []string
	for _, p := range dev.Ports {
		out = append(out, fmt.Sprintf("%d\t%s port %d %s", p.Num, dev.Name, p.Num, p.State))
	}
	return out, noFiles
}

func (c completer) gidIndexes(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	var out []string
	if dev, ok := c.chosenDevice(cmd); ok {
		port := 1
		if fl := cmd.Flags().Lookup("ib-port"); fl != nil && fl.Changed {
			if n, err := strconv.Atoi(fl.Value.String()); err == nil {
				port = n
			}
		}
		gids, _ := c.host().PortGIDs(dev.Name, port)
		for _, g := range gids {
			desc := g.Type.String() + " " + gidText(g.GID)
			if g.Netdev != "" {
				desc += " (" + g.Netdev + ")"
			}
			out = append(out, fmt.Sprintf("%d\t%s", g.Index, desc))
		}
	}
	if cmd.Name() == "demo" {
		out = append(out, "auto\tthe RoCE v2 GID of the TCP connection's address")
	}
	return out, noFiles
}

// gidText shows an IPv4-mapped GID as its IPv4 address, as show_gids does.
func gidText(g rdma.GID) string {
	if a, ok := g.IPv4(); ok {
		return a.String()
	}
	return g.String()
}

// roceAddrs offers the IPv4 addresses that have a RoCE v2 GID: the ones
// rdma_cm and the demo can actually use.
func (c completer) roceAddrs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var out []string
	seen := map[string]bool{}
	for _, dev := range c.rdmaDevices() {
		for _, p := range dev.Ports {
			gids, _ := c.host().PortGIDs(dev.Name, p.Num)
			for _, g := range gids {
				a, ok := g.GID.IPv4()
				if !ok || g.Type != rdma.GIDTypeRoCEv2 || seen[a.String()] {
					continue
				}
				seen[a.String()] = true
				desc := fmt.Sprintf("%s port %d", dev.Name, p.Num)
				if g.Netdev != "" {
					desc += " on " + g.Netdev
				}
				out = append(out, a.String()+"\t"+desc)
			}
		}
	}
	return out, noFiles
}

// freeNetdevs offers the netdevs `rxe add` can use: Ethernet ones (which
// leaves out loopback and tunnels) not already carrying an RDMA device.
func (c completer) freeNetdevs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	taken := map[string]bool{}
	for _, dev := range c.rdmaDevices() {
		if dev.IsRxe() {
			taken[dev.Parent] = true
		}
		for _, p := range dev.Ports {
			gids, _ := c.host().PortGIDs(dev.Name, p.Num)
			for _, g := range gids {
				if g.Netdev != "" {
					taken[g.Netdev] = true
				}
			}
		}
	}
	netdevs, err := c.host().Netdevs()
	if err != nil {
		return nil, noFiles
	}
	var out []string
	for _, n := range netdevs {
		if n.Ethernet && !taken[n.Name] {
			out = append(out, n.Name+"\tnetdev, "+n.State)
		}
	}
	return out, noFiles
}

func (c completer) rxeLinks(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, dev := range c.rdmaDevices() {
		if dev.IsRxe() {
			out = append(out, dev.Name+"\tSoft-RoCE on "+dev.Parent)
		}
	}
	return out, noFiles
}

// chosenDevice is the -d value already on the line, else the first device
// (the one every command defaults to).
func (c completer) chosenDevice(cmd *cobra.Command) (host.Device, bool) {
	devs := c.rdmaDevices()
	want := ""
	if fl := cmd.Flags().Lookup("ib-dev"); fl != nil {
		want = fl.Value.String()
	}
	for _, d := range devs {
		if want == "" || d.Name == want {
			return d, true
		}
	}
	return host.Device{}, false
}

func (c completer) rdmaDevices() []host.Device {
	devs, err := c.host().Devices()
	if err != nil {
		return nil
	}
	return devs
}
