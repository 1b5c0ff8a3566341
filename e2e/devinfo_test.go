//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSingleDevinfoMatchesIbvDevinfo compares rdmactl devinfo with the
// installed ibv_devinfo for the same flags, errors included.
func TestSingleDevinfoMatchesIbvDevinfo(t *testing.T) {
	for _, flags := range [][]string{
		{},
		{"-v"},
		{"-l"},
		{"-d", "rxe0"},
		{"-d", "rxe1", "-i", "1"},
		{"-d", "rxe0", "-v", "-i", "1"},
		{"-d", "nosuch"},
		{"-d", ""},
		{"-i", "0"},
		{"-i", "99"},
		{"-d", "rxe1", "-i", "2"},
	} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			real := run(t, time.Minute, "ibv_devinfo", flags...)
			ours := run(t, time.Minute, rdmactl, append([]string{"devinfo"}, flags...)...)
			sameResult(t, "devinfo "+strings.Join(flags, " "), real, ours)
		})
	}
}

func TestSingleDevicesMatchesIbvDevices(t *testing.T) {
	real := run(t, time.Minute, "ibv_devices")
	ours := run(t, time.Minute, rdmactl, "devices")
	sameResult(t, "devices", real, ours)
}

// TestNoRxeDevinfoWithoutDevices: with no RDMA device at all, both tools
// must say so the same way.
func TestNoRxeDevinfoWithoutDevices(t *testing.T) {
	real := run(t, time.Minute, "ibv_devinfo")
	ours := run(t, time.Minute, rdmactl, "devinfo")
	sameResult(t, "devinfo with no devices", real, ours)
	if ours.Code == 0 {
		t.Errorf("devinfo with no devices exited 0")
	}
	real = run(t, time.Minute, "ibv_devices")
	ours = run(t, time.Minute, rdmactl, "devices")
	sameResult(t, "devices with no devices", real, ours)
}

// sysfsGID is one populated GID table entry as the kernel shows it.
type sysfsGID struct {
	dev, port, index, gid, typ, ndev string
}

func readSysfsGIDs(t *testing.T) []sysfsGID {
	t.Helper()
	var out []sysfsGID
	paths, _ := filepath.Glob("/sys/class/infiniband/*/ports/*/gids/*")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // unpopulated entries read as EINVAL on some kernels
		}
		gid := strings.TrimSpace(string(b))
		if gid == "0000:0000:0000:0000:0000:0000:0000:0000" {
			continue
		}
		parts := strings.Split(p, "/")
		dev, port, index := parts[4], parts[6], parts[8]
		typ, _ := os.ReadFile(filepath.Join("/sys/class/infiniband", dev, "ports", port, "gid_attrs/types", index))
		ndev, _ := os.ReadFile(filepath.Join("/sys/class/infiniband", dev, "ports", port, "gid_attrs/ndevs", index))
		out = append(out, sysfsGID{dev, port, index, gid, strings.TrimSpace(string(typ)), strings.TrimSpace(string(ndev))})
	}
	if len(out) == 0 {
		t.Fatal("sysfs shows no populated GID: the lab has no rxe device")
	}
	return out
}

