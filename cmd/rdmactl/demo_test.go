package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// noRDMA is the factory's RDMA for tests that only parse flags.
func noRDMA() rdma.Stack { return nil }

// runDemoCmd parses args as `rdmactl demo` would and returns the options
// the command would run with.
func runDemoCmd(t *testing.T, args ...string) (*DemoOptions, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no config file of the machine
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), RDMA: noRDMA}
	var got *DemoOptions
	cmd := asRoot(f, newCmdDemo(f, func(o *DemoOptions) error { got = o; return nil }))
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	return got, err
}

func TestDemoFlagsLikeTheOriginal(t *testing.T) {
	o, err := runDemoCmd(t, "10.9.0.1", "-d", "rxe0", "-i", "1", "-g", "1", "-p", "20000")
	if err != nil {
		t.Fatal(err)
	}
	if o.Server != "10.9.0.1" || o.Device != "rxe0" || o.IBPort != 1 || !o.GRH || o.GIDIndex != 1 || o.GIDAuto || o.TCPPort != 20000 {
		t.Errorf("options %+v", o.Options)
	}
	o, err = runDemoCmd(t, "--ib-dev=rxe1", "--gid-idx=auto", "--ib-port", "2")
	if err != nil {
		t.Fatal(err)
	}
	if o.Server != "" || o.Device != "rxe1" || o.IBPort != 2 || o.GRH || !o.GIDAuto || o.TCPPort != 19875 || o.Timeout != 2*time.Minute {
		t.Errorf("options %+v", o.Options)
	}
}

func TestDemoDefaultsNoGID(t *testing.T) {
	o, err := runDemoCmd(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.GRH || o.GIDAuto || o.Device != "" || o.IBPort != 1 || o.TCPPort != 19875 {
		t.Errorf("defaults %+v", o.Options)
	}
}

func TestDemoBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-g", "x"}, `invalid --gid-idx "x"`},
		{[]string{"-g", "256"}, `invalid --gid-idx "256"`},
		{[]string{"-g", "-1"}, `invalid --gid-idx "-1"`},
		{[]string{"-p", "0"}, "invalid --port 0"},
		{[]string{"-i", "0"}, "invalid --ib-port 0"},
		{[]string{"--timeout", "0s"}, "invalid --timeout"},
		{[]string{"a", "b"}, "at most one SERVER"},
	} {
		_, err := runDemoCmd(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c.args, err, c.want)
			continue
		}
		if code := cli.ExitCode(err); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d", c.args, code, cli.ExitUsage)
		}
	}
}

// TestDemoConfigLayers: RDMACTL_* variables and the config file fill what
// the flags leave out; flags win.
func TestDemoConfigLayers(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "rdmactl", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("device: rxe7\ngid_index: auto\ntcp_port: 20123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), ConfigPath: cfg, RDMA: noRDMA}
	var got *DemoOptions
	cmd := asRoot(f, newCmdDemo(f, func(o *DemoOptions) error { got = o; return nil }))
	t.Setenv("RDMACTL_TCP_PORT", "20124")
	cmd.SetArgs([]string{"-d", "rxe0"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Device != "rxe0" || got.DeviceSource != "-d" || !got.GIDAuto || got.TCPPort != 20124 {
		t.Errorf("layered options %+v", got.Options)
	}
	cmd = asRoot(f, newCmdDemo(f, func(o *DemoOptions) error { got = o; return nil }))
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || got.Device != "rxe7" || got.DeviceSource != cfg+":device" {
		t.Errorf("device from the config file: %+v, %v", got.Options, err)
	}
}

// TestDemoTestOnlyKnobs: the hidden flags the lab's e2e tests use to make
// rdmactl stand in for other peers reach the options, and stay out of help.
func TestDemoTestOnlyKnobs(t *testing.T) {
	o, err := runDemoCmd(t, "-g", "1", "--send-message", "SEDN operation   ", "--advertise-rkey", "0xdeadbe00")
	if err != nil {
		t.Fatal(err)
	}
	if o.Message != "SEDN operation   " || o.AdvertiseRKey == nil || *o.AdvertiseRKey != 0xdeadbe00 {
		t.Errorf("options %+v", o.Options)
	}
	if o, _ := runDemoCmd(t, "-g", "1"); o.Message != "" || o.AdvertiseRKey != nil {
		t.Errorf("knobs set without their flags: %+v", o.Options)
	}
	cmd := newCmdDemo(&cli.Factory{IO: cli.Test(nil, nil, nil), RDMA: noRDMA}, nil)
	if help := cmd.UsageString(); strings.Contains(help, "send-message") || strings.Contains(help, "advertise-rkey") {
		t.Errorf("test-only flags in help:\n%s", help)
	}
}
