package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cm"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// runCMCmd parses args as `rdmactl cm` would and returns the options the
// tool would run with.
func runCMCmd(t *testing.T, args ...string) (*cm.Options, string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut)}
	var got *cm.Options
	cmd := newCmdCM(f, func(o *cm.Options) error { got = o; return nil })
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	if got != nil {
		got.IO, got.CM = nil, nil
	}
	return got, out.String(), errOut.String(), err
}

func TestCMFlagsAsTheCToolsTakeThem(t *testing.T) {
	base := cm.Options{Connections: 1, Count: 10, Size: 100, Port: "7471", PortSpace: rdma.PortSpaceTCP, Retries: 2, TimeoutMs: 2000}
	for _, c := range []struct {
		args []string
		want func(o *cm.Options)
	}{
		{[]string{"ucmatose"}, func(o *cm.Options) {}},
		{[]string{"ucmatose", "-s", "10.9.0.1", "-b", "10.9.0.2", "-c", "8", "-C", "100", "-S", "4k", "-t", "0x20", "-p", "9000", "-m", "-a", "14", "-P", "ib", "--timeout", "3s"},
			func(o *cm.Options) {
				o.Server, o.Bind, o.Connections, o.Count, o.Size, o.SetTOS, o.TOS, o.Port = "10.9.0.1", "10.9.0.2", 8, 100, 4, true, 0x20, "9000"
				o.Migrate, o.SetAck, o.AckTimeout, o.PortSpace, o.Timeout = true, true, 14, rdma.PortSpaceIB, 3*time.Second
			}},
		{[]string{"udaddy"}, func(o *cm.Options) { o.PortSpace = rdma.PortSpaceUDP }},
		{[]string{"udaddy", "-p", "0x2"}, func(o *cm.Options) { o.PortSpace = rdma.PortSpaceIPoIB }},
		{[]string{"udaddy", "-P", "ipoib"}, func(o *cm.Options) { o.PortSpace = rdma.PortSpaceIPoIB }},
		{[]string{"rdma_server"}, func(o *cm.Options) { o.Server = "0.0.0.0" }},
		{[]string{"rdma_client", "-p", "7000"}, func(o *cm.Options) { o.Server, o.Port = "127.0.0.1", "7000" }},
		{[]string{"mckey", "-m", "239.1.1.1", "-s", "-o", "-l", "-p", "0x111"}, func(o *cm.Options) {
			o.Group, o.Sender, o.SendOnly, o.NoLoopback, o.PortSpace = "239.1.1.1", true, true, true, rdma.PortSpaceUDP
		}},
		{[]string{"mckey", "-M", "ff12::1", "-b", "10.9.0.1"}, func(o *cm.Options) {
			o.Group, o.Unmapped, o.Bind, o.PortSpace = "ff12::1", true, "10.9.0.1", rdma.PortSpaceUDP
		}},
		{[]string{"cmtime", "-s", "10.9.0.1", "-r", "5", "-t", "500"}, func(o *cm.Options) {
			o.Server, o.Connections, o.Retries, o.TimeoutMs = "10.9.0.1", 100, 5, 500
		}},
	} {
		got, _, _, err := runCMCmd(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		want := base
		want.Tool = c.args[0]
		c.want(&want)
		if *got != want {
			t.Errorf("%v:\n got %+v\nwant %+v", c.args, *got, want)
		}
	}
}

func TestCMBadOptionPrintsTheToolsUsage(t *testing.T) {
	_, out, errOut, err := runCMCmd(t, "rdma_client", "-x")
	if cli.ExitCode(err) != 1 || !cli.IsSilent(err) {
		t.Fatalf("exit %d (silent %v), want the tool's 1", cli.ExitCode(err), cli.IsSilent(err))
	}
	if out != cm.Usage("rdma_client") || errOut == "" {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
}
