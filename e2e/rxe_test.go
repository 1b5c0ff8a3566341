//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
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
	res := run(t, time.Minute, rdmactl, "doctor")
	if res.Code != 1 || !strings.Contains(res.Stdout, "rdmactl rxe add") {
		t.Errorf("doctor without any RDMA device: exit %d, want 1 and the fix 'rdmactl rxe add':\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// TestNoRxeDoctorKernelWithoutRxe: on a kernel whose module index has no
// rdma_rxe, doctor must not send the user to `rxe add` (which would fail
// loading the module); both failing checks name the module as missing.
func TestNoRxeDoctorKernelWithoutRxe(t *testing.T) {
	// /lib/modules is read-only in the lab: mount an index without rdma_rxe over it.
	dep := "/lib/modules/$(uname -r)/modules.dep"
	// Earlier tests may have loaded rdma_rxe; with no device left it unloads.
	if r := sh(t, time.Minute, "if grep -q '^rdma_rxe ' /proc/modules; then rmmod rdma_rxe; fi && grep -v rdma_rxe "+dep+" >/tmp/modules.dep.norxe && mount --bind /tmp/modules.dep.norxe "+dep); r.Code != 0 {
		t.Fatalf("hiding rdma_rxe: %s%s", r.Stdout, r.Stderr)
	}
	defer sh(t, time.Minute, "umount "+dep)
	res := run(t, time.Minute, rdmactl, "doctor")
	if res.Code != 1 {
		t.Fatalf("doctor: exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, line := range strings.Split(res.Stdout, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch fields[1] {
		case "active-port", "kernel-modules":
			if fields[0] != "fail" || strings.Contains(line, "rxe add") || !strings.Contains(line, "rdma_rxe") {
				t.Errorf("want a failure naming the missing rdma_rxe, without 'rxe add':\n%s", line)
			}
		}
	}
}

// TestSingleDoctor: passes on the configured lab, then fails with the right
// check when one thing at a time is broken.
func TestSingleDoctor(t *testing.T) {
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

// linkOn returns the `rdma link show` line of the rxe link over netdev, if any.
func linkOn(t *testing.T, netdev string) string {
	t.Helper()
	if l := rxeLinks(t, netdev); len(l) > 0 {
		return l[0]
	}
	return ""
}

// cleanupNetdev deletes netdev and any rxe link on it when the test ends.
func cleanupNetdev(t *testing.T, netdev string) {
	t.Cleanup(func() {
		if l := linkOn(t, netdev); l != "" {
			name := strings.SplitN(strings.Fields(l)[1], "/", 2)[0]
			sh(t, 30*time.Second, "rdma link delete '"+name+"'")
		}
		sh(t, 30*time.Second, "ip link del "+netdev+" 2>/dev/null")
	})
}

// TestSingleRxeEdgeCases: loopback, names the kernel
// would mangle, netdevs that stay down, concurrent adds and an ignored
// --name each get a true verdict and leave no stray link behind.
func TestSingleRxeEdgeCases(t *testing.T) {
	t.Run("loopback refused", func(t *testing.T) {
		t.Cleanup(func() {
			if l := linkOn(t, "lo"); l != "" {
				sh(t, 30*time.Second, "rdma link delete "+strings.SplitN(strings.Fields(l)[1], "/", 2)[0])
			}
		})
		res := run(t, time.Minute, rdmactl, "rxe", "add", "lo")
		if res.Code != 1 || !strings.Contains(res.Stderr, "loopback") || linkOn(t, "lo") != "" {
			t.Errorf("rxe add lo: exit %d, stderr %q, link %q; want exit 1, the reason (loopback) and no link", res.Code, res.Stderr, linkOn(t, "lo"))
		}
	})
	t.Run("name the kernel would rewrite", func(t *testing.T) {
		cleanupNetdev(t, "dumn0")
		sh(t, 30*time.Second, "ip link add dumn0 type dummy && ip link set dumn0 up")
		for _, name := range []string{"x/y", "a b", "rxe%d", strings.Repeat("n", 64)} {
			res := run(t, time.Minute, rdmactl, "rxe", "add", "dumn0", "--name", name)
			if res.Code != 2 || !strings.Contains(res.Stderr, "--name") || linkOn(t, "dumn0") != "" {
				t.Errorf("rxe add dumn0 --name %q: exit %d, stderr %q, link %q; want exit 2 naming --name and no link", name, res.Code, res.Stderr, linkOn(t, "dumn0"))
			}
		}
	})
	t.Run("admin-down netdev", func(t *testing.T) {
		cleanupNetdev(t, "dumd0")
		sh(t, 30*time.Second, "ip link add dumd0 type dummy")
		res := run(t, time.Minute, rdmactl, "rxe", "add", "dumd0", "--timeout", "3s")
		if res.Code != 1 || !strings.Contains(res.Stderr, "ip link set dumd0 up") || linkOn(t, "dumd0") != "" {
			t.Errorf("rxe add on a down dummy: exit %d, stderr %q, link left %q; want exit 1, the fix and no link", res.Code, res.Stderr, linkOn(t, "dumd0"))
		}
	})
	t.Run("port that never comes up", func(t *testing.T) {
		// veth up with its peer down: the netdev is up, the port stays DOWN.
		cleanupNetdev(t, "vq0")
		sh(t, 30*time.Second, "ip link add vq0 type veth peer name vq1 && ip link set vq0 up")
		res := run(t, time.Minute, rdmactl, "rxe", "add", "vq0", "--timeout", "3s")
		left := linkOn(t, "vq0")
		if res.Code != 1 || (left != "" && !strings.Contains(res.Stderr, "rdmactl rxe remove")) {
			t.Errorf("rxe add on a veth whose peer is down: exit %d, stderr %q, link %q; want exit 1 and the link removed (or how to remove it)", res.Code, res.Stderr, left)
		}
		if left == "" && !strings.Contains(res.Stderr, "removed") {
			t.Errorf("stderr %q does not say the new link was removed again", res.Stderr)
		}
	})
	t.Run("concurrent adds", func(t *testing.T) {
		cleanupNetdev(t, "dumc0")
		for round := 0; round < 2; round++ {
			sh(t, 30*time.Second, "ip link del dumc0 2>/dev/null; ip link add dumc0 type dummy && ip link set dumc0 up")
			a := start(t, time.Minute, rdmactl, "rxe", "add", "dumc0")
			b := run(t, time.Minute, rdmactl, "rxe", "add", "dumc0")
			ra := a.wait(t)
			for _, r := range []result{ra, b} {
				if r.Code != 0 || strings.Contains(r.Stderr, "too many open files") {
					t.Errorf("round %d: concurrent rxe add dumc0: exit %d, stderr %q; want both to succeed (one creates, one finds it)", round, r.Code, r.Stderr)
				}
			}
			if n := len(rxeLinks(t, "dumc0")); n != 1 {
				t.Errorf("round %d: %d links on dumc0, want 1", round, n)
			}
			if l := linkOn(t, "dumc0"); l != "" {
				sh(t, 30*time.Second, "rdma link delete "+strings.SplitN(strings.Fields(l)[1], "/", 2)[0])
			}
		}
	})
	t.Run("name ignored when the netdev has a device", func(t *testing.T) {
		res := run(t, time.Minute, rdmactl, "rxe", "add", "veth0", "--name", "rxe9")
		if res.Code != 0 || !strings.Contains(res.Stderr, "rxe9") || !strings.Contains(res.Stderr, "rxe0") {
			t.Errorf("rxe add veth0 --name rxe9 with rxe0 on veth0: exit %d, stderr %q; want exit 0 and a note naming rxe9 (ignored) and rxe0", res.Code, res.Stderr)
		}
	})
}

// TestSingleRxeReadsOnlyWhatItPrints: status and remove
// print no GIDs and must read no GID table; add on a netdev that has its
// device reads that one port's table only. (Reading every table made
// status take 8 s where `rdma link show` takes 0.2 s.) strace counts the
// sysfs files opened; the times are logged for comparison.
func TestSingleRxeReadsOnlyWhatItPrints(t *testing.T) {
	cleanupNetdev(t, "vt0")
	sh(t, 30*time.Second, "ip link add vt0 type veth peer name vt1 && ip link set vt0 up && ip link set vt1 up && rdma link add rxet type rxe netdev vt0")
	trace := filepath.Join(t.TempDir(), "trace")
	gidOpens := func(args ...string) map[string]int {
		t.Helper()
		t0 := time.Now()
		// --seccomp-bpf stops only at openat: plain strace slows every
		// syscall down, which under TCG takes minutes. strace itself
		// loses a thread of the traced program now and then ("ptrace(
		// PTRACE_LISTEN, ...): Input/output error"):
		// such a run says nothing of rdmactl and is repeated, with rxet
		// back if the lost run removed it.
		var res result
		for attempt := 0; attempt < 3; attempt++ {
			if attempt > 0 {
				sh(t, 30*time.Second, "rdma link show rxet/1 >/dev/null 2>&1 || rdma link add rxet type rxe netdev vt0")
			}
			res = run(t, 5*time.Minute, "strace", append([]string{"--seccomp-bpf", "-f", "-qq", "-e", "trace=openat", "-o", trace, rdmactl}, args...)...)
			if !strings.Contains(res.Stderr, "strace: ptrace(PTRACE_LISTEN") {
				break
			}
			t.Logf("strace lost a thread: %s; running again", strings.TrimSpace(res.Stderr))
		}
		took := time.Since(t0)
		if res.Code != 0 {
			t.Fatalf("rdmactl %s: exit %d: %s", strings.Join(args, " "), res.Code, res.Stderr)
		}
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		opens := map[string]int{}
		for _, l := range strings.Split(string(b), "\n") {
			if i := strings.Index(l, "/sys/class/infiniband/"); i >= 0 && strings.Contains(l, "/gids/") {
				dev := strings.SplitN(l[i+len("/sys/class/infiniband/"):], "/", 2)[0]
				opens[dev]++
			}
		}
		t.Logf("rdmactl %s: %v under strace, GID files opened per device %v", strings.Join(args, " "), took, opens)
		return opens
	}
	t0 := time.Now()
	run(t, time.Minute, "rdma", "link", "show")
	t.Logf("rdma link show: %v", time.Since(t0))
	if o := gidOpens("rxe", "status"); len(o) != 0 {
		t.Errorf("rxe status opened GID files %v; it prints no GID", o)
	}
	if o := gidOpens("rxe", "add", "veth0"); len(o) != 1 || o["rxe0"] == 0 {
		t.Errorf("rxe add veth0 (rxe0 there) opened GID files %v; want rxe0's only", o)
	}
	if o := gidOpens("rxe", "remove", "rxet"); len(o) != 0 {
		t.Errorf("rxe remove opened GID files %v; it prints no GID", o)
	}
}

// TestNoRxeRxeAddLoadsCMModules: rxe add leaves the host
// ready for rdma_cm programs, loading ib_uverbs and rdma_ucm as rxe_cfg did.
func TestNoRxeRxeAddLoadsCMModules(t *testing.T) {
	// rdma_rxe (left loaded by earlier tests) holds ib_uverbs; rdma_ucm
	// is what rxe add used not to load.
	if r := sh(t, time.Minute, "modprobe -r rdma_rxe; modprobe -r rdma_ucm && { modprobe -r ib_uverbs || true; }"); r.Code != 0 {
		t.Fatalf("cannot unload rdma_ucm: %s", r.Stderr)
	}
	t.Cleanup(func() { sh(t, time.Minute, "modprobe ib_uverbs; modprobe rdma_ucm; rdma link delete rxe_veth0") })
	res := run(t, time.Minute, rdmactl, "rxe", "add", "veth0")
	if res.Code != 0 {
		t.Fatalf("rxe add veth0: exit %d: %s", res.Code, res.Stderr)
	}
	for _, m := range []string{"ib_uverbs", "rdma_ucm"} {
		if _, err := os.Stat("/sys/module/" + m); err != nil {
			t.Errorf("%s is not loaded after rxe add", m)
		}
	}
	if _, err := os.Stat("/dev/infiniband/rdma_cm"); err != nil {
		t.Errorf("/dev/infiniband/rdma_cm missing after rxe add: %v", err)
	}
}
