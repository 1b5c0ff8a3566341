package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pingpong"
)

func runPingpongCmd(t *testing.T, args ...string) (*PingpongOptions, string, string, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut)}
	var got *PingpongOptions
	cmd := newCmdPingpong(f, func(o *PingpongOptions) error { got = o; return nil })
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as under the root
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	return got, out.String(), errOut.String(), err
}

func TestPingpongFlagsAsTheTools(t *testing.T) {
	o, _, _, err := runPingpongCmd(t, "srq", "-d", "rxe0", "-g", "0x3", "-q", "010", "-n", "20", "-s", "64", "-e", "-c", "10.9.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if o.Kind != pingpong.SRQ || o.Server != "10.9.0.1" || o.GIDIndex != 3 || o.NumQP != 8 || o.Iters != 20 || o.Size != 64 ||
		!o.Events || !o.Check || o.Port != 18515 || o.RxDepth != 500 || o.MTU != 1024 || o.Timeout != 0 {
		t.Errorf("options %+v", o.Options)
	}
	o, _, _, err = runPingpongCmd(t, "ud", "-g", "auto")
	if err != nil || !o.GIDAuto || o.GIDIndex != -1 || o.Size != 1024 || o.Server != "" {
		t.Errorf("ud -g auto: %v %+v", err, o)
	}
}

func TestPingpongRefusesAsTheTools(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"ud", "-m", "1024"}, "ibv_ud_pingpong: invalid option -- 'm'\n"},
		{[]string{"uc", "-t"}, "ibv_uc_pingpong: invalid option -- 't'\n"},
		{[]string{"rc", "-m", "1000"}, ""},
		{[]string{"rc", "-p", "70000"}, ""},
		{[]string{"rc", "-i", "0"}, ""},
	} {
		_, out, errOut, err := runPingpongCmd(t, c.args...)
		if cli.ExitCode(err) != 1 || !cli.IsSilent(err) || errOut != c.stderr || !strings.HasPrefix(out, "Usage:\n") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, cli.ExitCode(err), out, errOut)
		}
	}
	if _, _, _, err := runPingpongCmd(t, "xrc"); cli.ExitCode(err) != 2 {
		t.Errorf("unknown type: %v", err)
	}
}

func TestStrtol(t *testing.T) {
	for s, want := range map[string]int64{"18515": 18515, "0x10": 16, "010": 8, "-1": -1, "12abc": 12, "abc": 0, " 7": 7, "0": 0} {
		if got := strtol(s); got != want {
			t.Errorf("strtol(%q) = %d, want %d", s, got, want)
		}
	}
}
