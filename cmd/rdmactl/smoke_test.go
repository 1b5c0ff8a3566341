package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func runSmokeCmd(t *testing.T, jsonOut bool, args ...string) (*SmokeOptions, string, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), JSON: jsonOut, RDMA: stubStack, Host: host.System}
	var got *SmokeOptions
	cmd := newCmdSmoke(f, func(o *SmokeOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as under the root command
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	reportError(f, err, out.Len() > 0) // as main does
	return got, out.String(), err
}

func TestSmokeFlags(t *testing.T) {
	o, _, err := runSmokeCmd(t, false, "10.9.0.1", "node2", "--peers", "hosts", "-C", "3", "--timeout", "5s",
		"--junit", "f.xml", "--prom", "f.prom", "--concurrency", "2", "--port", "7200", "--tcp-port", "20000")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Peers, ",") != "10.9.0.1,node2" || o.PeersFile != "hosts" || o.Count != 3 || o.Timeout != 5*time.Second ||
		o.JUnitFile != "f.xml" || o.PromFile != "f.prom" || o.Concurrency != 2 || o.CMPort != 7200 || o.TCPPort != 20000 {
		t.Errorf("options %+v", o.Options)
	}
	o, _, err = runSmokeCmd(t, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Peers) != 0 || o.Count != 10 || o.Timeout != 10*time.Second || o.Concurrency != 8 || o.CMPort != 7174 || o.TCPPort != 19875 ||
		o.BW || o.PerfPort != 18515 {
		t.Errorf("defaults %+v", o.Options)
	}
	o, _, err = runSmokeCmd(t, false, "--bw", "--perf-port", "18600")
	if err != nil || !o.BW || o.PerfPort != 18600 {
		t.Errorf("--bw --perf-port 18600: %+v, %v", o, err)
	}
}

func TestSmokeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bad_peer!"}, `invalid PEER "bad_peer!"`},
		{[]string{"--timeout", "0s"}, "invalid --timeout 0s"},
		{[]string{"-C", "0"}, "invalid --count 0"},
		{[]string{"--concurrency", "0"}, "invalid --concurrency 0"},
		{[]string{"--port", "70000"}, "invalid --port 70000"},
		{[]string{"--tcp-port", "0"}, "invalid --tcp-port 0"},
		{[]string{"--bw", "--perf-port", "0"}, "invalid --perf-port 0"},
	} {
		_, out, err := runSmokeCmd(t, true, c.args...)
		if cli.ExitCode(err) != cli.ExitUsage || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: error %v (exit %d), want exit 2 and %q", c.args, err, cli.ExitCode(err), c.want)
			continue
		}
		var doc struct {
			SchemaVersion int   `json:"schema_version"`
			OK            *bool `json:"ok"`
			Error         struct {
				Message string
				Code    int
			}
		}
		if jerr := json.Unmarshal([]byte(out), &doc); jerr != nil || doc.SchemaVersion != 2 || doc.OK == nil || *doc.OK ||
			doc.Error.Code != cli.ExitUsage || doc.Error.Message != err.Error() {
			t.Errorf("%v: --json error document %q", c.args, out)
		}
		if err := schema.Validate("error", []byte(out)); err != nil {
			t.Errorf("against its schema: %v", err)
		}
	}
}

func runServeCmd(t *testing.T, args ...string) (*ServeOptions, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), RDMA: stubStack, Host: host.System}
	var got *ServeOptions
	cmd := newCmdServe(f, func(o *ServeOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as under the root command
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	return got, cmd.Execute()
}

func TestServeFlags(t *testing.T) {
	o, err := runServeCmd(t, "-a", "10.9.0.1", "--port", "7200", "--tcp-port", "20000", "--timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "10.9.0.1" || o.CMPort != 7200 || o.TCPPort != 20000 || o.Timeout != 5*time.Second || o.RDMA == nil || o.Devices == nil {
		t.Errorf("options %+v", o.Config)
	}
	o, err = runServeCmd(t)
	if err != nil || o.Addr != "" || o.CMPort != 7174 || o.TCPPort != 19875 || o.PerfPort != 18515 || o.Timeout != 30*time.Second {
		t.Errorf("defaults %+v, %v", o, err)
	}
	if o, err = runServeCmd(t, "--perf-port", "18600"); err != nil || o.PerfPort != 18600 {
		t.Errorf("--perf-port 18600: %+v, %v", o, err)
	}
	for _, args := range [][]string{{"10.9.0.1"}, {"--timeout", "-1s"}, {"--port", "0"}, {"--perf-port", "70000"}} {
		if _, err := runServeCmd(t, args...); cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// stubStack stands in for the RDMA stack in tests that stop before any
// RDMA call (their runF records the options).
func stubStack() rdma.Stack { return cgoverbs.Stack{} }
