package demo

import (
	"net"
	"testing"
	"time"
)

// Whatever a TCP client sends first, the server reads at most one record
// and accepts only one whose QP number an RC QP can have.
func FuzzReadFirstRecord(f *testing.F) {
	f.Add(make([]byte, RecordSize))
	f.Add([]byte("\x00\x00\x55\x80\x97\x08\x9d\xa0\x00\x00\x02\x24\x00\x00\x00\x11\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x0a\x09\x00\x01"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, wire []byte) {
		a, b := net.Pipe()
		defer a.Close()
		go func() { b.Write(wire); b.Close() }()
		rec, err := readFirstRecord(a, 100*time.Millisecond, 200*time.Millisecond)
		if err == nil {
			err = rec.Check()
		}
		if err == nil && (len(wire) < RecordSize || rec.QPNum < 2 || rec.QPNum > 0xffffff) {
			t.Fatalf("accepted %+v from %d bytes", rec, len(wire))
		}
	})
}
