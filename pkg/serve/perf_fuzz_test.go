package serve

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// Whatever a client sends first on the perftest port, its test is told
// from at most openingSize bytes that start what it sent, and only a
// pingpong record's or a version's opening is taken.
func FuzzReadClientKind(f *testing.F) {
	f.Add([]byte("6.06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("0000:000011:000abc:00000000000000000000ffff0a090001\x00"))
	f.Add([]byte("GET / HTTP/1.0\r\n\r\n"))
	f.Add([]byte("00"))
	f.Fuzz(func(t *testing.T, wire []byte) {
		a, b := net.Pipe()
		defer a.Close()
		go func() { b.Write(wire); b.Close() }()
		test, opening, err := readClientKind(a, 100*time.Millisecond, 200*time.Millisecond)
		if err != nil {
			return
		}
		if len(opening) > openingSize || !bytes.HasPrefix(wire, opening) {
			t.Fatalf("opening %q of %q", opening, wire)
		}
		switch test {
		case TestPingpongRC:
			if len(opening) != openingSize || opening[4] != ':' {
				t.Fatalf("pingpong from %q", opening)
			}
		case TestWriteBW:
			if opening[0] < '0' || opening[0] > '9' {
				t.Fatalf("write_bw from %q", opening)
			}
		default:
			t.Fatalf("test %q from %q", test, opening)
		}
	})
}
