package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// completionHost is what completion reads of a host; the rest of
// host.Host is never called (a call would panic on the nil interface).
type completionHost struct {
	host.Host
	devs    []host.Device
	gids    map[string][]rdma.GIDEntry // by device
	netdevs []host.Netdev
}

func (h completionHost) Devices() ([]host.Device, error) {
	if h.devs == nil {
		return nil, fmt.Errorf("open %s: %w", host.ClassDir, fs.ErrNotExist)
	}
	return h.devs, nil
}

func (h completionHost) PortGIDs(device string, port int) ([]rdma.GIDEntry, error) {
	if port != 1 {
		return nil, fs.ErrNotExist
	}
	return h.gids[device], nil
}

func (h completionHost) Netdevs() ([]host.Netdev, error) { return h.netdevs, nil }

// labHost is rxe0 on veth0 as the lab VM shows it (GIDs 0: link-local v1,
// 1: 10.9.0.1 v2), a second netdev veth1 and lo.
func labHost(t *testing.T) completionHost {
	t.Helper()
	gid := func(s string) rdma.GID {
		g, err := rdma.ParseGID(s)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	return completionHost{
		devs: []host.Device{{Name: "rxe0", Parent: "veth0", Ports: []host.Port{{Num: 1, State: "ACTIVE", PhysState: "LinkUp", LinkLayer: "Ethernet"}}}},
		gids: map[string][]rdma.GIDEntry{"rxe0": {
			{Index: 0, GID: gid("fe80:0000:0000:0000:0000:00ff:fe00:0001"), Type: rdma.GIDTypeRoCEv1, Netdev: "veth0"},
			{Index: 1, GID: gid("0000:0000:0000:0000:0000:ffff:0a09:0001"), Type: rdma.GIDTypeRoCEv2, Netdev: "veth0"},
		}},
		netdevs: []host.Netdev{
			{Name: "lo", Loopback: true, State: "unknown"},
			{Name: "veth0", Ethernet: true, State: "up"},
			{Name: "veth1", Ethernet: true, State: "up"},
		},
	}
}

func complete(t *testing.T, h host.Host, args ...string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), Version: "test", Host: func() host.Host { return h }}
	root := newCmdRoot(f)
	root.SetArgs(append([]string{"__complete"}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %v: %v (stderr %q)", args, err, errOut.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(l, ":") {
			lines = append(lines, l)
		}
	}
	return lines
}

func TestCompletionKnowsTheHost(t *testing.T) {
	h := labHost(t)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"demo", "-d", ""}, []string{"rxe0\tSoft-RoCE on veth0"}},
		{[]string{"devinfo", "-d", ""}, []string{"rxe0\tSoft-RoCE on veth0"}},
		{[]string{"devinfo", "-d", "rxe0", "-i", ""}, []string{"1\trxe0 port 1 ACTIVE"}},
		{[]string{"devinfo", "-d", "nosuch", "-i", ""}, nil},
		{[]string{"demo", "-d", "rxe0", "-g", ""}, []string{"0\tRoCE v1 fe80::ff:fe00:1 (veth0)", "1\tRoCE v2 10.9.0.1 (veth0)", "auto\tthe RoCE v2 GID of the TCP connection's address"}},
		{[]string{"ping", "-c", "-a", ""}, []string{"10.9.0.1\trxe0 port 1 on veth0"}},
		{[]string{"rxe", "add", ""}, []string{"veth1\tnetdev, up"}},
		{[]string{"rxe", "add", "veth1", ""}, nil},
		{[]string{"rxe", "remove", ""}, []string{"rxe0\tSoft-RoCE on veth0"}},
		{[]string{"gids", ""}, []string{"rxe0\tSoft-RoCE on veth0"}},
		{[]string{"gids", "rxe0", ""}, nil},
		{[]string{"perf", "write_bw", "--plot", ""}, []string{"svg"}},
		{[]string{"stat", "--watch", "1", "--plot", ""}, []string{"svg"}},
	}
	for _, c := range cases {
		got := complete(t, h, c.args...)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("__complete %q:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
}

func TestCompletionIsSilentWithoutRDMA(t *testing.T) {
	h := completionHost{}
	for _, args := range [][]string{{"demo", "-d", ""}, {"demo", "-g", ""}, {"rxe", "remove", ""}, {"ping", "-a", ""}} {
		got := complete(t, h, args...)
		if len(got) != 0 && !(len(got) == 1 && strings.HasPrefix(got[0], "auto\t")) {
			t.Errorf("__complete %q without RDMA: got %q, want nothing", args, got)
		}
	}
}
