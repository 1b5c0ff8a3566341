package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// perfTestStack is the factory's stack in these tests, which only parse.
var perfTestStack = rdmatest.NewFabric()

func runPerfCmd(t *testing.T, args ...string) (*PerfOptions, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), RDMA: func() rdma.Stack { return perfTestStack }}
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
	if o.IO == nil || o.Verbs != perfTestStack {
		t.Errorf("IO %v and verbs %v not copied from the factory", o.IO, o.Verbs)
	}
	want.IO, want.Verbs = o.IO, o.Verbs
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
		{"write_bw", "-p", "0"},
		{"write_bw", "a", "b"},
	} {
		if _, err := runPerfCmd(t, args...); cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%q: exit %d (%v), want 2", args, cli.ExitCode(err), err)
		}
	}
}

// TestPerfRefusesLikePerftest: values perftest's parser refuses exit 1
// with its own line, before anything is allocated (-n 1000000000 ran
// out of memory after the exchange; -D 9223372037 overflowed into an
// iteration run; -s 0 ran 65536-byte messages).
func TestPerfRefusesLikePerftest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"write_bw", "-n", "100000001"}, "-n 100000001: Iteration num should be between 5 and 100000000"},
		{[]string{"write_bw", "-n", "1000000000"}, "-n 1000000000: Iteration num should be between 5 and 100000000"},
		{[]string{"write_bw", "-n", "4"}, "-n 4: Iteration num should be between 5 and 100000000"},
		{[]string{"write_bw", "-s", "0"}, "-s 0: Message Size should be between 1 and 2147483647"},
		{[]string{"send_bw", "-t", "0"}, "-t 0: Tx depth should be between 1 and 15000"},
		{[]string{"write_bw", "-s", "-1"}, "-s -1: Message Size should be between 1 and 2147483647"},
		{[]string{"write_bw", "-D", "-1"}, "-D -1: Duration period must be positive"},
		{[]string{"write_bw", "-D", "0"}, "-D 0: Duration period must be positive"},
		{[]string{"write_bw", "-D", "9223372037"}, "-D 9223372037: Duration period should be at most 2147483647 seconds"},
		{[]string{"write_bw", "-D", "18446744074"}, "-D 18446744074: Duration period should be at most 2147483647 seconds"},
		{[]string{"write_bw", "-t", "20000"}, "-t 20000: Tx depth should be between 1 and 15000"},
		{[]string{"send_bw", "-r", "20000"}, "-r 20000: Rx depth should be between 1 and 16384"},
		{[]string{"read_bw", "-r", "2"}, "-r 2: On RDMA verbs rx depth can be only 1"},
		{[]string{"write_bw", "-q", "20000"}, "-q 20000: num of Qps should be between 1 and 16384"},
		{[]string{"write_lat", "-q", "2"}, "-q 2: Multiple QPs only available on bw tests"},
		{[]string{"write_bw", "-D", "5", "-a"}, "Duration mode currently doesn't support running on all sizes."},
		{[]string{"write_bw", "-i", "0"}, "-i 0: IB Port can't be less than 1"},
	} {
		var out, errOut bytes.Buffer
		t.Setenv("XDG_CONFIG_HOME", t.TempDir())
		f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), RDMA: nil}
		cmd := newCmdPerf(f, func(o *PerfOptions) error { _, err := o.Options.Resolve(); return refusalExit(&errOut, err) })
		cmd.SetArgs(c.args)
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.Execute()
		code := cli.ExitCode(err)
		if code != cli.ExitFailed || err == nil || err.Error() != c.want {
			t.Errorf("%q: exit %d (%v), want 1 (%s)", c.args, code, err, c.want)
		}
	}
}

// TestPerfSWLimiterRefusalNotice: the command says on stderr that the
// burst is the TX depth before it refuses the SW limiter, as perftest.
func TestPerfSWLimiterRefusalNotice(t *testing.T) {
	var out, errOut bytes.Buffer
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), RDMA: nil}
	cmd := newCmdPerf(f, func(*PerfOptions) error { return nil })
	cmd.SetArgs([]string{"send_lat", "--rate_limit", "1", "--rate_limit_type", "SW"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	if cli.ExitCode(err) != cli.ExitFailed || err == nil || !strings.Contains(err.Error(), "SW Rate limiter cann't be executed") {
		t.Errorf("exit %d (%v), want 1 and the SW limiter's refusal", cli.ExitCode(err), err)
	}
	if !strings.HasPrefix(errOut.String(), " Setting burst size to tx depth = 1\n") {
		t.Errorf("stderr %q, want the burst notice first", errOut.String())
	}
}

// TestPerfPlotFlag: --plot takes a FILE.svg; one it could not write is
// a usage error (exit 2) naming --plot, before anything runs.
func TestPerfPlotFlag(t *testing.T) {
	file := t.TempDir() + "/bw.svg"
	o, err := runPerfCmd(t, "write_bw", "-a", "--plot", file, "10.9.0.1")
	if err != nil || o.PlotFile != file {
		t.Fatalf("--plot %s: %v, %+v", file, err, o)
	}
	_, err = runPerfCmd(t, "write_bw", "--plot", "/no/such/dir/bw.svg", "10.9.0.1")
	if want := "--plot /no/such/dir/bw.svg: there is no directory /no/such/dir: create it, or name a file in an existing one"; cli.ExitCode(err) != cli.ExitUsage || err.Error() != want {
		t.Errorf("a missing directory: exit %d (%v), want 2 and %q", cli.ExitCode(err), err, want)
	}
}
