package ping

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func newTestMachine(server bool) (*machine, *bytes.Buffer) {
	var errOut bytes.Buffer
	m := &machine{server: server, state: Idle, errOut: &errOut, inbox: make([]byte, InfoSize)}
	m.resolveRoute = func() error { return nil }
	m.repostRecv = func() error { return nil }
	return m, &errOut
}

func recv(n uint32) rdma.WC {
	return rdma.WC{Opcode: rdma.WCRecv, ByteLen: n}
}

func TestClientGoAheadsAdvanceThePing(t *testing.T) {
	m, _ := newTestMachine(false)
	m.state = ReadAdv
	m.handleCompletions([]rdma.WC{{Opcode: rdma.WCSend}, recv(InfoSize)})
	if m.state != WriteAdv || m.posts != 1 {
		t.Fatalf("after first go-ahead: state %v posts %d", m.state, m.posts)
	}
	m.handleCompletions([]rdma.WC{recv(InfoSize)})
	if m.state != WriteComplete || m.posts != 2 {
		t.Fatalf("after second go-ahead: state %v posts %d", m.state, m.posts)
	}
}

func TestServerTellsSourceFromSinkAdvertisements(t *testing.T) {
	m, _ := newTestMachine(true)
	m.state = ConnectRequest
	BufferInfo{Addr: 0xabc, RKey: 7, Size: 64}.Encode(m.inbox)
	m.handleCompletions([]rdma.WC{recv(InfoSize)})
	if m.state != ReadAdv || m.remote != (BufferInfo{Addr: 0xabc, RKey: 7, Size: 64}) {
		t.Fatalf("first advertisement: state %v remote %+v", m.state, m.remote)
	}
	m.handleCompletions([]rdma.WC{{Opcode: rdma.WCRDMARead}})
	if m.state != ReadComplete {
		t.Fatalf("after read: %v", m.state)
	}
	m.handleCompletions([]rdma.WC{recv(InfoSize)})
	if m.state != WriteAdv {
		t.Fatalf("sink advertisement: %v", m.state)
	}
	m.handleCompletions([]rdma.WC{{Opcode: rdma.WCRDMAWrite}, recv(InfoSize)})
	if m.state != ReadAdv || m.posts != 5 {
		t.Fatalf("write then next ping: state %v posts %d", m.state, m.posts)
	}
}

func TestBogusMessageFailsTheConnection(t *testing.T) {
	m, errOut := newTestMachine(false)
	m.handleCompletions([]rdma.WC{recv(8)})
	if got, want := errOut.String(), "Received bogus data, size 8\nrecv wc error: -1\n"; got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
	if m.state != Failed || !m.cqStopped || m.posts != 1 {
		t.Fatalf("state %v cqStopped %v posts %d", m.state, m.cqStopped, m.posts)
	}
}

func TestFailedCompletion(t *testing.T) {
	m, errOut := newTestMachine(true)
	m.handleCompletions([]rdma.WC{{Opcode: rdma.WCRDMARead, Status: rdma.WCLocProtErr}})
	// The message the real rping server printed in the lab when a client
	// advertised more than the server's -S.
	if got, want := errOut.String(), "cq completion failed status 4\n"; got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
	if m.state != Failed || m.failure.wc != rdma.WCLocProtErr {
		t.Fatalf("state %v failure %+v", m.state, m.failure)
	}
}

func TestFlushStopsCompletionHandling(t *testing.T) {
	m, errOut := newTestMachine(false)
	m.handleCompletions([]rdma.WC{{Status: rdma.WCWRFlushErr}})
	m.handleCompletions([]rdma.WC{recv(InfoSize)})
	if !m.cqStopped || m.posts != 0 || errOut.Len() != 0 {
		t.Fatalf("cqStopped %v posts %d stderr %q", m.cqStopped, m.posts, errOut)
	}
}

func TestRepostFailure(t *testing.T) {
	m, errOut := newTestMachine(false)
	m.repostRecv = func() error { return errors.New("boom") }
	m.handleCompletions([]rdma.WC{recv(InfoSize)})
	if got, want := errOut.String(), "post recv error: -1\n"; got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
}

func TestRejectedPrintsAndForcesExit(t *testing.T) {
	m, errOut := newTestMachine(false)
	m.state = RouteResolved
	m.handleCM(rdma.CMEvent{Type: rdma.CMEventRejected, Status: 8}, true)
	if ok := m.take(Connected, "wait for CONNECTED"); ok {
		t.Fatal("take succeeded")
	}
	// As the real rping client printed in the lab against a closed port.
	want := "cma event RDMA_CM_EVENT_REJECTED, error 8\nwait for CONNECTED state 4\n"
	if errOut.String() != want {
		t.Fatalf("stderr %q, want %q", errOut, want)
	}
	if m.exitCode != 255 || m.failure.event != rdma.CMEventRejected {
		t.Fatalf("exitCode %d failure %+v", m.exitCode, m.failure)
	}
}

func TestServerDisconnect(t *testing.T) {
	m, errOut := newTestMachine(true)
	m.state = WriteComplete
	m.handleCM(rdma.CMEvent{Type: rdma.CMEventDisconnected}, false)
	m.take(ReadAdv, "wait for RDMA_READ_ADV")
	want := "server DISCONNECT EVENT...\nwait for RDMA_READ_ADV state 10\n"
	if errOut.String() != want {
		t.Fatalf("stderr %q, want %q", errOut, want)
	}
}

func TestServerEstablishedKeepsStateClientConnects(t *testing.T) {
	s, _ := newTestMachine(true)
	s.state = ConnectRequest
	s.handleCM(rdma.CMEvent{Type: rdma.CMEventEstablished}, false)
	c, _ := newTestMachine(false)
	c.state = RouteResolved
	c.handleCM(rdma.CMEvent{Type: rdma.CMEventEstablished}, true)
	if s.state != ConnectRequest || c.state != Connected || s.posts != 1 || c.posts != 1 {
		t.Fatalf("server %v/%d client %v/%d", s.state, s.posts, c.state, c.posts)
	}
}

func TestAddrResolvedStartsRouteResolution(t *testing.T) {
	m, errOut := newTestMachine(false)
	started := false
	m.resolveRoute = func() error { started = true; return nil }
	m.handleCM(rdma.CMEvent{Type: rdma.CMEventAddrResolved}, true)
	if !started || m.state != AddrResolved || m.posts != 0 {
		t.Fatalf("started %v state %v posts %d", started, m.state, m.posts)
	}
	m.resolveRoute = func() error { return &rdma.Error{Op: "rdma_resolve_route", Errno: 22} }
	m.handleCM(rdma.CMEvent{Type: rdma.CMEventAddrResolved}, true)
	if got, want := errOut.String(), "rdma_resolve_route: Invalid argument\n"; got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
	if m.state != Failed || m.posts != 1 {
		t.Fatalf("state %v posts %d", m.state, m.posts)
	}
}

func TestCompletionHandlingDoesNotAllocate(t *testing.T) {
	m, _ := newTestMachine(false)
	wcs := []rdma.WC{{Opcode: rdma.WCSend}, recv(InfoSize)}
	n := testing.AllocsPerRun(100, func() {
		m.state = ReadAdv
		m.handleCompletions(wcs)
		m.take(WriteAdv, "")
	})
	if n != 0 {
		t.Fatalf("%v allocations per completion batch", n)
	}
}
