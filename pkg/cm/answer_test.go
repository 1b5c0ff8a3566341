package cm

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// answerOne listens in ps on port, runs client against it and answers
// its one request; it returns the request, the answer and the client's run.
func answerOne(t *testing.T, f *rdmatest.Fabric, ps rdma.PortSpace, port int, client func() result) (*Request, Result, result) {
	t.Helper()
	l, err := Listen(f, "", port, ps)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan result, 1)
	go func() { done <- client() }()
	var req *Request
	for end := time.Now().Add(5 * time.Second); req == nil; {
		if req, err = l.Next(50 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if req == nil && time.Now().After(end) {
			t.Fatalf("no connect request after 5s (client %+v)", <-done)
		}
	}
	res := req.Answer(context.Background(), 5*time.Second)
	return req, res, <-done
}

func TestAnswerTellsEachToolApart(t *testing.T) {
	for _, tc := range []struct {
		tool     string
		ps       rdma.PortSpace
		port     int
		messages int
		wantOut  string
	}{
		{"udaddy", rdma.PortSpaceUDP, 7174, 20, "udaddy: starting client\nudaddy: connecting\ninitiating data transfers\nreceiving data transfers\ndata transfers complete\ntest complete\nreturn status 0\n"},
		{"ucmatose", rdma.PortSpaceTCP, 7471, 20, "cmatose: starting client\ncmatose: connecting\nreceiving data transfers\nsending replies\ndata transfers complete\ntest complete\nreturn status 0\n"},
		{"rdma_client", rdma.PortSpaceTCP, 7471, 2, "rdma_client: start\nrdma_client: end 0\n"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			f, _, _ := newFabric()
			cl := options(f, tc.tool, func(o *Options) { o.Server = "10.9.0.1" })
			req, res, c := answerOne(t, f, tc.ps, tc.port, func() result { return run(cl) })
			if req.Tool != tc.tool || req.Peer.Addr() != ip1 {
				t.Errorf("request from %s told as %s from %v", tc.tool, req.Tool, req.Peer)
			}
			if !res.OK || res.Messages != tc.messages || res.Error != "" {
				t.Errorf("answer %+v, want ok with %d messages", res, tc.messages)
			}
			if c.code != 0 || c.out != tc.wantOut {
				t.Errorf("client %+v", c)
			}
		})
	}
}

func TestToolOfConnectParameters(t *testing.T) {
	for _, tc := range []struct {
		ps   rdma.PortSpace
		conn *rdma.ConnParam
		want string
	}{
		{rdma.PortSpaceUDP, nil, "udaddy"},
		{rdma.PortSpaceTCP, &rdma.ConnParam{ResponderResources: 128, InitiatorDepth: 128, RetryCount: 7, RNRRetryCount: 7}, "rdma_client"},
		{rdma.PortSpaceTCP, &rdma.ConnParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 5}, "ucmatose"},
		{rdma.PortSpaceTCP, &rdma.ConnParam{RetryCount: 7}, "ucmatose"},
		{rdma.PortSpaceTCP, nil, "ucmatose"},
	} {
		if got := ToolOf(tc.ps, tc.conn); got != tc.want {
			t.Errorf("ToolOf(%#x, %+v) = %s, want %s", int(tc.ps), tc.conn, got, tc.want)
		}
	}
}

func TestAnswerEndsWhenStopCloses(t *testing.T) {
	f, _, _ := newFabric()
	l, err := Listen(f, "10.9.0.1", 7471, rdma.PortSpaceTCP)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A client that connects and then never sends its message: the
	// server waits for it until stopped.
	ec, _ := f.CreateEventChannel()
	defer ec.Close()
	id, _ := ec.CreateID()
	defer id.Close()
	if err := id.ResolveAddr(ip2, netip.AddrPortFrom(ip1, 7471), time.Second); err != nil {
		t.Fatal(err)
	}
	mustEvent(t, ec, rdma.CMEventAddrResolved)
	_ = id.ResolveRoute(time.Second)
	mustEvent(t, ec, rdma.CMEventRouteResolved)
	if err := id.Connect(nil); err != nil {
		t.Fatal(err)
	}
	req, err := l.Next(time.Second)
	if err != nil || req == nil {
		t.Fatalf("no request: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res := req.Answer(ctx, time.Minute)
	if res.OK || !strings.Contains(res.Error, "server shutting down") || res.Hint != "" {
		t.Errorf("answer %+v", res)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("stopping took %v", d)
	}
}

func TestAnswerRefusedRequestRejectsTheClient(t *testing.T) {
	f, _, _ := newFabric()
	l, err := Listen(f, "", 7174, rdma.PortSpaceUDP)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan result, 1)
	go func() { done <- run(options(f, "udaddy", func(o *Options) { o.Server = "10.9.0.1" })) }()
	var req *Request
	for req == nil {
		if req, err = l.Next(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	req.Refuse()
	if c := <-done; c.code == 0 || !strings.Contains(c.out, "RDMA_CM_EVENT_UNREACHABLE") {
		t.Errorf("refused client %+v", c)
	}
}

func mustEvent(t *testing.T, ec rdma.EventChannel, want rdma.CMEventType) {
	t.Helper()
	ev, err := ec.GetEvent(time.Second)
	if err != nil || ev.Type != want {
		t.Fatalf("event %v, %v; want %v", ev.Type, err, want)
	}
}

func TestListenOnAnAddressOfNoDevice(t *testing.T) {
	f, _, _ := newFabric()
	if _, err := Listen(f, "10.9.9.9", 7174, rdma.PortSpaceUDP); err == nil {
		t.Fatal("listening on an address no device has worked")
	}
}
