package host

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// fakeClass builds a /sys/class/infiniband with rxe0 on veth0 (10.9.0.1)
// and rxe1 on veth1 (10.9.0.2, its port DOWN in the second variant).
type fakePort struct {
	dev, parent, state string
	gids               map[int][2]string // index -> gid, type
}

func fakeClass(t *testing.T, ports ...fakePort) string {
	t.Helper()
	root := t.TempDir()
	write := func(path, content string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range ports {
		dev := filepath.Join(root, p.dev)
		write(filepath.Join(dev, "parent"), p.parent)
		port := filepath.Join(dev, "ports", "1")
		write(filepath.Join(port, "state"), p.state)
		write(filepath.Join(port, "phys_state"), "5: LinkUp")
		write(filepath.Join(port, "link_layer"), "Ethernet")
		for i := 0; i < 8; i++ {
			g, typ := "0000:0000:0000:0000:0000:0000:0000:0000", ""
			if e, ok := p.gids[i]; ok {
				g, typ = e[0], e[1]
			}
			write(filepath.Join(port, "gids", fmt.Sprint(i)), g)
			if typ != "" {
				write(filepath.Join(port, "gid_attrs", "types", fmt.Sprint(i)), typ)
			}
		}
	}
	return root
}

func roce(ip string) map[int][2]string {
	a := netip.MustParseAddr(ip).As4()
	v4 := fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a[0], a[1], a[2], a[3])
	return map[int][2]string{
		0: {"fe80:0000:0000:0000:0000:00ff:fe00:0001", "IB/RoCE v1"},
		2: {v4, "IB/RoCE v1"},
		3: {v4, "RoCE v2"},
	}
}

func TestFindRoCEPort(t *testing.T) {
	class := fakeClass(t,
		fakePort{"rxe0", "veth0", "4: ACTIVE", roce("10.9.0.1")},
		fakePort{"rxe1", "veth1", "4: ACTIVE", roce("10.9.0.2")},
		fakePort{"rxe2", "veth2", "1: DOWN", roce("10.9.0.3")},
	)
	for _, c := range []struct {
		netdev, ip string
		want       RoCEPort
		ok         bool
	}{
		{"veth0", "10.9.0.1", RoCEPort{"rxe0", 1, 3}, true},
		{"veth1", "10.9.0.2", RoCEPort{"rxe1", 1, 3}, true},
		{"", "10.9.0.2", RoCEPort{"rxe1", 1, 3}, true},             // no netdev: every device
		{"veth0", "10.9.0.2", RoCEPort{"rxe1", 1, 3}, true},        // wrong netdev: still found
		{"veth2", "10.9.0.3", RoCEPort{}, false},                   // port DOWN
		{"veth0", "10.9.0.9", RoCEPort{}, false},                   // nobody carries it
		{"veth0", "::ffff:10.9.0.1", RoCEPort{"rxe0", 1, 3}, true}, // mapped form
	} {
		got, ok := FindRoCEPort(class, c.netdev, netip.MustParseAddr(c.ip))
		if ok != c.ok || got != c.want {
			t.Errorf("FindRoCEPort(%s, %s) = %+v, %v; want %+v, %v", c.netdev, c.ip, got, ok, c.want, c.ok)
		}
	}
	if !HasRDMA(class, "veth1") || HasRDMA(class, "eth0") {
		t.Error("HasRDMA wrong")
	}
	if ip, ok := FirstRoCEAddr(class); !ok || ip != netip.MustParseAddr("10.9.0.1") {
		t.Errorf("FirstRoCEAddr = %v, %v", ip, ok)
	}
	if _, ok := FirstRoCEAddr(t.TempDir()); ok {
		t.Error("FirstRoCEAddr found an address without devices")
	}
}
