package perf

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// A peer that connects (or accepts) and then says nothing ends the run
// within --timeout, in either role, with the bound and the flag named and
// a hint that says only what was seen; the error still reads as a
// network timeout to serve.
func TestSilentPeerEndsWithinTheTimeout(t *testing.T) {
	const bound = 300 * time.Millisecond
	check := func(role string, err error, took time.Duration) {
		t.Helper()
		want := "exchange with the peer failed: exchanging versions: timed out after 300ms waiting for the peer (--timeout)"
		if err == nil || err.Error() != want || !strings.Contains(cli.HintOf(err), "the peer connected but did not answer this step") {
			t.Errorf("%s: %v (hint %q), want %q", role, err, cli.HintOf(err), want)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s: %v is not a net.Error timeout", role, err)
		}
		if took < bound/2 || took > bound+2*time.Second {
			t.Errorf("%s: ended after %v, bound %v", role, took, bound)
		}
	}

	// the client against a server that accepts and stays silent
	silent, accepted := acceptOne(t)
	o := Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, Server: "127.0.0.1", TCPPort: silent.Port, Timeout: bound}
	begin := time.Now()
	err := runOn(o, newFabric(), &bytes.Buffer{}, &bytes.Buffer{})
	check("client", err, time.Since(begin))
	if c := <-accepted; c != nil {
		c.Close()
	}

	// the server against a client that connects and stays silent
	free, _ := net.Listen("tcp4", "127.0.0.1:0")
	addr := free.Addr().String()
	o = Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, TCPPort: free.Addr().(*net.TCPAddr).Port, Timeout: bound}
	free.Close()
	done := make(chan error, 1)
	go func() { done <- runOn(o, newFabric(), &bytes.Buffer{}, &bytes.Buffer{}) }()
	var c net.Conn
	for end := time.Now().Add(bound); c == nil && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		c, _ = net.Dial("tcp4", addr)
	}
	if c == nil {
		t.Fatal("the server never listened")
	}
	defer c.Close()
	begin = time.Now()
	check("server", <-done, time.Since(begin))
}
