package demo

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestServeConnAnswersClientsInARow: the server flow over connections the
// caller accepts, as rdmactl serve runs it, answers one client after
// another with the same result as the one-shot server.
func TestServeConnAnswersClientsInARow(t *testing.T) {
	l := newLab(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	sums := make(chan Summary)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(sums)
				return
			}
			sums <- ServeConn(Options{RDMA: l.fab, Device: "rxe0", IBPort: 1, GIDAuto: true, TCPPort: port, Timeout: 10e9}, c, time.Second)
		}
	}()
	for i := 0; i < 3; i++ {
		cl := l.run(Options{Server: "127.0.0.1", Device: "rxe0", IBPort: 1, GIDAuto: true, TCPPort: port})
		sum := <-sums
		if cl.err != nil || !sum.OK || sum.Role != "server" || sum.Buffer == nil || !strings.HasPrefix(*sum.Buffer, writeMsg[:len(sendMsg)]) {
			t.Fatalf("client %d: %v\n%s%s\nserver summary %+v", i, cl.err, cl.out, cl.errOut, sum)
		}
		if sum.GIDIndex == nil || *sum.GIDIndex != 5 {
			t.Errorf("client %d: server GID index %v, want 5 (RoCE v2 of 127.0.0.1)", i, sum.GIDIndex)
		}
	}
}

// A connection that sends nothing, or no record an RC peer sends, is
// dropped before the server opens the device: idle and garbage clients get
// no QP and no buffer, and the silent one is dropped at the first-byte
// timeout, not the step timeout.
func TestServeConnChecksTheRecordFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		send []byte
		want string
	}{
		{"silent", nil, "nothing arrived within"},
		{"short", []byte("GET / HTTP/1.0\r\n"), "closed the connection after 16 of 34 bytes"},
		{"QP 0", make([]byte, RecordSize), "QP number 0 is a management QP's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t)
			srv, cl := tcpPair(t)
			defer cl.Close()
			go func() {
				if tc.send != nil {
					_, _ = cl.Write(tc.send)
					if len(tc.send) < RecordSize {
						cl.Close()
					}
				}
			}()
			begin := time.Now()
			sum := ServeConn(Options{RDMA: l.fab, Device: "rxe0", IBPort: 1, GIDAuto: true, Timeout: 10 * time.Second}, srv, 100*time.Millisecond)
			if took := time.Since(begin); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if sum.OK || sum.Error == nil || !strings.Contains(sum.Error.Hint, tc.want) {
				t.Errorf("summary %+v, error %+v", sum, sum.Error)
			}
			if n := l.fab.Opens(); n != 0 {
				t.Errorf("the server opened the device %d times", n)
			}
		})
	}
}

// tcpPair is a connected loopback TCP pair. Not net.Pipe: it refuses a
// read deadline once the peer has closed, where TCP takes it and reads EOF.
func tcpPair(t *testing.T) (srv, cl net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	cl, err = net.Dial("tcp4", ln.Addr().String())
	must(t, err)
	srv, err = ln.Accept()
	must(t, err)
	return srv, cl
}
