package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
)

func runPerfCmd(t *testing.T, args ...string) (*PerfOptions, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut)}
	var got *PerfOptions
	cmd := newCmdPerf(f, func(o *PerfOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	return got, cmd.Execute()
}

func TestPerfFlagsLikePerftest(t *testing.T) {
	o, err := runPerfCmd(t, "ib_write_bw", "-d", "rxe0", "-i", "1", "-x", "1", "-s", "4096", "-n", "10",
		"-p", "20000", "-q", "1", "-t", "64", "-m", "1024", "-F", "--report_gbits", "10.9.0.1")
	if err != nil {
		t.Fatal(err)
	}
	want := perf.Options{Test: perf.WriteBW, Server: "10.9.0.1", Device: "rxe0", IBPort: 1, GIDIndex: 1, Size: 4096,
		Iters: 10, TCPPort: 20000, QPs: 1, TxDepth: 64, MTU: 1024, Gbits: true, Timeout: 2 * time.Minute}
	if o.Options != want {
		t.Errorf("options\n got %+v\nwant %+v", o.Options, want)
	}
	o, err = runPerfCmd(t, "send_lat", "-x", "auto", "-a", "--busy-poll")
	if err != nil {
		t.Fatal(err)
	}
	if o.Test != perf.SendLat || !o.GIDAuto || o.GIDIndex != -1 || !o.All || !o.BusyPoll || o.TCPPort != 18515 || o.Server != "" {
		t.Errorf("options %+v", o.Options)
	}
}

func TestPerfRDMACMFlag(t *testing.T) {
	o, err := runPerfCmd(t, "write_bw", "-R", "10.9.0.1")
	if err != nil || !o.RDMACM {
		t.Fatalf("write_bw -R: %v, options %+v", err, o)
	}
}

func TestPerfUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"bogus_bw"},
		{"write_bw", "-x", "abc"},
		{"send_lat", "-D", "-1"},
		{"write_bw", "-p", "0"},
		{"write_bw", "a", "b"},
	} {
		if _, err := runPerfCmd(t, args...); cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%q: exit %d (%v), want 2", args, cli.ExitCode(err), err)
		}
	}
}
