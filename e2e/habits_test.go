//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSingleGidsDeviceOperand: `gids rxe0` takes the device as show_gids
// does; stdout is show_gids' to its last line, n_gids_found=N counting
// rxe0's populated GIDs in sysfs, and the GIDs to use are on stderr.
func TestSingleGidsDeviceOperand(t *testing.T) {
	res := run(t, time.Minute, rdmactl, "gids", "rxe0")
	if res.Code != 0 {
		t.Fatalf("gids rxe0: exit %d: %s", res.Code, res.Stderr)
	}
	n := 0
	for _, g := range readSysfsGIDs(t) {
		if g.dev == "rxe0" {
			n++
		}
	}
	lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if last := lines[len(lines)-1]; last != fmt.Sprintf("n_gids_found=%d", n) {
		t.Errorf("last line %q, want n_gids_found=%d (sysfs):\n%s", last, n, res.Stdout)
	}
	for _, l := range lines[2 : len(lines)-1] {
		if !strings.HasPrefix(l, "rxe0\t") {
			t.Errorf("row %q is not rxe0's", l)
		}
	}
	if strings.Contains(res.Stdout, "recommended") || !strings.Contains(res.Stderr, "recommended: rxe0 port 1 index ") {
		t.Errorf("the GIDs to use belong on stderr:\n--- stdout\n%s--- stderr\n%s", res.Stdout, res.Stderr)
	}
	if d := run(t, time.Minute, rdmactl, "gids", "-d", "rxe0"); d.Stdout != res.Stdout {
		t.Errorf("gids -d rxe0 and gids rxe0 differ:\n%s", diff(d.Stdout, res.Stdout))
	}
}

// TestSinglePingWithoutAddress: a client without -a, or with an empty -a,
// fails as rping does in this boot (exit code and output), and the hint
// says -a is missing or empty instead of blaming the provider library.
func TestSinglePingWithoutAddress(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"-c", "-C", "1"}, "-a is missing"},
		{[]string{"-c", "-a", "", "-C", "1"}, "-a is empty"},
	} {
		real := run(t, time.Minute, "rping", c.args...)
		ours := run(t, time.Minute, rdmactl, append([]string{"ping"}, c.args...)...)
		// rping's CM thread exits the process on the address error while
		// its main thread reports the resolution state: that second line
		// comes now and then. rdmactl prints the full form.
		if rest, _ := splitHint(ours.Stderr); rest == real.Stderr+"waiting for addr/route resolution state 11\n" {
			real.Stderr = rest
		}
		hint := sameButHint(t, fmt.Sprintf("ping %q", c.args), real, ours)
		if !strings.HasPrefix(hint, c.hint) || strings.Contains(hint, "libibverbs") {
			t.Errorf("ping %q: hint %q, want %q", c.args, hint, c.hint)
		}
	}
}

// TestSingleDemoRefusedHint: a demo client that finds nothing listening
// gets ping's hint for the same situation.
func TestSingleDemoRefusedHint(t *testing.T) {
	port := freshPort()
	res := run(t, time.Minute, rdmactl, "demo", "10.9.0.1", "-d", "rxe0", "-g", "auto", "-p", fmt.Sprint(port))
	want := fmt.Sprintf("hint: nothing listens on 10.9.0.1 port %d (start `rdmactl demo` there, or check -p)\n", port)
	if res.Code != 1 || !strings.HasSuffix(res.Stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end with %q", res.Code, res.Stderr, want)
	}
}

