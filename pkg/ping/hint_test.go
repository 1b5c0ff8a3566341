package ping

import (
	"strings"
	"syscall"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestHints(t *testing.T) {
	peer := "10.9.0.1 port 9999"
	cases := []struct {
		name string
		f    failure
		want string // a fragment the hint must contain; "" = no hint
	}{
		{"rejected", failure{event: rdma.CMEventRejected, status: 8}, "nothing listens on 10.9.0.1 port 9999"},
		{"server setup failed", failure{event: rdma.CMEventRejected, status: 28}, "its setup failed"},
		{"other reject", failure{event: rdma.CMEventRejected, status: 5}, "reason 5"},
		{"no device for source", failure{event: rdma.CMEventAddrError, status: -19}, "has no RDMA device"},
		{"no ARP answer", failure{event: rdma.CMEventAddrError, status: -110}, "no neighbour answered ARP/ND for 10.9.0.1"},
		{"route timeout", failure{event: rdma.CMEventRouteError, status: -110}, "rdmactl doctor --ip 10.9.0.1"},
		{"unreachable", failure{event: rdma.CMEventUnreachable}, "UDP port 4791"},
		{"no route", failure{call: &rdma.Error{Op: "rdma_resolve_addr", Errno: syscall.ENETUNREACH}}, "no route to 10.9.0.1"},
		{"bind without device", failure{call: &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.ENODEV}}, "netdev with an RDMA device"},
		{"no rdma_cm", failure{call: &rdma.Error{Op: "rdma_create_event_channel", Errno: syscall.ENOENT}}, "/dev/infiniband/rdma_cm is missing"},
		{"bind elsewhere", failure{call: &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.EADDRNOTAVAIL}}, "address of this host"},
		{"port taken", failure{call: &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.EADDRINUSE}}, "-p"},
		{"size mismatch", failure{wc: rdma.WCLocProtErr, wcOp: rdma.WCRDMARead}, "same -S"},
		{"timeout resolving", failure{timeout: &timeoutError{step: stepResolve}}, "did not finish within --timeout"},
		{"timeout connecting", failure{timeout: &timeoutError{step: stepConnect}}, "ping server running on 10.9.0.1 port 9999"},
		{"timeout pinging", failure{timeout: &timeoutError{step: stepEcho}}, "server stopped answering"},
		{"nothing known", failure{}, ""},
	}
	for _, c := range cases {
		got := hintFor(c.f, peer, "10.9.0.1", false)
		if c.want == "" {
			if got != "" {
				t.Errorf("%s: unexpected hint %q", c.name, got)
			}
			continue
		}
		if !strings.Contains(got, c.want) || strings.Contains(got, "\n") {
			t.Errorf("%s: hint %q does not contain %q on one line", c.name, got, c.want)
		}
	}
}

// With no device listed, the hint follows what the kernel shows: a device
// without its provider, no device, or no RDMA in the kernel at all.
func TestNoDeviceHints(t *testing.T) {
	defer func(f func() ([]string, bool)) { kernelDevices = f }(kernelDevices)
	f := failure{call: &rdma.Error{Op: "rdma_create_event_channel", Errno: syscall.ENODEV}}
	for _, c := range []struct {
		names        []string
		classOK      bool
		want, reject string
	}{
		{[]string{"rxe0"}, true, "the kernel has rxe0 but libibverbs found no device", "rxe add"},
		{nil, true, "create one with `rdmactl rxe add <netdev>`", ""},
		{nil, false, "this kernel shows no RDMA support", "rxe add"},
	} {
		kernelDevices = func() ([]string, bool) { return c.names, c.classOK }
		got := hintFor(f, "10.9.0.1 port 7174", "10.9.0.1", false)
		if !strings.Contains(got, c.want) || (c.reject != "" && strings.Contains(got, c.reject)) {
			t.Errorf("devices %v class %v: hint %q", c.names, c.classOK, got)
		}
		if !strings.Contains(got, "rdmactl doctor") {
			t.Errorf("devices %v class %v: hint %q does not point at doctor", c.names, c.classOK, got)
		}
	}
}

func TestFirstFailureWins(t *testing.T) {
	var f failure
	f.note(failure{event: rdma.CMEventRejected})
	f.note(failure{wc: rdma.WCRetryExcErr})
	if f.event != rdma.CMEventRejected || f.wc != 0 {
		t.Fatalf("%+v", f)
	}
}
