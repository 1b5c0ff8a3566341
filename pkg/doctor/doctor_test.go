package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

func runOn(t *testing.T, fixture string, opts Options) (string, error) {
	t.Helper()
	f, _ := loadFacts(t, fixture)
	out := &bytes.Buffer{}
	opts.IO = cli.Test(nil, out, &bytes.Buffer{})
	opts.Gather = func(netip.Addr) *Facts { return f }
	err := Run(context.Background(), &opts)
	return out.String(), err
}

func TestRunPrintsOneLinePerCheck(t *testing.T) {
	out, err := runOn(t, "configured", Options{})
	if cli.ExitCode(err) != 0 {
		t.Fatalf("exit %d on the configured lab: %v\n%s", cli.ExitCode(err), err, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(allOK) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(allOK), out)
	}
	if lines[0] != "ok    kernel-modules  ib_core, ib_uverbs, rdma_ucm, rdma_rxe loaded" {
		t.Errorf("first line %q", lines[0])
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour without a terminal:\n%q", out)
	}
}

func TestRunFailsOnAFailedCheck(t *testing.T) {
	out, err := runOn(t, "iptables-drop", Options{})
	if cli.ExitCode(err) != 1 || !cli.IsSilent(err) {
		t.Fatalf("exit %d silent=%v, want a silent exit 1", cli.ExitCode(err), cli.IsSilent(err))
	}
	if !strings.Contains(out, "\nfail  firewall        a rule drops RoCE v2 (UDP 4791): iptables-save: -A INPUT -p udp -m udp --dport 4791 -j DROP;") {
		t.Errorf("output:\n%s", out)
	}
}

func TestRunJSON(t *testing.T) {
	out, err := runOn(t, "memlock-0-nocap", Options{JSON: true})
	if cli.ExitCode(err) != 1 {
		t.Fatalf("exit %d", cli.ExitCode(err))
	}
	var rep struct {
		OK     bool     `json:"ok"`
		Checks []Result `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := schema.Validate("doctor", []byte(out)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	last := rep.Checks[len(rep.Checks)-1]
	if rep.OK || len(rep.Checks) != len(allOK) || last.Name != CheckMemlock || last.Status != Fail || last.Fix == "" {
		t.Errorf("report %+v", rep)
	}
}

func TestRunDumpsFacts(t *testing.T) {
	out, err := runOn(t, "configured", Options{DumpFacts: true})
	if err != nil {
		t.Fatal(err)
	}
	var f Facts
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(f.Devices) != 2 || f.Devices[0].Name != "rxe0" {
		t.Errorf("facts round trip lost devices: %+v", f.Devices)
	}
}

func TestRunRejectsBadIP(t *testing.T) {
	_, err := runOn(t, "configured", Options{IP: "10.9.0.300"})
	if cli.ExitCode(err) != 2 || err.Error() != `--ip "10.9.0.300" is not an IP address` {
		t.Errorf("err %v (exit %d)", err, cli.ExitCode(err))
	}
}

func TestRunPassesIPToGather(t *testing.T) {
	var got netip.Addr
	opts := Options{IO: cli.Test(nil, &bytes.Buffer{}, &bytes.Buffer{}), IP: "::ffff:10.9.0.1",
		Gather: func(a netip.Addr) *Facts { got = a; return &Facts{} }}
	_ = Run(context.Background(), &opts)
	if got != netip.MustParseAddr("10.9.0.1") {
		t.Errorf("gathered for %v, want 10.9.0.1", got)
	}
}
