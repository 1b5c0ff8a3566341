package perf

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// The layout of struct pingpong_dest on x86_64 after perftest's htobe32 /
// htobe64 (rdma_write_keys), written out by hand from the struct.
func TestEncodeBinaryLayout(t *testing.T) {
	d := Dest{LID: 0x1234, OutReads: 16, QPN: 0x11, PSN: 0xabcdef, RKey: 0xdeadbeef, VAddr: 0x55aa000011112222, SRQN: 7}
	for i := range d.GID {
		d.GID[i] = byte(i + 1)
	}
	want := "00001234" + "00000010" + "00000011" + "00abcdef" + "deadbeef" + "00000000" +
		"55aa000011112222" + "0102030405060708090a0b0c0d0e0f10" + "00000007" + "00000003"
	if got := hex.EncodeToString(d.EncodeBinary(3)); got != want {
		t.Fatalf("EncodeBinary:\n got %s\nwant %s", got, want)
	}
	// gid_index -1 (no GID) travels as 0xffffffff.
	if got := d.EncodeBinary(-1)[52:]; !bytes.Equal(got, []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Fatalf("gid_index -1: % x", got)
	}
	back, err := DecodeDestBinary(d.EncodeBinary(3))
	if err != nil {
		t.Fatal(err)
	}
	d.SRQN = 0 // perftest's reader skips it, and so does DecodeDestBinary
	if back != d {
		t.Fatalf("round trip: got %+v, want %+v", back, d)
	}
}

func TestDecodeDestBinaryRejects(t *testing.T) {
	if _, err := DecodeDestBinary(make([]byte, 55)); err == nil {
		t.Error("55 bytes: no error")
	}
	b := make([]byte, destBinLen)
	b[1] = 1 // LID 0x10000
	if _, err := DecodeDestBinary(b); err == nil {
		t.Error("LID above 16 bits: no error")
	}
}

func FuzzDecodeDestBinary(f *testing.F) {
	f.Add(Dest{LID: 1, QPN: 0x11, PSN: 5, RKey: 9, VAddr: 1 << 40}.EncodeBinary(1))
	f.Add(make([]byte, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDestBinary(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes, except the fields
		// the reader skips (padding, SRQ number, GID index).
		e := d.EncodeBinary(0)
		if !bytes.Equal(e[:20], b[:20]) || !bytes.Equal(e[24:48], b[24:48]) {
			t.Fatalf("re-encoding % x gave % x", b, e)
		}
	})
}