// TestSingleGidsMatchSysfs checks every populated GID the kernel lists
// appears in rdmactl gids with its version and netdev, and nothing else.
func TestSingleGidsMatchSysfs(t *testing.T) {
	res := run(t, time.Minute, rdmactl, "gids")
	if res.Code != 0 {
		t.Fatalf("rdmactl gids: exit %d: %s", res.Code, res.Stderr)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(res.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && strings.HasPrefix(f[0], "rxe") {
			rows[f[0]+"/"+f[1]+"/"+f[2]] = f
		}
	}
	want := readSysfsGIDs(t)
	if len(rows) != len(want) {
		t.Errorf("rdmactl gids lists %d entries, sysfs %d:\n%s", len(rows), len(want), res.Stdout)
	}
	for _, g := range want {
		f, ok := rows[g.dev+"/"+g.port+"/"+g.index]
		if !ok {
			t.Errorf("GID %s/%s/%s (%s) missing from:\n%s", g.dev, g.port, g.index, g.gid, res.Stdout)
			continue
		}
		ver := map[string]string{"RoCE v2": "v2", "IB/RoCE v1": "v1"}[g.typ]
		if f[3] != g.gid || !contains(f, ver) || f[len(f)-1] != g.ndev && !strings.HasPrefix(f[len(f)-1], g.ndev) {
			t.Errorf("row %v does not match sysfs %+v", f, g)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestSingleGidsIPPicksRoCEv2Entry: --ip prints the index whose GID is
// ::ffff:<ip> with type RoCE v2, as sysfs says.
func TestSingleGidsIPPicksRoCEv2Entry(t *testing.T) {
	for _, c := range []struct{ ip, dev string }{{"10.9.0.1", "rxe0"}, {"10.9.0.2", "rxe1"}} {
		res := run(t, time.Minute, rdmactl, "gids", "--ip", c.ip)
		if res.Code != 0 {
			t.Fatalf("gids --ip %s: exit %d: %s", c.ip, res.Code, res.Stderr)
		}
		idx := strings.TrimSpace(res.Stdout)
		if !regexp.MustCompile(`^\d+$`).MatchString(idx) {
			t.Fatalf("gids --ip %s printed %q, want just an index", c.ip, res.Stdout)
		}
		var found bool
		for _, g := range readSysfsGIDs(t) {
			if g.dev == c.dev && g.port == "1" && g.index == idx {
				found = true
				if g.typ != "RoCE v2" || !strings.HasSuffix(g.gid, ipv4Suffix(c.ip)) || !strings.HasPrefix(g.gid, "0000:0000:0000:0000:0000:ffff:") {
					t.Errorf("gids --ip %s chose index %s = %+v, want the RoCE v2 ::ffff:%s entry", c.ip, idx, g, c.ip)
				}
			}
		}
		if !found {
			t.Errorf("gids --ip %s chose index %s, which %s/1 does not have", c.ip, idx, c.dev)
		}
	}
}

// ipv4Suffix renders a dotted IPv4 as the last two GID groups.
func ipv4Suffix(ip string) string {
	var b [4]int
	for i, p := range strings.Split(ip, ".") {
		for _, c := range p {
			b[i] = b[i]*10 + int(c-'0')
		}
	}
	const hex = "0123456789abcdef"
	h := func(v int) string { return string([]byte{hex[v>>4], hex[v&15]}) }
	return h(b[0]) + h(b[1]) + ":" + h(b[2]) + h(b[3])
}

// TestSingleBadInput: each mistake gives one clear line and a non-zero
// exit, quickly.
func TestSingleBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gids", "--ip", "not-an-address"}, 2, "not-an-address"},
		{[]string{"gids", "--ip", "10.77.0.1"}, 1, "10.77.0.1"},
		{[]string{"--config", "/nonexistent/rdmactl.yaml", "devices"}, 2, "/nonexistent/rdmactl.yaml"},
		{[]string{"gids", "--bogus-flag"}, 2, "bogus-flag"}, // devinfo keeps ibv_devinfo's code: TestSingleEmulatedBadOptionExit
		{[]string{"demo", "-d", "nosuch", "-g", ownGID(t)}, 2, `no RDMA device "nosuch" (from -d)`},
		{[]string{"demo", "-d", "rxe0", "-g", "99"}, 2, "rdmactl gids"},
		{[]string{"demo", "-d", "rxe0", "-i", "2", "-g", ownGID(t)}, 2, "port 2"},
		{[]string{"demo", "-d", "rxe0"}, 2, "-g auto"},
		{[]string{"bogus-command"}, 2, "bogus-command"},
	} {
		res := run(t, 30*time.Second, rdmactl, c.args...)
		msg := strings.TrimRight(res.Stderr, "\n")
		if res.Code != c.code || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, c.want) {
			t.Errorf("rdmactl %s: exit %d, stderr %q; want exit %d and one line naming %q", strings.Join(c.args, " "), res.Code, res.Stderr, c.code, c.want)
		}
	}
}
