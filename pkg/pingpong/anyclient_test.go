package pingpong

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// answerOne answers the first client on a free port of 127.0.0.1 as
// rdmactl serve does (any -s and -n, -e, -g auto), and returns the port
// and the responder's document once it is done.
func answerOne(t *testing.T, f *rdmatest.Fabric) (int, <-chan Document) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	answered := make(chan Document, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		o := &Options{Verbs: f, Kind: RC, Device: "rxe0", IBPort: 1, MTU: DefaultMTU, RxDepth: DefaultRxDepth,
			GIDIndex: -1, GIDAuto: true, Events: true, AnySizeAndCount: true, Timeout: 10 * time.Second}
		answered <- Answer(context.Background(), o, c)
	}()
	return ln.Addr().(*net.TCPAddr).Port, answered
}

func loopback() *rdmatest.Fabric {
	f := rdmatest.NewFabric()
	f.AddRoCEDevice("rxe0", netip.MustParseAddr("127.0.0.1"))
	return f
}

func anyClient(f *rdmatest.Fabric, port, size, iters int, events bool) *Options {
	return &Options{Verbs: f, Kind: RC, Server: "127.0.0.1", Port: port, Device: "rxe0", IBPort: 1, Size: size,
		MTU: DefaultMTU, RxDepth: 100, Iters: iters, GIDIndex: -1, GIDAuto: true, Events: events, Check: true,
		Timeout: 5 * time.Second}
}

// A responder that knows neither -s nor -n answers each client's
// messages with their size, and ends its session once the client,
// done, falls silent: after the silence's floor, as the fake's round
// trips are fast.
func TestAnswerAnySizeAndCount(t *testing.T) {
	for _, c := range []struct {
		name          string
		size, iters   int
		clientsEvents bool
	}{
		{"-s 1024 -n 7 -e", 1024, 7, true},
		{"-s 65536 -n 3", 65536, 3, false},
		{"-s 1048576 -n 2, the bound", MaxAnswerSize, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := loopback()
			port, answered := answerOne(t, f)
			client := Probe(context.Background(), anyClient(f, port, c.size, c.iters, c.clientsEvents))
			if !client.OK || !client.Validated || client.Iters != c.iters {
				t.Fatalf("client: %+v (error %+v)", client, client.Error)
			}
			clientDone := time.Now()
			doc := <-answered
			silence := time.Since(clientDone)
			if !doc.OK || doc.Iters != c.iters || doc.Size != c.size || doc.Bytes != int64(2*c.size*c.iters) || doc.Role != "server" {
				t.Errorf("responder: %+v (error %+v)", doc, doc.Error)
			}
			if silence < pollwait.SilenceFloor-100*time.Millisecond || silence > pollwait.SilenceFloor+2*time.Second {
				t.Errorf("the responder ended %v after the client, want about %v", silence, pollwait.SilenceFloor)
			}
		})
	}
}

// A message above the bound fails both sides, the responder's naming
// the bound.
func TestAnswerRefusesAMessageAboveTheBound(t *testing.T) {
	f := loopback()
	port, answered := answerOne(t, f)
	client := Probe(context.Background(), anyClient(f, port, MaxAnswerSize+1, 3, false))
	if client.OK {
		t.Errorf("client passed: %+v", client)
	}
	doc := <-answered
	if doc.OK || doc.Error == nil || doc.Error.Message != "a message larger than 1048576 bytes (1 MiB), the most this responder answers, arrived (its receive failed: local length error)" ||
		doc.Error.Hint != "run the client with -s 1048576 or less" {
		t.Errorf("responder: %+v (error %+v)", doc, doc.Error)
	}
}

// A client that swaps addresses and then sends nothing ends its session
// at the silence's floor, as a failure.
func TestAnswerAClientThatSendsNothing(t *testing.T) {
	f := loopback()
	port, answered := answerOne(t, f)
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gid := netip.MustParseAddr("::ffff:127.0.0.1").As16()
	if _, err := c.Write(Dest{QPN: 0x999, PSN: 1, GID: gid}.MarshalRecord()); err != nil {
		t.Fatal(err)
	}
	record := make([]byte, RecordSize)
	if _, err := c.Read(record); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(done); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	doc := <-answered
	if took := time.Since(begin); took < pollwait.SilenceFloor-100*time.Millisecond || took > pollwait.SilenceFloor+2*time.Second {
		t.Errorf("the responder ended after %v, want about %v", took, pollwait.SilenceFloor)
	}
	if doc.OK || doc.Error == nil || doc.Error.Message != "the client connected its QP but sent nothing for 2s" {
		t.Errorf("responder: %+v (error %+v)", doc, doc.Error)
	}
}
