package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/devinfo"
	"github.com/rdmactl/rdmactl/pkg/devinfo/devinfotest"
	"github.com/rdmactl/rdmactl/pkg/gids"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

const devinfoTestdata = "../../pkg/devinfo/testdata"

// isolateConfig keeps the user's config file and RDMACTL_* out of a test.
func isolateConfig(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "RDMACTL_") {
			t.Setenv(k, "")
		}
	}
}

// asRoot gives a command run on its own the root's preparation (config
// loaded, its keys bound), as when it runs under rdmactl.
func asRoot(f *cli.Factory, cmd *cobra.Command) *cobra.Command {
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return f.Prepare(c) }
	return cmd
}

func newTestFactory() (*cli.Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cli.Factory{IO: cli.Test(nil, &out, &errOut), RDMA: func() rdma.Stack { return nil }}, &out, &errOut
}

func runDevinfoCmd(t *testing.T, f *cli.Factory, args ...string) (*devinfo.Options, error) {
	t.Helper()
	var got *devinfo.Options
	cmd := newCmdDevinfo(f, func(o *devinfo.Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

// Every argument list that ibv_devinfo was captured with parses into
// options under which rdmactl prints what the tool printed.
func TestDevinfoArgsLikeIBVDevinfo(t *testing.T) {
	isolateConfig(t)
	lab, err := devinfotest.Load(filepath.Join(devinfoTestdata, "lab-rxe.json"))
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(devinfoTestdata, "ibv_devinfo", "*"))
	if len(dirs) == 0 {
		t.Fatal("no captured cases")
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			read := func(file string) string {
				b, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			args := strings.Split(strings.TrimSuffix(read("args"), "\n"), "\n")
			if args[0] == "" {
				args = nil
			}
			src := &devinfotest.Source{Report: lab}
			if strings.HasPrefix(name, "none-") {
				src = &devinfotest.Source{Report: &devinfo.Report{}}
			}
			f, _, _ := newTestFactory()
			opts, err := runDevinfoCmd(t, f, args...)
			if err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			var out, errOut bytes.Buffer
			opts.Source, opts.IO = src, cli.Test(nil, &out, &errOut)
			err = devinfo.Run(context.Background(), opts)
			status, _ := strconv.Atoi(strings.TrimSpace(read("status")))
			if out.String() != read("stdout") || errOut.String() != read("stderr") || cli.ExitCode(err) != status {
				t.Errorf("%q parsed as %+v: stdout/stderr/exit differ from ibv_devinfo's\nstdout:\n%s\nstderr: %q exit %d",
					args, *opts, out.String(), errOut.String(), cli.ExitCode(err))
			}
		})
	}
}

func TestDevinfoLongFlagsAndJSON(t *testing.T) {
	isolateConfig(t)
	f, _, _ := newTestFactory()
	f.JSON = true
	got, err := runDevinfoCmd(t, f, "--ib-dev=rxe1", "--ib-port", "1", "--list", "--verbose")
	if err != nil {
		t.Fatal(err)
	}
	want := devinfo.Options{Device: "rxe1", Named: true, Port: "1", List: true, Verbose: true, JSON: true, IO: f.IO}
	if *got != want {
		t.Errorf("got %+v, want %+v", *got, want)
	}
}

// The device and port come from a flag, else RDMACTL_DEVICE/IB_PORT, else
// the config file.
// ibv_devinfo reads no config and no environment; neither does devinfo.
func TestDevinfoIgnoresConfigAndEnvironment(t *testing.T) {
	isolateConfig(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("device: rxe0\nib_port: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RDMACTL_DEVICE", "rxe1")
	t.Setenv("RDMACTL_IB_PORT", "x")
	f, _, _ := newTestFactory()
	f.ConfigPath = cfg
	got, err := runDevinfoCmd(t, f)
	if err != nil || got.Device != "" || got.Port != "" {
		t.Fatalf("config and environment reached devinfo: %+v %v", got, err)
	}
	f, _, _ = newTestFactory()
	f.ConfigPath = cfg
	if got, err = runDevinfoCmd(t, f, "-d", "mlx5_0", "-i", "2"); err != nil || got.Device != "mlx5_0" || got.Port != "2" {
		t.Fatalf("flags: %+v %v", got, err)
	}
}

func TestDevinfoDevicesTakeNoArguments(t *testing.T) {
	isolateConfig(t)
	f, _, _ := newTestFactory()
	ran := false
	for _, cmd := range []*cobra.Command{
		newCmdDevinfo(f, func(*devinfo.Options) error { ran = true; return nil }),
		newCmdDevices(f, func(*devinfo.DevicesOptions) error { ran = true; return nil }),
	} {
		cmd.SetArgs([]string{"rxe0"})
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("extra argument: %v (exit %d)", err, cli.ExitCode(err))
		}
	}
	if ran {
		t.Error("a command ran despite the bad arguments")
	}
}

func TestDevicesJSONFlag(t *testing.T) {
	f, _, _ := newTestFactory()
	f.JSON = true
	var got *devinfo.DevicesOptions
	cmd := newCmdDevices(f, func(o *devinfo.DevicesOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || !got.JSON {
		t.Errorf("%+v %v", got, err)
	}
}

func runGidsCmd(t *testing.T, f *cli.Factory, args ...string) (*gids.Options, error) {
	t.Helper()
	var got *gids.Options
	cmd := asRoot(f, newCmdGids(f, func(o *gids.Options) error { got = o; return nil }))
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

func TestGidsFlags(t *testing.T) {
	isolateConfig(t)
	f, _, _ := newTestFactory()
	f.JSON = true
	want := gids.Options{Device: "rxe0", DeviceSource: "-d", Port: "1", IP: "10.9.0.1", JSON: true, IO: f.IO}
	for _, args := range [][]string{
		{"-d", "rxe0", "-p", "1", "--ip", "10.9.0.1"},
		{"--ib-dev=rxe0", "--ib-port=1", "--ip=10.9.0.1"},
	} {
		got, err := runGidsCmd(t, f, args...)
		if err != nil || *got != want {
			t.Errorf("%q: got %+v (%v), want %+v", args, got, err, want)
		}
	}

	t.Setenv("RDMACTL_DEVICE", "rxe1")
	t.Setenv("RDMACTL_IB_PORT", "1")
	f, _, _ = newTestFactory()
	if got, err := runGidsCmd(t, f); err != nil || got.Device != "rxe1" || got.DeviceSource != "RDMACTL_DEVICE" || got.Port != "1" || got.IP != "" {
		t.Errorf("from the environment: %+v %v", got, err)
	}
}

// show_gids takes the device as its operand: so does gids, the operand
// winning over the environment, and -d naming another is an error.
func TestGidsDeviceOperand(t *testing.T) {
	isolateConfig(t)
	t.Setenv("RDMACTL_DEVICE", "rxe1")
	f, _, _ := newTestFactory()
	got, err := runGidsCmd(t, f, "rxe0")
	if err != nil || got.Device != "rxe0" || got.DeviceSource != "the DEV operand" {
		t.Errorf("gids rxe0: %+v %v", got, err)
	}
	if got, err := runGidsCmd(t, f, "rxe0", "-d", "rxe0"); err != nil || got.Device != "rxe0" {
		t.Errorf("gids rxe0 -d rxe0: %+v %v", got, err)
	}
	for _, args := range [][]string{{"rxe0", "-d", "rxe1"}, {"rxe0", "rxe1"}} {
		if got, err := runGidsCmd(t, f, args...); got != nil || cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("gids %q: %+v %v, want a usage error", args, got, err)
		}
	}
}

// ibv_devinfo exits 255 on an unknown option; so does its emulation.
func TestDevinfoBadOptionExitsLikeIbvDevinfo(t *testing.T) {
	isolateConfig(t)
	f, out, errOut := newTestFactory()
	root := newCmdRoot(f)
	root.SetArgs([]string{"devinfo", "--bogus"})
	err := root.Execute()
	if cli.ExitCode(err) != 255 || !cli.IsSilent(err) || !strings.Contains(errOut.String(), "--bogus") || !strings.Contains(out.String(), "Usage:") {
		t.Errorf("devinfo --bogus: %v (exit %d), stderr %q, stdout %q", err, cli.ExitCode(err), errOut, out)
	}
}
