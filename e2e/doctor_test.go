//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkLine returns doctor's line for the named check.
func checkLine(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == name {
			return l
		}
	}
	return ""
}

// TestNoRxeDoctorRdmaCMOnDemand: with rdma_ucm unloaded
// /dev/infiniband/rdma_cm is absent, yet rping works (the module loads on
// first use): doctor must not fail that host.
func TestNoRxeDoctorRdmaCMOnDemand(t *testing.T) {
	t.Cleanup(func() {
		sh(t, time.Minute, "rdma link delete rxe0; rdma link delete rxe1; modprobe -r rdma_rxe; modprobe rdma_ucm")
	})
	if r := sh(t, time.Minute, "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev veth0 && rdma link add rxe1 type rxe netdev veth1"); r.Code != 0 {
		t.Fatalf("setting up rxe0/rxe1: %s", r.Stderr)
	}
	time.Sleep(2 * time.Second) // the GIDs are filled a moment after the port comes up
	if r := sh(t, time.Minute, "modprobe -r rdma_ucm"); r.Code != 0 {
		t.Fatalf("modprobe -r rdma_ucm: %s", r.Stderr)
	}
	if _, err := os.Stat("/dev/infiniband/rdma_cm"); err == nil {
		t.Fatal("/dev/infiniband/rdma_cm still exists after unloading rdma_ucm")
	}
	res := run(t, 2*time.Minute, rdmactl, "doctor")
	if line := checkLine(res.Stdout, "rdma-cm"); res.Code != 0 || strings.HasPrefix(line, "fail") {
		t.Errorf("doctor with rdma_ucm loadable but not loaded: exit %d, rdma-cm %q; want exit 0:\n%s%s", res.Code, line, res.Stdout, res.Stderr)
	}
	// The host does work: rping loads rdma_ucm on first use.
	srv := start(t, time.Minute, "rping", "-s", "-a", "10.9.0.1", "-C", "1")
	waitListening(t, 7174)
	cl := run(t, time.Minute, "rping", "-c", "-a", "10.9.0.1", "-C", "1")
	srv.wait(t)
	if cl.Code != 0 {
		t.Errorf("rping after doctor: exit %d %s", cl.Code, cl.Stderr)
	}
}

// TestSingleDoctorIPNeighbour: an on-link address that
// never answers ARP is a failed check naming what was seen, not "all ok".
func TestSingleDoctorIPNeighbour(t *testing.T) {
	res := run(t, 2*time.Minute, rdmactl, "doctor", "--ip", "10.9.0.77")
	if res.Code != 1 || !strings.Contains(res.Stdout, "10.9.0.77") || !strings.Contains(res.Stdout, "ARP") {
		t.Errorf("doctor --ip 10.9.0.77 (nobody there): exit %d, want 1 and a failed check saying ARP got no answer:\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	local := run(t, 2*time.Minute, rdmactl, "doctor", "--ip", "10.9.0.2")
	if local.Code != 0 {
		t.Errorf("doctor --ip 10.9.0.2 (local, rxe1): exit %d, want 0:\n%s%s", local.Code, local.Stdout, local.Stderr)
	}
}

// TestSingleDoctorSlowFirewallTool: a slow iptables-save
// (the cold VM took more than 5 s) is waited for; one that does not finish
// is reported as timed out, never as "run as root".
func TestSingleDoctorSlowFirewallTool(t *testing.T) {
	dir := t.TempDir()
	fake := "#!/bin/sh\nsleep 7\nexec /usr/sbin/iptables-save \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "iptables-save"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	res := sh(t, 2*time.Minute, "PATH="+dir+":$PATH exec "+rdmactl+" doctor")
	line := checkLine(res.Stdout, "firewall")
	if !strings.HasPrefix(line, "ok") || !strings.Contains(line, "iptables-save") {
		t.Errorf("doctor with a 7 s iptables-save: firewall %q, want ok after reading it:\n%s", line, res.Stdout)
	}
	if strings.Contains(res.Stdout, "run as root") {
		t.Errorf("doctor (as root) says run as root:\n%s", res.Stdout)
	}
}
