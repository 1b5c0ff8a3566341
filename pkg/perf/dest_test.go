package perf

import (
	"bytes"
	"strings"
	"testing"
)

// The record ib_write_bw sent in the lab (perftest 6.06, rxe0 -x 1), as its
// KEY_PRINT_FMT_GID lays it out; see testdata/perftest-6.06/write_bw-*.
var labDest = Dest{
	QPN: 0x11, PSN: 0x99286e, RKey: 0x244, VAddr: 0x560f76358000,
	GID: [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 9, 14: 0, 15: 1},
}

const labDestWire = "0000:0000:000011:99286e:00000244:0000560f76358000:" +
	"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:09:00:01:00000000:"

func TestDestEncodeGID(t *testing.T) {
	got := labDest.Encode(true)
	want := append([]byte(labDestWire), 0)
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode(gid)\n got %q\nwant %q", got, want)
	}
	if len(got) != 108 {
		t.Fatalf("record is %d bytes, perftest reads 108", len(got))
	}
}

func TestDestEncodeNoGID(t *testing.T) {
	d := Dest{LID: 3, OutReads: 16, QPN: 0x1234, PSN: 0xabcdef, RKey: 0xdeadbeef, VAddr: 0x7f0012345000, SRQN: 7}
	got := d.Encode(false)
	want := "0003:0010:001234:abcdef:deadbeef:00007f0012345000:00000007\x00"
	if string(got) != want {
		t.Fatalf("Encode\n got %q\nwant %q", got, want)
	}
	back, err := DecodeDest(got, false)
	if err != nil || back != d {
		t.Fatalf("DecodeDest = %+v, %v; want %+v", back, err, d)
	}
}

func TestDestDecodeGID(t *testing.T) {
	d, err := DecodeDest(append([]byte(labDestWire), 0), true)
	if err != nil {
		t.Fatal(err)
	}
	if d != labDest {
		t.Fatalf("got %+v\nwant %+v", d, labDest)
	}
}

func TestDestDecodeErrors(t *testing.T) {
	for name, rec := range map[string][]byte{
		"short":       []byte("0000:0000"),
		"not hex":     padTo("0000:zzzz:000011:99286e:00000244:0000560f76358000:00000000", 59),
		"few fields":  padTo("0000:0000:000011:99286e", 59),
		"lid too big": padTo("10000:0:1:1:1:1:0", 59),
	} {
		if _, err := DecodeDest(rec, false); err == nil {
			t.Errorf("%s: DecodeDest(%q) succeeded", name, rec)
		} else if !strings.Contains(err.Error(), "peer's QP record") {
			t.Errorf("%s: error %q does not say what failed", name, err)
		}
	}
}

func padTo(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	return b
}

// FuzzDecodeDest: any bytes either fail cleanly or decode to a record that
// survives a round trip through Encode.
func FuzzDecodeDest(f *testing.F) {
	f.Add(append([]byte(labDestWire), 0), true)
	f.Add(Dest{QPN: 1, PSN: 2, RKey: 3, VAddr: 4}.Encode(false), false)
	f.Add(make([]byte, 108), true)
	f.Fuzz(func(t *testing.T, rec []byte, withGID bool) {
		d, err := DecodeDest(rec, withGID)
		if err != nil {
			return
		}
		back, err := DecodeDest(d.Encode(withGID), withGID)
		if err != nil || back != d {
			t.Fatalf("round trip of %+v: %+v, %v", d, back, err)
		}
	})
}
