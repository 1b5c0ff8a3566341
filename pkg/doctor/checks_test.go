package doctor

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/counters"
)

// loadFacts reads testdata/facts/NAME.json, captured with
// `rdmactl doctor --facts` in the lab VM (see testdata/README).
func loadFacts(t *testing.T, name string) (*Facts, netip.Addr) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "facts", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f Facts
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var target netip.Addr
	if f.Target != nil {
		target = f.Target.Addr
	}
	return &f, target
}

// allOK is the verdict of every check on the configured lab.
var allOK = map[string]Status{
	CheckModules: OK, CheckUverbs: OK, CheckRdmaCM: OK, CheckProvider: OK, CheckPorts: OK,
	CheckGIDs: OK, CheckAddrs: OK, CheckFirewall: OK, CheckMemlock: OK,
}

// with returns allOK with some verdicts changed.
func with(changes map[string]Status) map[string]Status {
	m := map[string]Status{}
	for k, v := range allOK {
		m[k] = v
	}
	for k, v := range changes {
		m[k] = v
	}
	return m
}

func TestChecksOnLabCaptures(t *testing.T) {
	tests := []struct {
		facts string
		want  map[string]Status
		// text that the named check's "detail; fix: fix" must contain
		says map[string]string
	}{
		{"configured", allOK, map[string]string{
			CheckModules: "ib_core, ib_uverbs, rdma_ucm, rdma_rxe loaded",
			CheckUverbs:  "rxe0 → /dev/infiniband/uverbs0, rxe1 → /dev/infiniband/uverbs1",
			CheckPorts:   "rxe0/1, rxe1/1 ACTIVE",
			CheckGIDs:    "10.9.0.1 → rxe0/1 index 1, 10.9.0.2 → rxe1/1 index 1",
			CheckAddrs:   "10.9.0.2 (veth1, rxe1), 10.9.0.1 (veth0, rxe0)",
			CheckMemlock: "ulimit -l is 8192 KiB",
		}},
		{"ip-local", allOK, map[string]string{
			CheckAddrs: "10.9.0.1 is on veth0, which has rxe0",
			CheckGIDs:  "10.9.0.1 → rxe0/1 index 1",
		}},
		{"ip-routed", allOK, map[string]string{
			CheckAddrs: "10.9.0.77 is reached via veth0 (source 10.9.0.1), which has rxe0",
			CheckGIDs:  "10.9.0.1 → rxe0/1 index 1",
		}},
		{"ip-noroute", with(map[string]Status{CheckAddrs: Fail, CheckGIDs: Warn}), map[string]string{
			CheckAddrs: "192.168.77.1 is not local and cannot be reached (network is unreachable): rdma_resolve_addr ends in RDMA_CM_EVENT_ADDR_ERROR",
		}},
		{"nonroot", with(map[string]Status{CheckFirewall: Warn}), map[string]string{
			CheckFirewall: "unknown: iptables-save: iptables-save v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root); nft: Operation not permitted (you must be root)",
		}},
		{"nonroot-noaccess", with(map[string]Status{CheckUverbs: Fail, CheckRdmaCM: Fail, CheckFirewall: Warn}), map[string]string{
			CheckUverbs: "/dev/infiniband/uverbs1: permission denied; fix: run as root, or give your user read/write access",
			CheckRdmaCM: "/dev/infiniband/rdma_cm: permission denied",
		}},
		{"no-rxe-devices", with(map[string]Status{CheckUverbs: Warn, CheckProvider: Warn, CheckPorts: Fail, CheckGIDs: Warn, CheckAddrs: Warn}), map[string]string{
			CheckPorts: "no RDMA device; fix: rdmactl rxe add veth1",
		}},
		{"dummy-addr", with(map[string]Status{CheckAddrs: Fail}), map[string]string{
			CheckAddrs: "no RDMA device on 10.9.5.1 (rtest0): rdma_bind_addr fails with ENODEV, rdma_resolve_addr with RDMA_CM_EVENT_ADDR_ERROR; fix: rdmactl rxe add rtest0",
		}},
		{"dummy-addr-ip", with(map[string]Status{CheckAddrs: Fail, CheckGIDs: Warn}), map[string]string{
			CheckAddrs: "10.9.5.1 is on rtest0, which has no RDMA device: rdma_bind_addr fails with ENODEV; fix: rdmactl rxe add rtest0",
		}},
		{"iptables-drop", with(map[string]Status{CheckFirewall: Fail}), map[string]string{
			CheckFirewall: "a rule drops RoCE v2 (UDP 4791): iptables-save: -A INPUT -p udp -m udp --dport 4791 -j DROP; " +
				"nft: udp dport 4791 counter packets 0 bytes 0 drop; fix: delete the rule, or accept UDP 4791 before it: " +
				"iptables -I INPUT -p udp --dport 4791 -j ACCEPT",
		}},
		{"memlock-0", with(map[string]Status{CheckMemlock: Warn}), map[string]string{
			CheckMemlock: "ulimit -l is 0 KiB: this process has CAP_IPC_LOCK (root)",
		}},
		{"memlock-0-nocap", with(map[string]Status{CheckMemlock: Fail}), map[string]string{
			CheckMemlock: "ulimit -l is 0 KiB: too small to register memory, ibv_reg_mr fails with ENOMEM",
		}},
		{"no-provider", with(map[string]Status{CheckProvider: Fail}), map[string]string{
			CheckProvider: "libibverbs has no userspace provider for rxe0, rxe1; fix: install the provider libraries",
		}},
		{"port-down", with(map[string]Status{CheckPorts: Fail, CheckGIDs: Warn}), map[string]string{
			CheckPorts: "no ACTIVE port: rxe0/1 DOWN, rxe1/1 DOWN; fix: ip link set veth1 up",
		}},
		{"veth1-no-ipv4", with(map[string]Status{CheckGIDs: Warn}), map[string]string{
			CheckGIDs: "no IPv4 address on rxe1/1 (veth1): rdma_cm cannot use these ports; fix: ip addr add ADDR/PREFIX dev veth1",
		}},
		// Derived from ip-routed: the probe's ARP got no answer, as for
		// 10.9.0.77 in the lab (TestSingleDoctorIPNeighbour).
		{"ip-no-arp", with(map[string]Status{CheckAddrs: Fail}), map[string]string{
			CheckAddrs: "10.9.0.77 is on-link via veth0 but did not answer ARP (neighbour FAILED after 4s): rdma_resolve_addr ends in RDMA_CM_EVENT_ADDR_ERROR (-110); fix: check that the peer is up",
		}},
		// Derived from no-rdma-cm with rdma_ucm unloaded, the state after
		// modprobe -r rdma_ucm in the lab, where rping then worked.
		{"rdma-cm-on-demand", allOK, map[string]string{
			CheckRdmaCM:  "/dev/infiniband/rdma_cm appears when rdma_ucm loads, which the first rdma_cm program does",
			CheckModules: "ib_core, ib_uverbs, rdma_rxe loaded; rdma_ucm loads on first use",
		}},
		{"no-rdma-cm", with(map[string]Status{CheckRdmaCM: Fail}), map[string]string{
			CheckRdmaCM: "/dev/infiniband/rdma_cm is missing: rping and other rdma_cm programs cannot start; fix: modprobe rdma_ucm",
		}},
		// Booted with lab.sh --no-rxe: the module is loadable, no device yet.
		{"norxe", with(map[string]Status{CheckModules: Warn, CheckUverbs: Warn, CheckProvider: Warn, CheckPorts: Fail, CheckGIDs: Warn, CheckAddrs: Warn}), map[string]string{
			CheckModules: "rdma_rxe not loaded (loadable); fix: rdmactl rxe add NETDEV (loads rdma_rxe)",
		}},
		{"norxe-loaded", with(map[string]Status{CheckUverbs: Warn, CheckProvider: Warn, CheckPorts: Fail, CheckGIDs: Warn, CheckAddrs: Warn}), nil},
		// The development machine: a kernel without RDMA at all.
		{"host-no-rdma", with(map[string]Status{CheckModules: Fail, CheckUverbs: Warn, CheckRdmaCM: Warn, CheckProvider: Warn, CheckPorts: Fail, CheckGIDs: Warn, CheckAddrs: Warn}), map[string]string{
			CheckModules: "has no RDMA support: ib_core, ib_uverbs, rdma_ucm, rdma_rxe not loaded and no module index",
			CheckPorts:   "no RDMA device, and no rdma_rxe module to create one; fix: boot a kernel with CONFIG_INFINIBAND",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.facts, func(t *testing.T) {
			f, target := loadFacts(t, tt.facts)
			results := RunChecks(f, target)
			if len(results) != len(allOK) {
				t.Fatalf("%d results, want %d", len(results), len(allOK))
			}
			for _, r := range results {
				if r.Status != tt.want[r.Name] {
					t.Errorf("%s: %s (%s; fix: %s), want %s", r.Name, r.Status, r.Detail, r.Fix, tt.want[r.Name])
				}
				if r.Status == OK && r.Fix != "" {
					t.Errorf("%s is ok but offers a fix: %s", r.Name, r.Fix)
				}
				if r.Status == Fail && r.Fix == "" {
					t.Errorf("%s fails without a fix: %s", r.Name, r.Detail)
				}
				if want, ok := tt.says[r.Name]; ok {
					got := r.Detail
					if r.Fix != "" {
						got += "; fix: " + r.Fix
					}
					if !containsInOrder(got, want) {
						t.Errorf("%s says %q\nwant it to contain %q", r.Name, got, want)
					}
				}
			}
		})
	}
}

// containsInOrder reports whether every "; "-separated piece of want
// occurs in s, in order.
func containsInOrder(s, want string) bool {
	for _, piece := range strings.Split(want, "; ") {
		i := strings.Index(s, piece)
		if i < 0 {
			return false
		}
		s = s[i+len(piece):]
	}
	return true
}

func TestMemlockThreshold(t *testing.T) {
	// libibverbs warns at 32 KiB and below.
	tests := []struct {
		limit     uint64
		unlimited bool
		capLock   bool
		want      Status
	}{
		{0, false, false, Fail},
		{32 * 1024, false, false, Fail},
		{64 * 1024, false, false, OK},
		{0, true, false, OK},
		{0, false, true, Warn},
	}
	for _, tt := range tests {
		f := &Facts{Memlock: tt.limit, MemlockUnlimited: tt.unlimited, CapIPCLock: tt.capLock}
		if got := checkMemlock(f).Status; got != tt.want {
			t.Errorf("memlock %d unlimited=%v cap=%v: %s, want %s", tt.limit, tt.unlimited, tt.capLock, got, tt.want)
		}
	}
}

func TestModulesMissingFromIndex(t *testing.T) {
	// An Ubuntu-like kernel whose rdma_rxe lives in an extra package.
	f := &Facts{KernelRelease: "6.8.0-1", Modules: []Module{
		{Name: "ib_core", Loaded: true}, {Name: "ib_uverbs", Loaded: true}, {Name: "rdma_ucm", Available: true}, {Name: "rdma_rxe"},
	}}
	r := checkModules(f)
	if r.Status != Fail || r.Detail != "rdma_rxe not loaded and not in /lib/modules/6.8.0-1" ||
		!strings.Contains(r.Fix, "linux-modules-extra") {
		t.Errorf("%+v", r)
	}
}

func TestFirewallToolThatTimesOut(t *testing.T) {
	defer func(d time.Duration) { toolTimeout = d }(toolTimeout)
	toolTimeout = 100 * time.Millisecond
	d := runTool("sleep", "5")
	if !d.TimedOut || d.Err != "timed out after 100ms" {
		t.Fatalf("runTool(sleep 5) = %+v, want timed out", d)
	}
	r := checkFirewall(&Facts{Firewall: []FirewallDump{d, {Tool: "nft", Missing: true}}})
	want := "unknown: nft not installed; sleep: timed out after 100ms"
	if r.Status != Warn || r.Detail != want || strings.Contains(r.Fix, "root") {
		t.Errorf("firewall check %+v, want warn %q without a hint about root", r, want)
	}
}

// An error counter rising between the two reads is a warning that names
// the counter and what it usually means; a quiet port is ok, and without
// the counters there is no such check.
func TestCountersRisingNow(t *testing.T) {
	f, target := loadFacts(t, "configured")
	if rs := RunChecks(f, target); len(rs) != len(allOK) {
		t.Fatalf("without counters: %d checks, want %d", len(rs), len(allOK))
	}
	f.Counters = &CounterFacts{WindowSeconds: 1, Rising: []counters.Rise{}}
	rs := RunChecks(f, target)
	last := rs[len(rs)-1]
	if len(rs) != len(allOK)+1 || last.Name != CheckCounters || last.Status != OK || last.Detail != "no error counter rose between two reads 1s apart" {
		t.Errorf("quiet counters: %+v", last)
	}
	f.Counters.Rising = counters.Rises([]counters.Change{
		{Device: "rxe0", Port: 1, Counter: "completer_retry_err", Delta: 3},
		{Device: "rxe0", Port: 1, Counter: "sent_pkts", Delta: 900},
	})
	last = RunChecks(f, target)[len(rs)-1]
	if last.Status != Warn || last.Detail != "error counters rising now (two reads 1s apart): rxe0/1 completer_retry_err +3 (no ACK came in time (ACK timeout): the requester resent; loss on the path)" ||
		!strings.Contains(last.Fix, "rdmactl stat --watch") {
		t.Errorf("rising counters: %+v", last)
	}
}
