package serve

import (
	"net"
	"testing"
	"time"
)

// Whatever a client sends first on the perftest port, the opening read
// takes a version field (starting with a digit) or refuses it.
func FuzzReadOpening(f *testing.F) {
	f.Add([]byte("6.06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"))
	f.Add([]byte("5"))
	f.Fuzz(func(t *testing.T, wire []byte) {
		a, b := net.Pipe()
		defer a.Close()
		go func() { b.Write(wire); b.Close() }()
		got, err := readOpening(a, 100*time.Millisecond, 200*time.Millisecond)
		if err == nil && (len(got) != 16 || got[0] < '0' || got[0] > '9') {
			t.Fatalf("accepted %q", got)
		}
	})
}
