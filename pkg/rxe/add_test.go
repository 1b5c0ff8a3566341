package rxe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestAddCreatesLinkLoadingModule(t *testing.T) {
	h := &fakeHost{netdevs: labNetdevs()}
	io, out := testIO()
	err := Add(&AddOptions{IO: io, Netdev: "veth0", Host: h})
	wantExit(t, err, 0)
	if strings.Join(h.loads, ",") != "rdma_rxe,ib_uverbs,rdma_ucm" {
		t.Errorf("modules loaded %v, want rdma_rxe, ib_uverbs and rdma_ucm (a host ready for rping)", h.loads)
	}
	if strings.Join(h.adds, ",") != "rxe_veth0@veth0" {
		t.Errorf("links added %v, want rxe_veth0 on veth0", h.adds)
	}
	text := out.String()
	for _, want := range []string{
		"rxe_veth0: created on veth0, port 1 ACTIVE\nDEV\tPORT\tINDEX\tGID",
		"rxe_veth0\t1\t1\t0000:0000:0000:0000:0000:ffff:0a09:0001\t10.9.0.1  \tv2\tveth0\n",
		"n_gids_found=3\nrecommended: rxe_veth0 port 1 index 1 (RoCE v2, 10.9.0.1, veth0): use -g 1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

func TestAddSkipsModprobeWhenLoadedAndHonoursName(t *testing.T) {
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	io, _ := testIO()
	wantExit(t, Add(&AddOptions{IO: io, Netdev: "veth1", Name: "rxe1", Host: h}), 0)
	if len(h.loads) != 0 {
		t.Errorf("modprobe ran although %s was loaded: %v", Module, h.loads)
	}
	if strings.Join(h.adds, ",") != "rxe1@veth1" {
		t.Errorf("links added %v, want rxe1 on veth1", h.adds)
	}
}

func TestAddIsIdempotent(t *testing.T) {
	nds := labNetdevs()
	h := &fakeHost{netdevs: nds, loaded: true, devs: []Device{rxeDevice("rxe0", nds[2], "")}}
	io, out := testIO()
	// Even with another --name, the link already on veth0 is what counts.
	errOut := &bytes.Buffer{}
	io.ErrOut = errOut
	wantExit(t, Add(&AddOptions{IO: io, Netdev: "veth0", Name: "other", Host: h}), 0)
	if len(h.adds) != 0 || len(h.loads) != 0 {
		t.Errorf("second add changed something: adds %v loads %v", h.adds, h.loads)
	}
	if !strings.HasPrefix(out.String(), "rxe0: already on veth0 (nothing changed), port 1 ACTIVE\n") {
		t.Errorf("output:\n%s", out)
	}
	if want := "rdmactl: note: --name other ignored: veth0 already has rxe0 (remove it first to rename: rdmactl rxe remove rxe0)\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if h.gidReads != 1 {
		t.Errorf("read %d GID tables, want only the shown port's", h.gidReads)
	}
}

func TestAddJSON(t *testing.T) {
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	io, out := testIO()
	wantExit(t, Add(&AddOptions{IO: io, JSON: true, Netdev: "veth1", Name: "rxe_b", Host: h}), 0)
	var res struct {
		Device   string          `json:"device"`
		Netdev   string          `json:"netdev"`
		Created  bool            `json:"created"`
		State    string          `json:"state"`
		GIDIndex *int            `json:"gid_index"`
		GIDs     []rdma.GIDEntry `json:"gids"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := schema.Validate("rxe-add", out.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	if res.Device != "rxe_b" || res.Netdev != "veth1" || !res.Created || res.State != "ACTIVE" ||
		res.GIDIndex == nil || *res.GIDIndex != 1 || len(res.GIDs) != 3 {
		t.Errorf("JSON result %+v", res)
	}
	if ip, _ := res.GIDs[1].GID.IPv4(); ip.String() != "10.9.0.2" {
		t.Errorf("GID 1 is %v, want ::ffff:10.9.0.2", res.GIDs[1].GID)
	}
	if !strings.Contains(out.String(), `"gid":"::ffff:10.9.0.2","gid_type":"RoCE v2",`) {
		t.Errorf("JSON GID entries changed form:\n%s", out)
	}
}

func TestAddErrors(t *testing.T) {
	nds := labNetdevs()
	tests := []struct {
		name   string
		host   *fakeHost
		opts   AddOptions
		want   string
		noAdds bool
	}{
		{
			name: "unknown netdev",
			host: &fakeHost{netdevs: nds},
			opts: AddOptions{Netdev: "eth7"},
			want: `network device "eth7" does not exist`, noAdds: true,
		},
		{
			name: "not root",
			host: &fakeHost{netdevs: nds, notAdmin: true},
			opts: AddOptions{Netdev: "veth0"},
			want: "creating RDMA links needs CAP_NET_ADMIN: run as root", noAdds: true,
		},
		{
			name: "name taken on another netdev",
			host: &fakeHost{netdevs: nds, loaded: true, devs: []Device{rxeDevice("rxe0", nds[2], "")}},
			opts: AddOptions{Netdev: "veth1", Name: "rxe0"},
			want: "RDMA device rxe0 already exists on veth0; choose another --name", noAdds: true,
		},
		{
			name: "module cannot load",
			host: &fakeHost{netdevs: nds, loadErr: &host.ModuleError{Module: Module,
				Message: "modprobe: ERROR: could not insert 'rdma_rxe': Invalid argument"}},
			opts: AddOptions{Netdev: "veth0"},
			want: "cannot load kernel module rdma_rxe: modprobe: ERROR: could not insert 'rdma_rxe': Invalid argument", noAdds: true,
		},
		{
			name: "kernel without RDMA",
			host: &fakeHost{netdevs: nds, noClass: true, loadErr: &host.ModuleError{Module: Module,
				Message: "modprobe: FATAL: Module rdma_rxe not found in directory /lib/modules/6.18.44"}},
			opts: AddOptions{Netdev: "veth0"},
			want: "this kernel has no RDMA support: /sys/class/infiniband does not exist and rdma_rxe cannot be loaded " +
				"(modprobe: FATAL: Module rdma_rxe not found in directory /lib/modules/6.18.44); try it in the lab VM", noAdds: true,
		},
		{
			name: "EPERM from netlink",
			host: &fakeHost{netdevs: nds, loaded: true, addErr: fmt.Errorf("netlink: %w", unix.EPERM)},
			opts: AddOptions{Netdev: "veth0"},
			want: "creating RDMA links needs CAP_NET_ADMIN",
		},
		{
			name: "other netlink error",
			host: &fakeHost{netdevs: nds, loaded: true, addErr: unix.EINVAL},
			opts: AddOptions{Netdev: "veth0"},
			want: "rdma link add rxe_veth0 type rxe netdev veth0: invalid argument (the kernel log may say why: dmesg | tail)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io, out := testIO()
			tt.opts.IO, tt.opts.Host = io, tt.host
			err := Add(&tt.opts)
			wantExit(t, err, 1)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			if tt.noAdds && len(tt.host.adds) != 0 {
				t.Errorf("links added anyway: %v", tt.host.adds)
			}
			if out.Len() != 0 {
				t.Errorf("printed on failure: %s", out)
			}
		})
	}
}

func TestAddRefusesAdminDownNetdev(t *testing.T) {
	nds := append(labNetdevs(), Netdev{Name: "dummy0", Kind: "dummy", Index: 4, State: "down", MTU: 1500})
	h := &fakeHost{netdevs: nds, loaded: true}
	io, _ := testIO()
	err := Add(&AddOptions{IO: io, Netdev: "dummy0", Host: h})
	wantExit(t, err, 1)
	want := "dummy0 is down, so its RDMA port would stay DOWN; fix: ip link set dummy0 up, then rdmactl rxe add dummy0"
	if err.Error() != want || len(h.adds) != 0 {
		t.Errorf("error %q (adds %v)\nwant  %q and no link", err, h.adds, want)
	}
}

func TestAddRemovesLinkWhosePortStaysDown(t *testing.T) {
	nds := append(labNetdevs(), Netdev{Name: "vq0", Kind: "veth", Index: 4, AdminUp: true, State: "lower-layer-down", MTU: 1500})
	h := &fakeHost{netdevs: nds, loaded: true, portState: "DOWN"}
	io, _ := testIO()
	start := time.Now()
	err := Add(&AddOptions{IO: io, Netdev: "vq0", Timeout: 150 * time.Millisecond, Host: h})
	wantExit(t, err, 1)
	want := "rxe_vq0 port 1 is DOWN after 150ms: vq0 is lower-layer-down; fix: set its veth peer up (ip link set PEER up); " +
		"rxe_vq0 was removed again, run rdmactl rxe add vq0 once that is fixed"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if strings.Join(h.dels, ",") != "rxe_vq0" || len(h.devs) != 0 {
		t.Errorf("link not removed: dels %v, devices %v", h.dels, h.devs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("wait took %v, bounded by a 150ms timeout", d)
	}
	h = &fakeHost{netdevs: nds, loaded: true, portState: "DOWN", delErr: unix.EBUSY}
	err = Add(&AddOptions{IO: io, Netdev: "vq0", Timeout: 50 * time.Millisecond, Host: h})
	if err == nil || !strings.HasSuffix(err.Error(), "rxe_vq0 was left behind (removing it failed: device or resource busy): rdmactl rxe remove rxe_vq0") {
		t.Errorf("error %v, want it to say the link was left and how to remove it", err)
	}
}

func TestAddRefusesLoopbackAndBadNames(t *testing.T) {
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	io, _ := testIO()
	err := Add(&AddOptions{IO: io, Netdev: "lo", Host: h})
	wantExit(t, err, 1)
	if !strings.HasPrefix(err.Error(), "lo is a loopback device: its packets never leave this host") {
		t.Errorf("error %q", err)
	}
	for name, why := range map[string]string{
		"x/y":                   "the kernel would rename it ('/' becomes '!')",
		"rxe%d":                 "the kernel refuses '%' in device names",
		"a b":                   "spaces and control characters are not allowed",
		strings.Repeat("n", 64): "64 bytes, the kernel keeps at most 63",
		"..":                    "not a device name",
	} {
		err := Add(&AddOptions{IO: io, Netdev: "veth0", Name: name, Host: h})
		wantExit(t, err, 2)
		if want := fmt.Sprintf("invalid --name %q: %s", name, why); err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
	if len(h.adds) != 0 {
		t.Errorf("links added: %v", h.adds)
	}
	wantExit(t, ValidName(strings.Repeat("n", 63)), 0)
	wantExit(t, Add(&AddOptions{IO: io, Netdev: "veth0", Timeout: -time.Second, Host: h}), 2)
}

// racingHost loses the race: AddLink fails as the kernel does for the
// second of two concurrent adds, after the first created its link.
type racingHost struct {
	*fakeHost
	err error
}

func (h racingHost) AddLink(name, netdev string) error {
	if err := h.fakeHost.AddLink("rxe_"+netdev, netdev); err != nil {
		return err
	}
	return h.err
}

func TestAddLosingAConcurrentAddFindsTheLink(t *testing.T) {
	for _, errno := range []error{unix.EEXIST, unix.ENFILE} {
		h := racingHost{&fakeHost{netdevs: labNetdevs(), loaded: true}, errno}
		io, out := testIO()
		wantExit(t, Add(&AddOptions{IO: io, Netdev: "veth0", Host: h}), 0)
		if !strings.HasPrefix(out.String(), "rxe_veth0: already on veth0 (nothing changed), port 1 ACTIVE\n") {
			t.Errorf("%v: output\n%s", errno, out)
		}
	}
}

// lateRacingHost loses the race to an add whose device shows in sysfs
// only some looks after the kernel refused this one.
type lateRacingHost struct {
	*fakeHost
	err     error
	looks   *int // Devices calls before the winner's device shows
	pending *string
}

func (h lateRacingHost) AddLink(name, netdev string) error {
	*h.pending = netdev
	return h.err
}

func (h lateRacingHost) Devices() ([]Device, error) {
	if *h.pending != "" {
		if *h.looks--; *h.looks == 0 {
			if err := h.fakeHost.AddLink("rxe_"+*h.pending, *h.pending); err != nil {
				return nil, err
			}
		}
	}
	return h.fakeHost.Devices()
}

// TestAddLosingARaceWaitsForTheWinnersDevice: the winner's device may show
// a moment after the kernel refused the loser, which then finds it.
func TestAddLosingARaceWaitsForTheWinnersDevice(t *testing.T) {
	looks, pending := 3, ""
	h := lateRacingHost{&fakeHost{netdevs: labNetdevs(), loaded: true}, unix.EEXIST, &looks, &pending}
	io, out := testIO()
	wantExit(t, Add(&AddOptions{IO: io, Netdev: "veth0", Host: h}), 0)
	if !strings.HasPrefix(out.String(), "rxe_veth0: already on veth0 (nothing changed), port 1 ACTIVE\n") {
		t.Errorf("output\n%s", out)
	}
}

func TestDownHint(t *testing.T) {
	tests := []struct {
		nd   Netdev
		want string
	}{
		{Netdev{Name: "veth0", Kind: "veth", AdminUp: true, State: "lower-layer-down"},
			"veth0 is lower-layer-down; fix: set its veth peer up (ip link set PEER up)"},
		{Netdev{Name: "eth0", Kind: "device", AdminUp: true, State: "down"},
			"eth0 is down: it has no carrier (check its cable or lower device)"},
		{Netdev{Name: "eth0", Kind: "device", AdminUp: true, OperUp: true, State: "up"},
			"eth0 is up; see the kernel log (dmesg | tail)"},
	}
	for _, tt := range tests {
		if got := downHint(tt.nd); got != tt.want {
			t.Errorf("downHint(%+v) = %q, want %q", tt.nd, got, tt.want)
		}
	}
}
