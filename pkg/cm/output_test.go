package cm

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestOutputKeepsLinesForJSON(t *testing.T) {
	var out, errOut strings.Builder
	o := &output{out: &out, errOut: &errOut, json: true}
	o.printf("a: %d\n", 1)
	o.printf("b")
	o.printf("c\nd\n")
	if out.Len() != 0 || strings.Join(o.lines, "|") != "a: 1|bc|d" {
		t.Errorf("lines %q, stdout %q", o.lines, out.String())
	}
	o.perror("rdma_connect", &rdma.Error{Op: "rdma_connect", Errno: syscall.ECONNREFUSED})
	if errOut.String() != "rdma_connect: Connection refused\n" {
		t.Errorf("perror %q", errOut.String())
	}
}

func TestExitStatusIsTheLowByte(t *testing.T) {
	for status, code := range map[int]int{0: 0, 8: 8, -1: 255, -110: 146, 256: 0} {
		if got := cli.ExitCode(exitFor(status)); got != code {
			t.Errorf("status %d: exit %d, want %d", status, got, code)
		}
		if err := exitFor(status); err != nil && !cli.IsSilent(err) {
			t.Errorf("status %d: the tool printed its own lines, the error must be silent", status)
		}
	}
}

func TestHintsSayWhatWasObserved(t *testing.T) {
	for _, c := range []struct {
		f    failure
		want string
	}{
		{failure{Event: rdma.CMEventRejected, Status: 8}, "nothing listens on 10.9.0.1"},
		{failure{Event: rdma.CMEventRejected, Status: 28}, "rejected the connect request (reason 28)"},
		{failure{Event: rdma.CMEventAddrError, Status: -110}, "no neighbour answered ARP/ND for 10.9.0.1"},
		{failure{Event: rdma.CMEventUnreachable, Status: 1}, "did not answer the connect request"},
		{failure{Event: rdma.CMEventConnectError, Status: -1}, "broke while it was being set up (status -1)"},
		{failure{Event: rdma.CMEventMulticastError, Status: -22}, "multicast join was refused (status -22)"},
		{failure{Timeout: 3e9, What: whatConnectRequest}, "no client connected"},
		{failure{Timeout: 3e9, What: "multicast data"}, "no datagram arrived"},
		{failure{Call: &rdma.Error{Op: "rdma_create_id", Errno: syscall.EINVAL}}, "port space"},
		{failure{Call: &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.EADDRINUSE}}, "port is taken"},
		{failure{Call: errors.New("something else")}, ""},
	} {
		got := c.f.hint("udaddy", "10.9.0.1")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: hint %q, want it to say %q", c.f, got, c.want)
		}
	}
	if got := (&failure{Timeout: 3e9, What: "an rdma_cm event"}).hint("ucmatose", "10.9.0.1"); !strings.Contains(got, "no answer from 10.9.0.1") {
		t.Errorf("client timeout hint %q", got)
	}
}

func TestDocumentsMatchTheirSchemas(t *testing.T) {
	var b strings.Builder
	doc := runDocument{Tool: "udaddy", Role: "client", Connections: 1, Output: []string{"udaddy: starting client"},
		Error: &cli.ErrorBody{Message: "timed out", Hint: "h", Code: 1}}
	if err := cli.WriteJSON(&b, doc); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("cm", []byte(b.String())); err != nil {
		t.Errorf("cm: %v\n%s", err, b.String())
	}
	b.Reset()
	tm := timings{conns: make([][stepCount]span, 1)}
	ct := CmtimeDocument{Tool: "cmtime", OK: true, Role: "client", Connections: 1, Steps: tm.rows(), Connect: tm.connectPercentiles(), Output: []string{}}
	if err := cli.WriteJSON(&b, ct); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("cmtime", []byte(b.String())); err != nil {
		t.Errorf("cmtime: %v\n%s", err, b.String())
	}
}
