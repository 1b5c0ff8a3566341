package rxe

import (
	"encoding/json"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// The netdev MTU → active_mtu pairs were read with ibv_devinfo in the lab
// VM after `ip link set veth0 mtu N`.
func TestActiveMTUMatchesRxe(t *testing.T) {
	for mtu, want := range map[int]int{9000: 4096, 1500: 1024, 1100: 512} {
		if got := ActiveMTU(mtu); got != want {
			t.Errorf("ActiveMTU(%d) = %d, want %d", mtu, got, want)
		}
	}
}

func TestStatusTable(t *testing.T) {
	nds := append(labNetdevs(), Netdev{Name: "dummy0", Kind: "dummy", Index: 4, State: "down", MTU: 1500})
	h := &fakeHost{netdevs: nds, devs: []Device{
		rxeDevice("rxe_b", nds[1], ""),
		rxeDevice("rxe_veth0", nds[2], ""),
		rxeDevice("rxe_dummy0", nds[3], "DOWN"),
	}}
	io, out := testIO()
	wantExit(t, Status(&StatusOptions{IO: io, Host: h}), 0)
	if h.gidReads != 0 {
		t.Errorf("status read %d GID tables; it prints none", h.gidReads)
	}
	// Same layout as rdmactl printed in the lab VM for this topology.
	want := "" +
		"NETDEV  LINK  MTU   IPV4      RDEV        STATE   RMTU\n" +
		"veth1   up    1500  10.9.0.2  rxe_b       ACTIVE  1024\n" +
		"veth0   up    1500  10.9.0.1  rxe_veth0   ACTIVE  1024\n" +
		"dummy0  down  1500  -         rxe_dummy0  DOWN    1024\n"
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
}

func TestStatusJSONWithoutRxe(t *testing.T) {
	h := &fakeHost{netdevs: labNetdevs(), noClass: true}
	io, out := testIO()
	wantExit(t, Status(&StatusOptions{IO: io, JSON: true, Host: h}), 0)
	var doc struct {
		Netdevs []map[string]any `json:"netdevs"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := schema.Validate("rxe-status", out.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	rows := doc.Netdevs
	if len(rows) != 2 {
		t.Fatalf("rows %v, want veth1 and veth0 (lo left out)", rows)
	}
	if rows[1]["netdev"] != "veth0" || rows[1]["mtu"] != float64(1500) || rows[1]["operstate"] != "UP" {
		t.Errorf("row %v", rows[1])
	}
	if _, ok := rows[1]["device"]; ok {
		t.Errorf("veth0 has no rxe device but the row names one: %v", rows[1])
	}
}

func TestStatusRowsListLoopbackOnlyWithRxe(t *testing.T) {
	nds := labNetdevs()
	rows := StatusRows(nds, []Device{rxeDevice("rxe_lo", nds[0], "")})
	if len(rows) != 3 || rows[0].Netdev != "lo" || rows[0].Device != "rxe_lo" || rows[0].ActiveMTU != 4096 {
		t.Errorf("rows %+v", rows)
	}
}
