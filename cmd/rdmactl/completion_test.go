package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// fakeSysfs lays out rxe0 on veth0 (GIDs 0: link-local v1, 1: 10.9.0.1
// v2, 2: unused) and two netdevs, veth0 and veth1, plus lo.
func fakeSysfs(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"ib/rxe0/parent":                    "veth0\n",
		"ib/rxe0/ports/1/state":             "4: ACTIVE\n",
		"ib/rxe0/ports/1/gids/0":            "fe80:0000:0000:0000:0000:00ff:fe00:0001\n",
		"ib/rxe0/ports/1/gids/1":            "0000:0000:0000:0000:0000:ffff:0a09:0001\n",
		"ib/rxe0/ports/1/gids/2":            "0000:0000:0000:0000:0000:0000:0000:0000\n",
		"ib/rxe0/ports/1/gid_attrs/types/0": "IB/RoCE v1\n",
		"ib/rxe0/ports/1/gid_attrs/types/1": "RoCE v2\n",
		"ib/rxe0/ports/1/gid_attrs/ndevs/0": "veth0\n",
		"ib/rxe0/ports/1/gid_attrs/ndevs/1": "veth0\n",
		"net/veth0/type":                    "1\n",
		"net/veth0/operstate":               "up\n",
		"net/veth1/type":                    "1\n",
		"net/veth1/operstate":               "up\n",
		"net/lo/type":                       "772\n",
		"net/lo/operstate":                  "unknown\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oldRDMA, oldNet := rdmaClassDir, netClassDir
	rdmaClassDir, netClassDir = filepath.Join(dir, "ib"), filepath.Join(dir, "net")
	t.Cleanup(func() { rdmaClassDir, netClassDir = oldRDMA, oldNet })
}

func complete(t *testing.T, args ...string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), Version: "test"}
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
	fakeSysfs(t)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"demo", "-d", ""}, []string{"rxe0\tSoft-RoCE on veth0"}},
		{[]string{"devinfo", "-d", ""}, []string{"rxe0\tSoft-RoCE on veth0"}},
		{[]string{"devinfo", "-d", "rxe0", "-i", ""}, []string{"1\trxe0 port 1 ACTIVE"}},
		{[]string{"demo", "-d", "rxe0", "-g", ""}, []string{"0\tIB/RoCE v1 fe80::ff:fe00:1 (veth0)", "1\tRoCE v2 10.9.0.1 (veth0)", "auto\tthe RoCE v2 GID of the TCP connection's address"}},
		{[]string{"ping", "-c", "-a", ""}, []string{"10.9.0.1\trxe0 port 1 on veth0"}},
		{[]string{"rxe", "add", ""}, []string{"veth1\tnetdev, up"}},
		{[]string{"rxe", "add", "veth1", ""}, nil},
		{[]string{"rxe", "remove", ""}, []string{"rxe0\tSoft-RoCE on veth0"}},
	}
	for _, c := range cases {
		got := complete(t, c.args...)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("__complete %q:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
}

func TestCompletionIsSilentWithoutRDMA(t *testing.T) {
	old := rdmaClassDir
	rdmaClassDir = filepath.Join(t.TempDir(), "absent")
	t.Cleanup(func() { rdmaClassDir = old })
	for _, args := range [][]string{{"demo", "-d", ""}, {"demo", "-g", ""}, {"rxe", "remove", ""}, {"ping", "-a", ""}} {
		got := complete(t, args...)
		if len(got) != 0 && !(len(got) == 1 && strings.HasPrefix(got[0], "auto\t")) {
			t.Errorf("__complete %q without RDMA: got %q, want nothing", args, got)
		}
	}
}
