package host

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A port as rdma_rxe shows it: the link-local entry (index 0, IB/RoCE v1
// on Ethernet), the IPv4 RoCE v2 entry at 1, an empty slot at 2.
func TestReadSysfsGIDs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "link_layer"), "Ethernet\n")
	for i, e := range []struct{ gid, typ string }{
		{"fe80:0000:0000:0000:8025:00ff:feb5:0f48\n", "IB/RoCE v1\n"},
		{"0000:0000:0000:0000:0000:ffff:0a09:0001\n", "RoCE v2\n"},
		{"0000:0000:0000:0000:0000:0000:0000:0000\n", ""},
	} {
		n := string(rune('0' + i))
		writeFile(t, filepath.Join(dir, "gids", n), e.gid)
		if e.typ != "" {
			writeFile(t, filepath.Join(dir, "gid_attrs", "types", n), e.typ)
			writeFile(t, filepath.Join(dir, "gid_attrs", "ndevs", n), "veth0\n")
		}
	}
	got, err := ReadSysfsGIDs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Type != rdma.GIDTypeRoCEv1 || got[1].Type != rdma.GIDTypeRoCEv2 || got[1].Index != 1 || got[1].Netdev != "veth0" {
		t.Fatalf("ReadSysfsGIDs = %+v", got)
	}
	e, ok := rdma.ChooseGID(got, rdma.RoCEv2, netip.MustParseAddr("10.9.0.7"), netip.MustParseAddr("10.9.0.1"))
	if !ok || e.Index != 1 {
		t.Errorf("ChooseGID = %+v, %v; want index 1", e, ok)
	}
	if _, ok := rdma.ChooseGID(got, rdma.RoCEv2, netip.MustParseAddr("fe80::8025:ff:feb5:f48")); ok {
		t.Errorf("ChooseGID chose the RoCE v1 link-local entry")
	}
}

func TestParseSysfsGIDType(t *testing.T) {
	if v, _ := ParseSysfsGIDType("IB/RoCE v1", rdma.LinkLayerInfiniBand); v != rdma.GIDTypeIB {
		t.Errorf("IB/RoCE v1 on InfiniBand = %v", v)
	}
	if _, err := ParseSysfsGIDType("RoCE v3", rdma.LinkLayerEthernet); err == nil {
		t.Errorf("unknown type accepted")
	}
}
