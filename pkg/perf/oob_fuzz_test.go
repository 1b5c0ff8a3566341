package perf

import (
	"encoding/json"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// feedServer runs fn on the server side of an OOB whose client writes
// wire (and reads what the server sends back).
func feedServer(wire []byte, fn func(*OOB)) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		defer b.Close()
		go io.Copy(io.Discard, b)
		b.Write(wire)
	}()
	fn(NewOOB(a, false, false, 200*time.Millisecond))
}

// A client's report is five big-endian 64-bit fields; whatever they hold,
// a report Check accepts encodes as a JSON document.
func FuzzBWReport(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x03\xe8@eK\x85\x1e\xb8Q\xec@eK\x85\x1e\xb8Q\xec?f\x1a\xa4\xbe\xc1\xf9\xfb"))
	f.Add(make([]byte, 40))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f\xf8\x00\x00\x00\x00\x00\x01\x7f\xf0\x00\x00\x00\x00\x00\x00\xff\xf0\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, wire []byte) {
		feedServer(wire, func(o *OOB) {
			rep, err := o.Reports(BWReport{})
			if err != nil || rep.Check() != nil {
				return
			}
			res := &Result{}
			res.addBW(rep)
			if _, err := json.Marshal(res.Bandwidth); err != nil {
				t.Fatalf("accepted report %+v does not encode: %v", rep, err)
			}
			if err := cli.EncodeDocument(io.Discard, res, false); err != nil {
				t.Fatalf("accepted report %+v: %v", rep, err)
			}
		})
	})
}

// The exchange's opening (version, page and cache line sizes, MTU) takes
// any bytes without a panic, and the MTU it settles on is one.
func FuzzOpening(f *testing.F) {
	f.Add([]byte("6.06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x00\x403\x00"))
	f.Add([]byte("busy\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("99999999999999999\xff\xff\xff\xff\x80\x00\x00\x00-1"))
	f.Fuzz(func(t *testing.T, wire []byte) {
		feedServer(wire, func(o *OOB) {
			if o.Versions() != nil {
				return
			}
			if _, _, err := o.SysData(4096, 64); err != nil {
				return
			}
			if mtu, err := o.MTU(3); err == nil && (mtu < 1 || mtu > 3) {
				t.Fatalf("MTU %d", mtu)
			}
		})
	})
}
