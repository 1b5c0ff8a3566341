package pingpong

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// A record as ibv_rc_pingpong writes it for QPN 0x11, PSN 0xabcdef and
// the GID ::ffff:10.9.0.1: the wire GID is four big-endian words.
const cRecord = "0000:000011:abcdef:00000000000000000000ffff0a090001\x00"

func TestRecordMatchesTheCTools(t *testing.T) {
	d := Dest{QPN: 0x11, PSN: 0xabcdef, GID: rdma.GIDFor(netip.MustParseAddr("10.9.0.1"))}
	if got := d.MarshalRecord(); string(got) != cRecord || len(got) != RecordSize {
		t.Fatalf("record %q (%d bytes), want %q (%d)", got, len(got), cRecord, RecordSize)
	}
	back, err := ParseRecord([]byte(cRecord))
	if err != nil || back != d {
		t.Fatalf("parse: %+v %v, want %+v", back, err, d)
	}
	if RecordSize != 52 {
		t.Fatalf("RecordSize %d, the tools' sizeof msg is 52", RecordSize)
	}
}

func TestParseRecordRefusesWhatTheToolsReadInPart(t *testing.T) {
	for _, s := range []string{"", "0000:000011", "0000:000011:abcdef:0000", "zz:1:2:00000000000000000000ffff0a090001", "1:2:3:0000000000000000000gffff0a090001"} {
		if _, err := ParseRecord([]byte(s)); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(cRecord))
	f.Add([]byte("0001:000002:000003:fe800000000000000000000000000001"))
	f.Add([]byte("ffff:ffffff:ffffff:ffffffffffffffffffffffffffffffff\x00junk"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseRecord(b)
		if err != nil {
			return
		}
		if d.LID > 0xffff || d.QPN > 0xffffff || d.PSN > 0xffffff {
			return // the tools' format widens these; no round trip
		}
		again, err := ParseRecord(d.MarshalRecord())
		if err != nil || again != d {
			t.Fatalf("%q: round trip %+v %v, want %+v", b, again, err, d)
		}
		if !bytes.HasSuffix(d.MarshalRecord(), []byte{0}) {
			t.Fatal("record not NUL-terminated")
		}
	})
}
