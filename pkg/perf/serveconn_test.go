package perf

import (
	"net"
	"testing"
)

// A responder's accepted connection runs the server side; Measure's
// result is the client's report, which the server receives too.
func TestServeConnAndMeasure(t *testing.T) {
	v := newFabric()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type served struct {
		res *Result
		err error
	}
	done := make(chan served, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- served{nil, err}
			return
		}
		defer c.Close()
		res, err := ServeConn(Options{Test: WriteBW, IBPort: 1, GIDIndex: 1, Size: maxSize}, v, c)
		done <- served{res, err}
	}()
	cres, err := Measure(Options{Test: WriteBW, IBPort: 1, GIDIndex: 1, Iters: 50, Server: "127.0.0.1",
		TCPPort: ln.Addr().(*net.TCPAddr).Port}, v)
	if err != nil {
		t.Fatalf("Measure: %v", err)
	}
	s := <-done
	if s.err != nil {
		t.Fatalf("ServeConn: %v", s.err)
	}
	if cres.Role != "client" || s.res.Role != "server" || !cres.OK || !s.res.OK {
		t.Fatalf("roles/ok: client %+v server %+v", cres, s.res)
	}
	if len(cres.Bandwidth) != 1 || len(s.res.Bandwidth) != 1 || cres.Bandwidth[0] != s.res.Bandwidth[0] {
		t.Fatalf("bandwidth: client %+v server %+v", cres.Bandwidth, s.res.Bandwidth)
	}
	if b := cres.Bandwidth[0]; b.Bytes != 65536 || b.Iters != 50 || b.BWAvg <= 0 {
		t.Errorf("client row = %+v", b)
	}
}

// A client that is no perftest peer ends the session with an error.
func TestServeConnPeerGone(t *testing.T) {
	a, b := net.Pipe()
	b.Close()
	defer a.Close()
	if _, err := ServeConn(Options{Test: WriteBW, IBPort: 1, GIDIndex: 1}, newFabric(), a); err == nil {
		t.Fatal("ServeConn with a closed peer returned no error")
	}
}
