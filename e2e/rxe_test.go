//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// rxeLinks returns the `rdma link show` lines of rxe links over netdev.
func rxeLinks(t *testing.T, netdev string) []string {
	t.Helper()
	res := run(t, 30*time.Second, "rdma", "link", "show")
	var lines []string
	for _, l := range strings.Split(res.Stdout, "\n") {
		if strings.Contains(l, "netdev "+netdev+" ") || strings.HasSuffix(strings.TrimSpace(l), "netdev "+netdev) {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestNoRxeRxeLifecycle: from a kernel with rdma_rxe not loaded, rxe add
// loads it and creates the device; a second add changes nothing; status
// lists it; remove removes it.
func TestNoRxeRxeLifecycle(t *testing.T) {
	requireRole(t, "single")
	if _, err := os.Stat("/sys/module/rdma_rxe"); err == nil {
		t.Fatal("rdma_rxe is already loaded: the lab did not honour --no-rxe")
	}
	add := run(t, time.Minute, rdmactl, "rxe", "add", "veth0")
	if add.Code != 0 {
		t.Fatalf("rxe add veth0: exit %d: %s%s", add.Code, add.Stdout, add.Stderr)
	}
	if _, err := os.Stat("/sys/module/rdma_rxe"); err != nil {
		t.Errorf("rdma_rxe is not loaded after rxe add")
	}
	links := rxeLinks(t, "veth0")
	if len(links) != 1 || !strings.Contains(links[0], "state ACTIVE") {
		t.Fatalf("rdma link show after rxe add: %q, want one ACTIVE link on veth0", links)
	}
	name := strings.SplitN(strings.Fields(links[0])[1], "/", 2)[0]
	if devs := run(t, 30*time.Second, "ibv_devices"); !strings.Contains(devs.Stdout, name) {
		t.Errorf("ibv_devices does not list %s:\n%s", name, devs.Stdout)
	}
	if !strings.Contains(add.Stdout, name) || !strings.Contains(add.Stdout, "ACTIVE") {
		t.Errorf("rxe add output should name %s and its state:\n%s", name, add.Stdout)
	}

	again := run(t, time.Minute, rdmactl, "rxe", "add", "veth0")
	if again.Code != 0 || len(rxeLinks(t, "veth0")) != 1 {
		t.Errorf("second rxe add veth0: exit %d, links %q (want exit 0 and still one link)", again.Code, rxeLinks(t, "veth0"))
	}

	status := run(t, 30*time.Second, rdmactl, "rxe", "status")
	if status.Code != 0 || !strings.Contains(status.Stdout, name) || !strings.Contains(status.Stdout, "veth0") {
		t.Errorf("rxe status: exit %d, output lacks %s on veth0:\n%s", status.Code, name, status.Stdout)
	}

	rm := run(t, time.Minute, rdmactl, "rxe", "remove", name)
	if rm.Code != 0 || len(rxeLinks(t, "veth0")) != 0 {
		t.Errorf("rxe remove %s: exit %d (%s), links left %q", name, rm.Code, rm.Stderr, rxeLinks(t, "veth0"))
	}
}

// TestNoRxeRxeBadInput: unknown netdev and unknown link are clear errors.
func TestNoRxeRxeBadInput(t *testing.T) {
	requireRole(t, "single")
	for _, args := range [][]string{{"rxe", "add", "nosuchnetdev0"}, {"rxe", "remove", "nosuchrxe9"}} {
		res := run(t, 30*time.Second, rdmactl, args...)
		msg := strings.TrimRight(res.Stderr, "\n")
		if res.Code == 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, args[2]) {
			t.Errorf("rdmactl %s: exit %d, stderr %q; want a one-line error naming %s", strings.Join(args, " "), res.Code, res.Stderr, args[2])
		}
	}
}

// TestNoRxeDoctorFailsWithoutDevice: no rxe device is a named failure.
func TestNoRxeDoctorFailsWithoutDevice(t *testing.T) {
	requireRole(t, "single")
	res := run(t, time.Minute, rdmactl, "doctor")
	if res.Code != 1 || !strings.Contains(res.Stdout, "rdmactl rxe add") {
		t.Errorf("doctor without any RDMA device: exit %d, want 1 and the fix 'rdmactl rxe add':\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// TestSingleDoctor: passes on the configured lab, then fails with the right
// check when one thing at a time is broken.
func TestSingleDoctor(t *testing.T) {
	requireRole(t, "single")
	ok := run(t, time.Minute, rdmactl, "doctor")
	if ok.Code != 0 {
		t.Fatalf("doctor on the configured lab: exit %d\n%s%s", ok.Code, ok.Stdout, ok.Stderr)
	}
	for _, c := range []struct {
		name, breakIt, repair, want string
	}{
		{"ipv4 without rdma device",
			"ip link add dummy9 type dummy && ip addr add 10.9.7.1/24 dev dummy9 && ip link set dummy9 up",
			"ip link del dummy9", "10.9.7.1"},
		{"firewall drops RoCE v2",
			"iptables -A INPUT -p udp --dport 4791 -j DROP",
			"iptables -D INPUT -p udp --dport 4791 -j DROP", "4791"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := sh(t, time.Minute, c.breakIt); r.Code != 0 {
				t.Fatalf("%s: %s%s", c.breakIt, r.Stdout, r.Stderr)
			}
			defer sh(t, time.Minute, c.repair)
			res := run(t, time.Minute, rdmactl, "doctor")
			if res.Code != 1 || !strings.Contains(res.Stdout, c.want) {
				t.Errorf("doctor with %s: exit %d, want 1 and a failed check naming %q:\n%s%s", c.name, res.Code, c.want, res.Stdout, res.Stderr)
			}
		})
	}
	t.Run("memlock limit 0", func(t *testing.T) {
		// Root's CAP_IPC_LOCK bypasses the limit (rping works), so as root
		// it is a warning; without the capability MR registration fails.
		asRoot := sh(t, time.Minute, "ulimit -l 0 && exec "+rdmactl+" doctor")
		if asRoot.Code != 0 || !strings.Contains(asRoot.Stdout, "warn") || !strings.Contains(asRoot.Stdout, "memlock") {
			t.Errorf("doctor as root under ulimit -l 0: exit %d, want 0 and a memlock warning:\n%s%s", asRoot.Code, asRoot.Stdout, asRoot.Stderr)
		}
		res := sh(t, time.Minute, "ulimit -l 0 && exec setpriv --bounding-set=-ipc_lock "+rdmactl+" doctor")
		if res.Code != 1 || !strings.Contains(res.Stdout, "ulimit -l") {
			t.Errorf("doctor under ulimit -l 0 without CAP_IPC_LOCK: exit %d, want 1 and the fix naming 'ulimit -l':\n%s%s", res.Code, res.Stdout, res.Stderr)
		}
	})

}
