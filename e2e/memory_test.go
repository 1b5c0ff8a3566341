//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/ping"
)

// pingServerPeakKiB bounds a ping -s -P server's peak RSS over 100
// clients: the 10 MiB target (rping's is about 2), which make bench
// measures in a fresh boot, plus 384 KiB for what the page cache of a VM
// that ran the other tests adds: the kernel maps the shared libraries'
// cached pages 64 KB around each one touched, and those grow as tests
// run. A regression such as net/http and crypto linked in for nothing
// fails it.
const pingServerPeakKiB = 10<<10 + 384

// TestSinglePingPersistentServerMemory: a -P server's peak RSS stays within
// pingServerPeakKiB over 100 clients, and its RSS flat over flatRSSClients
// (checkFlatRSS). The binary runs from the guest's tmpfs, as make bench
// runs it: there all its pages are cached and fault-around maps them, the
// most the binary's pages can cost (run from the 9p share it stays about
// 3 MiB lower).
func TestSinglePingPersistentServerMemory(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rdmactl")
	copyFile(t, rdmactl, bin, 0o755)
	port := freshPort()
	srv := start(t, 15*time.Minute, bin, "ping", "-s", "-P", "-a", "10.9.0.1", "-p", fmt.Sprint(port))
	waitListening(t, port)
	pid := srv.cmd.Process.Pid

	var peak1, peak int
	samples := make([]int, 0, flatRSSClients)
	for i := 1; i <= flatRSSClients; i++ {
		if err := pingInProcess(port, 10); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		switch i {
		case 1:
			peak1 = procStatusKiB(t, pid, "VmHWM")
		case 100:
			peak = procStatusKiB(t, pid, "VmHWM")
			t.Logf("ping -s -P: peak RSS %d KiB after 1 client, %d after 100; RSS %d KiB after 100 (anonymous %d, libraries %d, the binary %d)",
				peak1, peak, rss(t, pid), procStatusKiB(t, pid, "RssAnon"), procStatusKiB(t, pid, "RssFile"), procStatusKiB(t, pid, "RssShmem"))
		}
		samples = append(samples, rss(t, pid))
	}
	if peak > pingServerPeakKiB {
		t.Errorf("peak RSS %d KiB after 100 clients, more than %d", peak, pingServerPeakKiB)
	}
	checkFlatRSS(t, samples)
}

// flatRSSClients is how many clients checkFlatRSS needs a sample after.
const flatRSSClients = 300

// checkFlatRSS fails t when a server's RSS, sampled after each of
// flatRSSClients clients, grew by more than 512 KiB both from clients
// 51-100 to 151-200 and from those to 251-300. A leak grows with every
// client, so it shows in both steps: 512 KiB a hundred clients is about 5
// KiB a client, less than a leaked connection's buffers and QP. The RSS of
// a server that leaks nothing also rises, once in a few hundred clients,
// by up to a megabyte (the runtime adds a thread or raises its heap goal)
// and then stays there: one such rise shows in one step, not in both. The
// windows' medians are compared, not single samples: one sample swings by
// a few hundred KiB either way as the GC frees heap and returns it to the
// kernel.
func checkFlatRSS(t *testing.T, samples []int) {
	t.Helper()
	if len(samples) != flatRSSClients {
		t.Fatalf("checkFlatRSS: %d samples, want one after each of %d clients", len(samples), flatRSSClients)
	}
	first, middle, last := medianKiB(samples[50:100]), medianKiB(samples[150:200]), medianKiB(samples[250:300])
	t.Logf("median RSS %d KiB over clients 51-100, %d over 151-200, %d over 251-300", first, middle, last)
	if middle > first+512 && last > middle+512 {
		t.Errorf("RSS grew with the clients: %d KiB (median, clients 51-100), %d (151-200), %d (251-300)", first, middle, last)
	}
}

func medianKiB(kib []int) int {
	sorted := slices.Sorted(slices.Values(kib))
	return sorted[len(sorted)/2]
}

// pingInProcess is one rping-protocol client of 10.9.0.1:port in this
// process: a new connection (QP, cm_id, buffers on the server) without the
// second or so that starting a process with libibverbs costs under
// emulation.
func pingInProcess(port, count int) error {
	var out, errOut bytes.Buffer
	o := &ping.Options{CM: cgoverbs.Stack{}, Mode: ping.ModeClient, Addr: "10.9.0.1", Port: port, Count: count, Size: ping.DefaultSize,
		Validate: true, Timeout: 30 * time.Second, IO: cli.Test(nil, &out, &errOut)}
	if err := ping.Run(context.Background(), o); err != nil {
		return fmt.Errorf("%v: %s%s", err, out.String(), errOut.String())
	}
	return nil
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, mode)
	}
	if err != nil {
		t.Fatal(err)
	}
}