// TestSingleDemoNotADemoClient: an HTTP request to the demo's port is
// named as what it is, not as a GID mismatch at RTR.
func TestSingleDemoNotADemoClient(t *testing.T) {
	port := freshPort()
	srv := start(t, time.Minute, rdmactl, "demo", "-d", "rxe0", "-g", "auto", "-p", fmt.Sprint(port), "--timeout", "20s")
	waitTCPListen(t, port)
	c, err := net.Dial("tcp", fmt.Sprintf("10.9.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: 10.9.0.1\r\nUser-Agent: probe\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	res := srv.wait(t)
	if res.Code != 1 || !strings.Contains(res.Stderr, "hint: the peer's 34 bytes are no RC demo connection record") || strings.Contains(res.Stderr, "GIDs differ") {
		t.Errorf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
}

// TestSingleSmokeLoopbackPeerHint: smoke to 127.0.0.1 must not advise
// `rxe add lo`, which rxe add refuses.
func TestSingleSmokeLoopbackPeerHint(t *testing.T) {
	if r := run(t, time.Minute, rdmactl, "rxe", "add", "lo"); r.Code == 0 {
		t.Fatalf("rxe add lo succeeded: %+v", r)
	}
	// The route check reads every GID table before it gives up on an
	// address no GID carries: seconds under emulation, more on a busy host.
	res := run(t, 2*time.Minute, rdmactl, "smoke", "127.0.0.1", "--timeout", "40s")
	if res.Code != 1 || strings.Contains(res.Stdout, "rxe add lo") || !strings.Contains(res.Stdout, "127.0.0.1: hint: lo is a loopback netdev") {
		t.Errorf("exit %d, stdout:\n%s", res.Code, res.Stdout)
	}
}

// TestSingleWrongDeviceNamesItsSource: gids, demo and perf say a wrong
// device the same way, naming where the name came from.
func TestSingleWrongDeviceNamesItsSource(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("device: rxe9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	devices := "the devices are rxe0, rxe1"
	for _, c := range []struct {
		script, source string
	}{
		{rdmactl + " gids -d rxe9", "-d"},
		{rdmactl + " gids rxe9", "the DEV operand"},
		{"RDMACTL_DEVICE=rxe9 " + rdmactl + " gids", "RDMACTL_DEVICE"},
		{rdmactl + " --config " + cfg + " gids", cfg + ":device"},
		{"RDMACTL_DEVICE=rxe9 " + rdmactl + " demo 10.9.0.1 -g auto", "RDMACTL_DEVICE"},
		{rdmactl + " --config " + cfg + " demo -g auto", cfg + ":device"},
		{rdmactl + " perf write_bw -d rxe9 10.9.0.1", "-d"},
		{rdmactl + " devinfo -j -d rxe9", "-d"},
	} {
		res := sh(t, time.Minute, c.script)
		want := fmt.Sprintf("rdmactl: no RDMA device \"rxe9\" (from %s): %s\n", c.source, devices)
		if res.Code != 2 || !strings.HasPrefix(res.Stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.script, res.Code, res.Stderr, want)
		}
	}
}

// TestSingleJSONWhateverTheFlagOrder: --json after a bad flag or value
// still gives one JSON document, and a command group given --json alone
// is an error, not help with exit 0.
func TestSingleJSONWhateverTheFlagOrder(t *testing.T) {
	for _, c := range []struct {
		args string
		code int
	}{
		{"gids --bogus --json", 2},
		{"demo -p abc --json", 2},
		{"smoke --timeout xyz --json", 2},
		{"serve --timeout xyz --json", 2},
		{"perf write_bw -s 99999999999999999999 --json", 1}, // perftest refuses options with 1
		{"devinfo --bogus --json", 2},
		{"ping -c --bogus --json", 22},
		{"--json", 2},
		{"rxe --json", 2},
	} {
		res := run(t, time.Minute, rdmactl, strings.Fields(c.args)...)
		if res.Code != c.code || !strings.HasPrefix(res.Stdout, `{"schema_version":2,"ok":false,"error":{`) ||
			strings.Count(res.Stdout, "\n") != 1 || !strings.Contains(res.Stdout, fmt.Sprintf(`"code":%d}`, c.code)) {
			t.Errorf("rdmactl %s: exit %d, stdout %q; want %d and one error document", c.args, res.Code, res.Stdout, c.code)
		}
	}
}

// TestSingleVersionAgrees: -v and version print the same.
func TestSingleVersionAgrees(t *testing.T) {
	v, long := run(t, time.Minute, rdmactl, "-v"), run(t, time.Minute, rdmactl, "version")
	if v.Code != 0 || v.Stdout != long.Stdout || !strings.Contains(v.Stdout, "libibverbs: ") {
		t.Errorf("-v %q, version %q", v.Stdout, long.Stdout)
	}
}

// TestSingleSmokeInterrupted: SIGINT while the demo check waits on a peer
// that never answers ends the check as interrupted after the time it ran,
// not "timed out after" its bound, and the run ends soon after.
func TestSingleSmokeInterrupted(t *testing.T) {
	cmPort, tcpPort := freshPort(), freshPort()
	srv := startServe(t, cmPort, tcpPort, "-a", "10.9.0.1")
	defer srv.stop()
	// A TCP port that accepts and never answers: the demo check waits there.
	silent, accepted := silentListener(t)
	smoke := start(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--port", fmt.Sprint(cmPort),
		"--tcp-port", fmt.Sprint(silent), "--timeout", "60s")
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(90 * time.Second):
		t.Fatal("the demo check never connected")
	}
	if err := smoke.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	interrupted := time.Now()
	res := smoke.wait(t)
	if took := time.Since(interrupted); took > 15*time.Second {
		t.Errorf("smoke took %v to end after SIGINT", took)
	}
	if res.Code != 1 || !strings.Contains(res.Stdout, "10.9.0.1: demo: interrupted after ") || strings.Contains(res.Stdout, "timed out") {
		t.Errorf("exit %d, stdout:\n%s", res.Code, res.Stdout)
	}
}
