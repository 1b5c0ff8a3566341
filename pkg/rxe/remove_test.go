package rxe

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

func TestRemoveByNameOrNetdev(t *testing.T) {
	for _, target := range []string{"rxe_veth0", "veth0"} {
		t.Run(target, func(t *testing.T) {
			nds := labNetdevs()
			h := &fakeHost{netdevs: nds, devs: []Device{rxeDevice("rxe_veth0", nds[2], ""), rxeDevice("rxe1", nds[1], "")}}
			io, out := testIO()
			wantExit(t, Remove(&RemoveOptions{IO: io, Target: target, Host: h}), 0)
			if strings.Join(h.dels, ",") != "rxe_veth0" {
				t.Errorf("deleted %v, want rxe_veth0", h.dels)
			}
			if out.String() != "rxe_veth0: removed from veth0\n" {
				t.Errorf("output %q", out)
			}
		})
	}
}

func TestRemoveErrors(t *testing.T) {
	nds := labNetdevs()
	hw := Device{Name: "mlx5_0", Ports: []Port{{Num: 1, State: "ACTIVE", LinkLayer: "Ethernet", Netdev: "veth1"}}}
	tests := []struct {
		name   string
		host   *fakeHost
		target string
		want   string
	}{
		{"unknown", &fakeHost{netdevs: nds}, "rxe9",
			"no RDMA device named rxe9 and no rxe link on a netdev named rxe9 (see rdmactl rxe status)"},
		{"not rxe", &fakeHost{netdevs: nds, devs: []Device{hw}}, "mlx5_0",
			"mlx5_0 is not a Soft-RoCE (rxe) device; rdmactl removes rxe links only"},
		{"not root", &fakeHost{netdevs: nds, notAdmin: true, devs: []Device{rxeDevice("rxe0", nds[2], "")}}, "rxe0",
			"removing RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe remove rxe0)"},
		{"EPERM", &fakeHost{netdevs: nds, delErr: unix.EPERM, devs: []Device{rxeDevice("rxe0", nds[2], "")}}, "veth0",
			"removing RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe remove veth0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io, _ := testIO()
			err := Remove(&RemoveOptions{IO: io, Target: tt.target, Host: tt.host})
			wantExit(t, err, 1)
			if err.Error() != tt.want {
				t.Errorf("error %q\nwant  %q", err, tt.want)
			}
			if tt.name != "EPERM" && len(tt.host.dels) != 0 {
				t.Errorf("deleted anyway: %v", tt.host.dels)
			}
		})
	}
}

func TestRemoveJSON(t *testing.T) {
	nds := labNetdevs()
	h := &fakeHost{netdevs: nds, devs: []Device{rxeDevice("rxe_veth0", nds[2], "")}}
	io, out := testIO()
	wantExit(t, Remove(&RemoveOptions{IO: io, JSON: true, Target: "veth0", Host: h}), 0)
	if err := schema.Validate("rxe-remove", out.Bytes()); err != nil {
		t.Errorf("%s: against its schema: %v", out, err)
	}
	if !strings.Contains(out.String(), `"device":"rxe_veth0","netdev":"veth0","removed":true`) {
		t.Errorf("output %s", out)
	}
}
