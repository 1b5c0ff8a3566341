package ping

import (
	"strings"
	"syscall"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestHints(t *testing.T) {
	peer := "10.9.0.1 port 9999"
	cases := []struct {
		name string
		f    failure
		want string // a fragment the hint must contain; "" = no hint
	}{
		{"rejected", failure{event: cgoverbs.CMEventRejected, status: 8}, "nothing listens on 10.9.0.1 port 9999"},
		{"no device for source", failure{event: cgoverbs.CMEventAddrError, status: -19}, "rdmactl rxe add"},
		{"address timeout", failure{event: cgoverbs.CMEventAddrError, status: -110}, "UDP port 4791"},
		{"route timeout", failure{event: cgoverbs.CMEventRouteError, status: -110}, "UDP port 4791"},
		{"unreachable", failure{event: cgoverbs.CMEventUnreachable}, "UDP port 4791"},
		{"no route", failure{call: &rdma.Error{Op: "rdma_resolve_addr", Errno: syscall.ENETUNREACH}}, "no route to 10.9.0.1"},
		{"no devices", failure{call: &rdma.Error{Op: "rdma_create_event_channel", Errno: syscall.ENODEV}}, "rdmactl rxe add"},
		{"bind elsewhere", failure{call: &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.EADDRNOTAVAIL}}, "address of this host"},
		{"port taken", failure{call: &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.EADDRINUSE}}, "-p"},
		{"size mismatch", failure{wc: rdma.WCLocProtErr, wcOp: rdma.WCRDMARead}, "same -S"},
		{"timeout resolving", failure{timeout: &timeoutError{step: stepResolve}}, "UDP port 4791"},
		{"timeout connecting", failure{timeout: &timeoutError{step: stepConnect}}, "ping server running on 10.9.0.1 port 9999"},
		{"timeout pinging", failure{timeout: &timeoutError{step: stepEcho}}, "server stopped answering"},
		{"nothing known", failure{}, ""},
	}
	for _, c := range cases {
		got := hintFor(c.f, peer, false)
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

func TestFirstFailureWins(t *testing.T) {
	var f failure
	f.note(failure{event: cgoverbs.CMEventRejected})
	f.note(failure{wc: rdma.WCRetryExcErr})
	if f.event != cgoverbs.CMEventRejected || f.wc != 0 {
		t.Fatalf("%+v", f)
	}
}
