package cm

import (
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// scriptedCM is a CM whose channel hands out a fixed list of events (each
// for the first id created), then times out: enough to drive a tool's
// failure paths without a device.
type scriptedCM struct {
	channelErr error
	events     []rdma.CMEventType
	status     int
}

func (s *scriptedCM) LookupHost(name string) (netip.Addr, error) {
	a, err := netip.ParseAddr(name)
	if err != nil {
		return a, &rdma.LookupError{Code: -2, Msg: "Name or service not known"}
	}
	return a, nil
}

func (s *scriptedCM) CreateEventChannel() (rdma.EventChannel, error) {
	if s.channelErr != nil {
		return nil, s.channelErr
	}
	return &scriptedChannel{cm: s}, nil
}

type scriptedChannel struct {
	cm  *scriptedCM
	ids []*scriptedID
}

func (c *scriptedChannel) CreateID() (rdma.CMID, error) {
	id := &scriptedID{}
	c.ids = append(c.ids, id)
	return id, nil
}

func (c *scriptedChannel) CreateIDIn(rdma.PortSpace) (rdma.CMID, error) { return c.CreateID() }

func (c *scriptedChannel) GetEvent(timeout time.Duration) (rdma.CMEvent, error) {
	if len(c.cm.events) == 0 || len(c.ids) == 0 {
		return rdma.CMEvent{}, rdma.ErrTimeout
	}
	t := c.cm.events[0]
	c.cm.events = c.cm.events[1:]
	return rdma.CMEvent{Type: t, Status: c.cm.status, ID: c.ids[len(c.ids)-1]}, nil
}

func (c *scriptedChannel) Close() error { return nil }

type scriptedID struct{ rdma.CMID }

func (*scriptedID) ResolveAddr(netip.Addr, netip.AddrPort, time.Duration) error { return nil }
func (*scriptedID) ResolveRoute(time.Duration) error                            { return nil }
func (*scriptedID) Bind(netip.AddrPort) error                                   { return nil }
func (*scriptedID) Listen(int) error                                            { return nil }
func (*scriptedID) Close() error                                                { return nil }

func runTool(t *testing.T, cm rdma.CM, tool string, mod func(o *Options)) (string, string, error) {
	t.Helper()
	var out, errOut strings.Builder
	o := &Options{Tool: tool, Connections: 1, Count: 10, Size: 100, Port: "7471", PortSpace: rdma.PortSpaceTCP,
		Out: &out, ErrOut: &errOut, CM: cm}
	mod(o)
	err := Run(o)
	return out.String(), errOut.String(), err
}

func TestUcmatoseRejectedAsTheCToolReportsIt(t *testing.T) {
	cm := &scriptedCM{events: []rdma.CMEventType{rdma.CMEventRejected}, status: 8}
	out, errOut, err := runTool(t, cm, "ucmatose", func(o *Options) { o.Server = "10.9.0.1" })
	want := "cmatose: starting client\ncmatose: connecting\ncmatose: event: RDMA_CM_EVENT_REJECTED, error: 8\ntest complete\nreturn status 8\n"
	if out != want {
		t.Errorf("stdout %q\nwant   %q", out, want)
	}
	if cli.ExitCode(err) != 8 || !strings.Contains(errOut, "hint: nothing listens on 10.9.0.1") {
		t.Errorf("exit %d, stderr %q", cli.ExitCode(err), errOut)
	}
}

func TestTimeoutEndsTheRunWithExitOne(t *testing.T) {
	out, errOut, err := runTool(t, &scriptedCM{}, "udaddy", func(o *Options) {
		o.PortSpace, o.Timeout = rdma.PortSpaceUDP, time.Second
	})
	if out != "udaddy: starting server\n" || cli.ExitCode(err) != 1 {
		t.Errorf("stdout %q exit %d", out, cli.ExitCode(err))
	}
	if !strings.Contains(errOut, "timed out after 1s waiting for a connect request") || !strings.Contains(errOut, "hint: no client connected") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestNoDeviceIsReportedAsTheCToolsDo(t *testing.T) {
	for _, tool := range []string{"udaddy", "ucmatose", "mckey", "cmtime"} {
		cm := &scriptedCM{channelErr: &rdma.Error{Op: "rdma_create_event_channel", Errno: syscall.ENODEV}}
		out, errOut, err := runTool(t, cm, tool, func(o *Options) { o.Group = "239.1.1.1" })
		if out != "" || !strings.HasPrefix(errOut, "No RDMA devices were detected\n") || cli.ExitCode(err) != 1 {
			t.Errorf("%s: stdout %q stderr %q exit %d", tool, out, errOut, cli.ExitCode(err))
		}
	}
}

func TestRDMAClientNoServer(t *testing.T) {
	cm := &scriptedCM{events: []rdma.CMEventType{rdma.CMEventAddrError}, status: -int(syscall.ETIMEDOUT)}
	out, errOut, err := runTool(t, cm, "rdma_client", func(o *Options) { o.Server = "10.9.0.77" })
	if out != "rdma_client: start\nrdma_client: end -1\n" || cli.ExitCode(err) != 255 {
		t.Errorf("stdout %q exit %d", out, cli.ExitCode(err))
	}
	if !strings.HasPrefix(errOut, "rdma_create_ep: Connection timed out\n") || !strings.Contains(errOut, "hint: no neighbour answered") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestMckeyUnmappedNeedsBind(t *testing.T) {
	out, _, err := runTool(t, &scriptedCM{}, "mckey", func(o *Options) { o.Unmapped, o.Group = true, "ff12::1" })
	if out != "unmapped multicast address requires binding to source address\n" || cli.ExitCode(err) != 1 {
		t.Errorf("stdout %q exit %d", out, cli.ExitCode(err))
	}
}
