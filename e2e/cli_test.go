//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSingleEmulatedIgnoresConfig: RDMACTL_* and the
// config file are rdmactl's own defaults; devinfo and devices emulate
// ibv_devinfo and ibv_devices, which read neither.
func TestSingleEmulatedIgnoresConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("device: rxe1\nib_port: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, ours, env string }{
		{"ibv_devinfo", rdmactl + " devinfo", "RDMACTL_DEVICE=rxe1 RDMACTL_IB_PORT=1"},
		{"ibv_devinfo", rdmactl + " --config " + cfg + " devinfo", ""},
		{"ibv_devices", rdmactl + " devices", "RDMACTL_DEVICE=rxe1"},
	} {
		real := run(t, time.Minute, c.tool)
		ours := sh(t, time.Minute, c.env+" "+c.ours)
		sameResult(t, c.env+" "+c.ours, real, ours)
	}
	// rdmactl's own commands still take the defaults.
	gids := sh(t, time.Minute, "RDMACTL_DEVICE=rxe1 "+rdmactl+" gids")
	if gids.Code != 0 || strings.Contains(gids.Stdout, "rxe0") || !strings.Contains(gids.Stdout, "rxe1") {
		t.Errorf("RDMACTL_DEVICE=rxe1 rdmactl gids: exit %d, want only rxe1:\n%s%s", gids.Code, gids.Stdout, gids.Stderr)
	}
}

// TestSingleCLISlips: usage errors exit 2 with one line;
// bad defaults name their source (variable or file:key) and value.
func TestSingleCLISlips(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badPort := write("bad-port.yaml", "ib_port: 0\n")
	badGID := write("bad-gid.yaml", "gid_index: banana\n")
	unknown := write("unknown.yaml", "devcie: rxe1\n")
	for _, c := range []struct {
		script string
		code   int
		want   []string
	}{
		{rdmactl + " rxe bogus", 2, []string{"bogus"}},
		{rdmactl + " completion nosuchshell", 2, []string{"nosuchshell"}},
		{rdmactl + " rxe add veth0 --timeout -1s", 2, []string{"--timeout", "-1s"}},
		{"RDMACTL_IB_PORT=x " + rdmactl + " gids", 2, []string{"RDMACTL_IB_PORT", `"x"`}},
		{rdmactl + " --config " + badPort + " gids", 2, []string{badPort + ":ib_port", `"0"`}},
		{rdmactl + " --config " + badGID + " demo -d rxe0", 2, []string{badGID + ":gid_index", `"banana"`}},
	} {
		res := sh(t, time.Minute, c.script)
		msg := strings.TrimRight(res.Stderr, "\n")
		ok := res.Code == c.code && !strings.Contains(msg, "\n") && res.Stdout == ""
		for _, w := range c.want {
			ok = ok && strings.Contains(msg, w)
		}
		if !ok {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and one line naming %q", c.script, res.Code, res.Stdout, res.Stderr, c.code, c.want)
		}
	}
	warn := run(t, time.Minute, rdmactl, "--config", unknown, "gids")
	if warn.Code != 0 || !strings.Contains(warn.Stderr, "devcie") || !strings.Contains(warn.Stderr, unknown) {
		t.Errorf("config with an unknown key: exit %d, stderr %q; want a warning naming %s and devcie", warn.Code, warn.Stderr, unknown)
	}
}

// TestSingleSmokeScript: the `make lab` session waits for
// its servers instead of sleeping 1 s, and exits non-zero when a step fails.
func TestSingleSmokeScript(t *testing.T) {
	dir := t.TempDir()
	// A server that takes 2 s to start listening, as on a cold VM.
	slow := filepath.Join(dir, "slow")
	script := "#!/bin/bash\ncase \" $* \" in *' -s '*|*' demo -d '*) sleep 2;; esac\nexec " + rdmactl + " \"$@\"\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(t, 5*time.Minute, "../scripts/smoke.sh", slow)
	if res.Code != 0 || strings.Contains(res.Stdout, "(exit ") {
		t.Errorf("smoke.sh with servers slow to start: exit %d, want 0 and no failed step:\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	// A failing step fails the session.
	broken := filepath.Join(dir, "broken")
	script = "#!/bin/bash\n[ \"$1\" = devices ] && exit 3\nexec " + rdmactl + " \"$@\"\n"
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res = run(t, 5*time.Minute, "../scripts/smoke.sh", broken)
	if res.Code == 0 || !strings.Contains(res.Stdout, "(exit 3)") {
		t.Errorf("smoke.sh with a failing step: exit %d, want non-zero and the step's (exit 3):\n%s", res.Code, res.Stdout)
	}
}

// TestSingleEmulatedBadOptionExit: a bad option exits with the tool's code.
func TestSingleEmulatedBadOptionExit(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"-d"}} {
		real := run(t, time.Minute, "ibv_devinfo", args...)
		ours := run(t, time.Minute, rdmactl, append([]string{"devinfo"}, args...)...)
		if real.Code != ours.Code {
			t.Errorf("devinfo %v: exit %d, ibv_devinfo %d", args, ours.Code, real.Code)
		}
	}
}
