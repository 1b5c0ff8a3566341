package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rxe"
)

// stubHost stands for the machine; the commands under test only pass it on.
type stubHost struct{ host.Host }

var theHost = &stubHost{}

func rxeTestFactory() *cli.Factory {
	return &cli.Factory{
		IO:   cli.Test(nil, &bytes.Buffer{}, &bytes.Buffer{}),
		Host: func() host.Host { return theHost },
		RDMA: func() rdma.Stack { return nil },
	}
}

func executeCmd(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.Execute()
}

func TestRxeAddFlags(t *testing.T) {
	f := rxeTestFactory()
	f.JSON = true
	var got *rxe.AddOptions
	cmd := newCmdRxeAdd(f, func(o *rxe.AddOptions) error { got = o; return nil })
	if err := executeCmd(cmd, "eth0", "--name", "rxe0", "--timeout", "3s"); err != nil {
		t.Fatal(err)
	}
	if got.Netdev != "eth0" || got.Name != "rxe0" || got.Timeout != 3*time.Second || !got.JSON || got.IO != f.IO {
		t.Errorf("options %+v", got)
	}
}

func TestRxeAddDefaults(t *testing.T) {
	var got *rxe.AddOptions
	cmd := newCmdRxeAdd(rxeTestFactory(), func(o *rxe.AddOptions) error { got = o; return nil })
	if err := executeCmd(cmd, "veth0"); err != nil {
		t.Fatal(err)
	}
	if got.Host != theHost {
		t.Errorf("rxe add did not get the factory's host")
	}
	if got.Name != "" || got.Timeout != rxe.DefaultTimeout || got.JSON {
		t.Errorf("options %+v", got)
	}
}

func TestRxeArgsAreUsageErrors(t *testing.T) {
	f := rxeTestFactory()
	ran := false
	tests := []struct {
		cmd  *cobra.Command
		args []string
		want string
	}{
		{newCmdRxeAdd(f, func(*rxe.AddOptions) error { ran = true; return nil }), nil,
			"add needs NETDEV (see 'add --help')"},
		{newCmdRxeRemove(f, func(*rxe.RemoveOptions) error { ran = true; return nil }), []string{"a", "b"},
			"remove needs NAME|NETDEV (see 'remove --help')"},
		{newCmdRxeStatus(f, func(*rxe.StatusOptions) error { ran = true; return nil }), []string{"x"},
			"status takes no arguments (see 'status --help')"},
	}
	for _, tt := range tests {
		err := executeCmd(tt.cmd, tt.args...)
		if cli.ExitCode(err) != cli.ExitUsage || err.Error() != tt.want {
			t.Errorf("%s %v: err %v (exit %d), want %q (exit 2)", tt.cmd.Name(), tt.args, err, cli.ExitCode(err), tt.want)
		}
	}
	if ran {
		t.Error("a command ran with wrong arguments")
	}
}

func TestRxeRemoveAndStatusPassOptions(t *testing.T) {
	f := rxeTestFactory()
	f.JSON = true
	var target string
	if err := executeCmd(newCmdRxeRemove(f, func(o *rxe.RemoveOptions) error { target = o.Target; return nil }), "veth0"); err != nil {
		t.Fatal(err)
	}
	if target != "veth0" {
		t.Errorf("target %q", target)
	}
	var json bool
	if err := executeCmd(newCmdRxeStatus(f, func(o *rxe.StatusOptions) error { json = o.JSON; return nil })); err != nil {
		t.Fatal(err)
	}
	if !json {
		t.Error("--json not passed to status")
	}
}

func TestRxeHasItsSubcommands(t *testing.T) {
	cmd := newCmdRxe(rxeTestFactory())
	for _, name := range []string{"add", "remove", "status"} {
		if c, _, err := cmd.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("no %s subcommand: %v", name, err)
		}
	}
}

func TestUnknownSubcommandIsUsageError(t *testing.T) {
	for _, args := range [][]string{{"rxe", "bogus"}, {"completion", "nosuchshell"}} {
		root := newCmdRoot(rxeTestFactory())
		root.SetArgs(args)
		err := root.Execute()
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), args[1]) {
			t.Errorf("rdmactl %s: %v (exit %d), want a usage error naming %s", strings.Join(args, " "), err, cli.ExitCode(err), args[1])
		}
	}
}

// pflag reads a back-quoted word of a flag's usage as its value's name
// (--persist `rxe apply` would show as taking a value): only a value's
// placeholder may be back-quoted, and never in a boolean flag's usage.
func TestFlagUsageQuotesOnlyValueNames(t *testing.T) {
	placeholder := regexp.MustCompile(`^[A-Z][A-Z|_]*(\.[a-z]+)?$`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(fl)
			if !strings.Contains(fl.Usage, "`") {
				return
			}
			if fl.Value.Type() == "bool" || !placeholder.MatchString(name) {
				t.Errorf("%s --%s: usage %q makes %q its value's name", c.CommandPath(), fl.Name, fl.Usage, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newCmdRoot(rxeTestFactory()))
}
