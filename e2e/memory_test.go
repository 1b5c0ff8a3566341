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
// pingServerPeakKiB over 100 clients, and its RSS flat after warm-up
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

	var peak1 int
	samples := make([]int, 0, 100)
	for i := 1; i <= 100; i++ {
		if err := pingInProcess(port, 10); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		if i == 1 {
			peak1 = procStatusKiB(t, pid, "VmHWM")
		}
		samples = append(samples, rss(t, pid))
	}
	peak := procStatusKiB(t, pid, "VmHWM")
	t.Logf("ping -s -P: peak RSS %d KiB after 1 client, %d after 100; RSS %d KiB after 100 (anonymous %d, libraries %d, the binary %d)",
		peak1, peak, samples[99], procStatusKiB(t, pid, "RssAnon"), procStatusKiB(t, pid, "RssFile"), procStatusKiB(t, pid, "RssShmem"))
	if peak > pingServerPeakKiB {
		t.Errorf("peak RSS %d KiB after 100 clients, more than %d", peak, pingServerPeakKiB)
	}
	checkFlatRSS(t, samples)
}

// checkFlatRSS fails t when a server's RSS, sampled after each of 100
// clients, grew by more than 512 KiB from clients 31-50 to clients 81-100:
// about 10 KiB a client, less than a leaked connection's buffers and QP.
// It compares the medians of the two windows, not single samples: one
// sample swings by a few hundred KiB either way as the GC frees heap and
// returns it to the kernel.
func checkFlatRSS(t *testing.T, samples []int) {
	t.Helper()
	if len(samples) != 100 {
		t.Fatalf("checkFlatRSS: %d samples, want one after each of 100 clients", len(samples))
	}
	warm, end := medianKiB(samples[30:50]), medianKiB(samples[80:100])
	t.Logf("median RSS %d KiB over clients 31-50, %d over clients 81-100", warm, end)
	if end > warm+512 {
		t.Errorf("RSS grew from %d KiB (median, clients 31-50) to %d KiB (median, clients 81-100)", warm, end)
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
