package demo

import (
	"net"
	"strings"
	"testing"
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
			sums <- ServeConn(Options{RDMA: l.verbs, Device: "rxe0", IBPort: 1, GIDAuto: true, TCPPort: port, Timeout: 10e9}, c)
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
