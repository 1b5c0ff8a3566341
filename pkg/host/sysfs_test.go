package host

import (
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// sysfsTree rebuilds testdata/sysfs-rxe0.txt (read from
// /sys/class/infiniband in the lab VM) as a directory. Entries the kernel
// refuses to read (types of unused GIDs) are absent, as they fail there.
func sysfsTree(t *testing.T) string {
	t.Helper()
	return fixtureTree(t, "sysfs-rxe0.txt")
}

func TestReadDevicesFromLabSysfs(t *testing.T) {
	root := sysfsTree(t)
	devs, err := ReadDevices(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 {
		t.Fatalf("devices %+v", devs)
	}
	d := devs[0]
	if d.Name != "rxe0" || d.Parent != "veth0" || !d.IsRxe() || len(d.Ports) != 1 {
		t.Fatalf("device %+v", d)
	}
	p := d.Ports[0]
	if p.Num != 1 || p.State != "ACTIVE" || !p.Active() || p.PhysState != "LinkUp" || p.LinkLayer != "Ethernet" || p.Netdev != "veth0" || p.GIDs != nil {
		t.Errorf("port %+v (no GID table read)", p)
	}
	gids, err := ReadPortGIDs(root, "rxe0", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []rdma.GIDEntry{
		{Index: 0, GID: rdma.GIDFor(netip.MustParseAddr("fe80::b8a3:abff:fe1a:5d4a")), Type: rdma.GIDTypeRoCEv2, Netdev: "veth0"},
		{Index: 1, GID: rdma.GIDFor(netip.MustParseAddr("10.9.0.1")), Type: rdma.GIDTypeRoCEv2, Netdev: "veth0"},
		{Index: 2, GID: rdma.GIDFor(netip.MustParseAddr("fd09::1")), Type: rdma.GIDTypeRoCEv2, Netdev: "veth0"},
	}
	if len(gids) != len(want) {
		t.Fatalf("GIDs %+v, want %+v", gids, want)
	}
	for i := range want {
		if gids[i] != want[i] {
			t.Errorf("GID %d = %+v, want %+v", i, gids[i], want[i])
		}
	}
	if g, ok := rdma.ChooseGID(gids, rdma.RoCEv2, netip.MustParseAddr("10.9.0.1")); !ok || g.Index != 1 {
		t.Errorf("RoCE v2 GID for 10.9.0.1: %+v %v", g, ok)
	}
}

func TestReadDevicesWithoutRDMACore(t *testing.T) {
	_, err := ReadDevices(filepath.Join(t.TempDir(), "infiniband"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err %v, want fs.ErrNotExist", err)
	}
}

func TestEffectiveCapsFromLab(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "proc-self-status.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	caps, err := EffectiveCaps(f)
	if err != nil {
		t.Fatal(err)
	}
	if caps != 0x1ffffffffff || caps&(1<<CapNetAdmin) == 0 || caps&(1<<CapIPCLock) == 0 {
		t.Errorf("caps %#x", caps)
	}
	if _, err := EffectiveCaps(strings.NewReader("Name:\tcat\n")); err == nil {
		t.Error("no CapEff line accepted")
	}
}
