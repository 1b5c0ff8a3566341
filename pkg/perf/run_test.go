package perf

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeVerbs is an RDMA device whose data paths return made-up timings,
// so that the flows (handshakes, prints, reports) run without RDMA.
type fakeVerbs struct{ qpn atomic.Uint32 }

func (v *fakeVerbs) Open(name string) (Device, error) {
	if name != "" && name != "rxe0" {
		return nil, errors.New("no such device")
	}
	return &fakeDevice{v: v}, nil
}

type fakeDevice struct{ v *fakeVerbs }

func (d *fakeDevice) Name() string { return "rxe0" }
func (d *fakeDevice) Port(int) (Port, error) {
	return Port{Active: true, ActiveMTU: 3, Ethernet: true}, nil
}
func (d *fakeDevice) GID(_, index int) ([16]byte, error) {
	if index != 1 {
		return [16]byte{}, nil
	}
	return [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}, nil
}
func (d *fakeDevice) AutoGID(int, []byte) (int, error) { return 1, nil }
func (d *fakeDevice) MaxReads() (int, error)           { return 128, nil }
func (d *fakeDevice) Close() error                     { return nil }
func (d *fakeDevice) NewEndpoint(EndpointConfig) (Endpoint, error) {
	return &fakeEndpoint{qpn: 0x10 + d.v.qpn.Add(1)}, nil
}

type fakeEndpoint struct {
	qpn    uint32
	remote Dest
}

func (e *fakeEndpoint) QPN() uint32                      { return e.qpn }
func (e *fakeEndpoint) RKey() uint32                     { return 0x100 + e.qpn }
func (e *fakeEndpoint) Addr() uint64                     { return 0x7f0000000000 + uint64(e.qpn)<<20 }
func (e *fakeEndpoint) Connect(c Connect) error          { e.remote = c.Remote; return nil }
func (e *fakeEndpoint) PostRecvs(n, off, size int) error { return nil }
func (e *fakeEndpoint) Close() error                     { return nil }

// Stream: every message takes 1 ms, one in flight.
func (e *fakeEndpoint) Stream(s Stream) (BWTiming, error) {
	if s.RemoteAddr != e.remote.VAddr || s.RKey != e.remote.RKey {
		return BWTiming{}, errors.New("stream not aimed at the peer's buffer")
	}
	t := BWTiming{Size: uint64(s.Size), CQMod: s.CQMod, Posted: make([]int64, s.Iters), Completed: make([]int64, s.Iters)}
	for i := range t.Posted {
		t.Posted[i], t.Completed[i] = int64(i)*1e6, int64(i+1)*1e6
	}
	return t, nil
}

func (e *fakeEndpoint) Receive(iters, size, off, rxDepth int, timeout time.Duration) (BWTiming, error) {
	return BWTiming{Size: uint64(size), Posted: []int64{0}, Completed: []int64{int64(iters) * 1e6}, Count: uint64(iters)}, nil
}

// PingPong: round trips of 20 µs.
func (e *fakeEndpoint) PingPong(p PingPong) ([]int64, error) {
	posted := make([]int64, p.Iters)
	for i := range posted {
		posted[i] = int64(i) * 20000
	}
	return posted, nil
}

// runBoth runs a server and a client of opts over loopback TCP.
func runBoth(t *testing.T, o Options) (srv, cli string) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.TCPPort = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	v := &fakeVerbs{}
	var sout, cout, serr, cerr bytes.Buffer
	done := make(chan error, 1)
	so := o
	go func() { done <- Run(so, v, &sout, &serr) }()
	o.Server = "127.0.0.1"
	for i := 0; ; i++ {
		cout.Reset()
		err = Run(o, v, &cout, &cerr)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || i == 100 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	return sout.String(), cout.String()
}

func TestFlowsPairUp(t *testing.T) {
	for _, test := range []Test{WriteBW, ReadBW, SendBW, SendLat, WriteLat, ReadLat} {
		t.Run(test.String(), func(t *testing.T) {
			srv, cli := runBoth(t, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50})
			if !strings.HasPrefix(srv, "\n************************************\n* Waiting for client to connect... *\n") {
				t.Errorf("server does not open with perftest's banner:\n%s", srv)
			}
			for side, out := range map[string]string{"server": srv, "client": cli} {
				if !strings.Contains(out, " local address: LID 0000 QPN 0x001") || !strings.Contains(out, " remote address: LID 0000 QPN 0x001") {
					t.Errorf("%s lacks the address lines:\n%s", side, out)
				}
				if !strings.HasSuffix(out, resultLine) {
					t.Errorf("%s does not end with the result line:\n%s", side, out)
				}
			}
			switch test {
			case WriteBW, ReadBW:
				row := " 65536      50               62.50              62.50  \t\t   0.001000\n"
				if !strings.Contains(cli, row) || !strings.Contains(srv, row) {
					t.Errorf("both sides should print the client's row %q:\nserver:\n%s\nclient:\n%s", row, srv, cli)
				}
			case SendLat, WriteLat:
				row := " 2       50          10.00          10.00        10.00  "
				if !strings.Contains(cli, row) || !strings.Contains(srv, row) {
					t.Errorf("both sides should print %q:\nserver:\n%s\nclient:\n%s", row, srv, cli)
				}
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	_, cli := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, JSON: true})
	for _, want := range []string{`"test":"send_lat"`, `"role":"client"`, `"t_typical_usec":10`, `"usec_per_iteration"`, `"gid":"::ffff:127.0.0.1"`} {
		if !strings.Contains(cli, want) {
			t.Errorf("JSON lacks %s:\n%s", want, cli)
		}
	}
	if strings.Contains(cli, "#bytes") {
		t.Errorf("--json printed the table too:\n%s", cli)
	}
}

func TestRunRefusesEmptyGID(t *testing.T) {
	err := Run(Options{Test: WriteBW, GIDIndex: 5, IBPort: 1, Server: "127.0.0.1", TCPPort: 1}, &fakeVerbs{}, &bytes.Buffer{}, &bytes.Buffer{})
	var h *HintedError
	if !errors.As(err, &h) || !strings.Contains(err.Error(), "GID index 5") {
		t.Fatalf("got %v", err)
	}
}
