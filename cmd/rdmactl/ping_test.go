package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/ping"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
)

// runPingCmd parses args as `rdmactl ping` would and returns the options
// it would run with, the streams and the error.
func runPingCmd(t *testing.T, args ...string) (*ping.Options, string, string, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no config file of the machine
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut)}
	var got *ping.Options
	cmd := newCmdPing(f, func(o *ping.Options) error { got = o; return nil })
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as the root command sets them
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	return got, out.String(), errOut.String(), err
}

func TestPingRpingFlags(t *testing.T) {
	o, _, _, err := runPingCmd(t, "-c", "-a", "10.9.0.1", "-I", "10.9.0.2", "-p", "9999", "-C", "3", "-S", "1000", "-vVdPq")
	if err != nil {
		t.Fatal(err)
	}
	want := ping.Options{Mode: ping.ModeClient, Addr: "10.9.0.1", AddrGiven: true, Source: "10.9.0.2", Port: 9999, Count: 3, Size: 1000,
		Verbose: true, Validate: true, Debug: true, Persistent: true, SelfQP: true}
	o.IO = nil
	if !reflect.DeepEqual(*o, want) {
		t.Fatalf("options %+v\nwant    %+v", *o, want)
	}
}

func TestPingDefaults(t *testing.T) {
	o, _, _, err := runPingCmd(t, "-s")
	if err != nil {
		t.Fatal(err)
	}
	if o.Mode != ping.ModeServer || o.Port != 7174 || o.Size != 64 || o.Count != 0 || o.Timeout != 0 || o.Stats {
		t.Fatalf("defaults %+v", *o)
	}
}

func TestPingNumbersParseLikeAtoi(t *testing.T) {
	// rping reads -C/-S/-p with atoi: "x" is 0 (ping forever), "5k" is 5.
	o, _, _, err := runPingCmd(t, "-c", "-C", "x", "-S", "100bytes", "-p", "7k")
	if err != nil {
		t.Fatal(err)
	}
	if o.Count != 0 || o.Size != 100 || o.Port != 7 {
		t.Fatalf("count %d size %d port %d", o.Count, o.Size, o.Port)
	}
}

// rping's surface is its flags: the environment and the config file must
// not change what an rping command line does.
func TestPingIgnoresEnvironmentAndConfig(t *testing.T) {
	t.Setenv("RDMACTL_CM_PORT", "20001")
	o, _, _, err := runPingCmd(t, "-s")
	if err != nil {
		t.Fatal(err)
	}
	if o.Port != ping.DefaultPort {
		t.Fatalf("RDMACTL_CM_PORT changed the port to %d", o.Port)
	}
	o, _, _, _ = runPingCmd(t, "-s", "-p", "20002")
	if o.Port != 20002 {
		t.Fatalf("-p 20002 gave port %d", o.Port)
	}
}

// rping ignores operands: `-s 10.9.0.1 -v -C 3` is a
// wildcard server with -v and -C 3.
func TestPingOperandIgnoredLikeRping(t *testing.T) {
	o, _, errOut, err := runPingCmd(t, "-s", "10.9.0.1", "-v", "-C", "3")
	if err != nil || errOut != "" {
		t.Fatalf("err %v stderr %q", err, errOut)
	}
	if o.Addr != "" || !o.Verbose || o.Count != 3 {
		t.Fatalf("options %+v", *o)
	}
}

func TestPingExtras(t *testing.T) {
	o, _, _, err := runPingCmd(t, "-c", "-a", "h", "--stats", "--timeout", "1.5s")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Stats || o.Timeout.Seconds() != 1.5 {
		t.Fatalf("stats %v timeout %v", o.Stats, o.Timeout)
	}
}

func TestPingBadUsageExitsLikeRping(t *testing.T) {
	for _, args := range [][]string{
		{},                // neither -s nor -c
		{"-s", "-x"},      // unknown option
		{"-c", "-a"},      // missing value
		{"-c", "-t", "5"}, // rping's getopt knows -t but rejects it
	} {
		o, out, errOut, err := runPingCmd(t, args...)
		if o != nil {
			t.Errorf("%q: ran", args)
			continue
		}
		if cli.ExitCode(err) != 22 || !cli.IsSilent(err) {
			t.Errorf("%q: exit %d silent %v, want rping's 22", args, cli.ExitCode(err), cli.IsSilent(err))
		}
		if !strings.Contains(out, "Usage:") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || errOut == "" {
			t.Errorf("%q: want usage on stdout and one line on stderr, got %q / %q", args, out, errOut)
		}
	}
}

func TestPingNegativeTimeout(t *testing.T) {
	_, _, _, err := runPingCmd(t, "-c", "--timeout", "-1s")
	if cli.ExitCode(err) != cli.ExitUsage {
		t.Fatalf("exit %d", cli.ExitCode(err))
	}
}

func TestPingWaitModes(t *testing.T) {
	for _, c := range []struct {
		flag string
		want pollwait.Mode
	}{{"", pollwait.Adaptive}, {"--busy-poll", pollwait.BusyPoll}, {"--no-spin", pollwait.NoSpin}} {
		args := []string{"-c"}
		if c.flag != "" {
			args = append(args, c.flag)
		}
		o, _, _, err := runPingCmd(t, args...)
		if err != nil || o.Wait != c.want {
			t.Errorf("%q: mode %v, err %v", c.flag, o.Wait, err)
		}
	}
	_, _, errOut, err := runPingCmd(t, "-c", "--busy-poll", "--no-spin")
	if err == nil || !strings.Contains(errOut, "--busy-poll and --no-spin") {
		t.Fatalf("both modes: err %v, stderr %q", err, errOut)
	}
}

// As rping's getopt loop, the last of -s and -c wins: rping -s -c is a
// client, rping -c -s a server.
func TestPingLastModeFlagWins(t *testing.T) {
	for _, c := range []struct {
		args []string
		want ping.Mode
	}{
		{[]string{"-s", "-c"}, ping.ModeClient},
		{[]string{"-c", "-s"}, ping.ModeServer},
		{[]string{"-sc"}, ping.ModeClient},
		{[]string{"-c", "--server=false"}, ping.ModeClient},
	} {
		o, _, errOut, err := runPingCmd(t, c.args...)
		if err != nil || o == nil || o.Mode != c.want {
			t.Errorf("%q: options %+v, err %v, stderr %q; want mode %v", c.args, o, err, errOut, c.want)
		}
	}
	if _, _, _, err := runPingCmd(t, "-s", "--server=false"); cli.ExitCode(err) != 22 {
		t.Errorf("-s --server=false: exit %d, want 22 (no mode)", cli.ExitCode(err))
	}
}
