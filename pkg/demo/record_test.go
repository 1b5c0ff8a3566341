package demo

import (
	"github.com/rdmactl/rdmactl/pkg/rdma"

	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	in := Record{Addr: 0x5597a05b8da0, RKey: 0x3a6, QPNum: 0x12, LID: 0x1234,
		GID: [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 9, 14: 0, 15: 1}}
	b, err := in.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != RecordSize || RecordSize != 34 {
		t.Fatalf("encoded %d bytes, RecordSize %d; the C struct is 34", len(b), RecordSize)
	}
	var out Record
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
	got, err := ReadRecord(bytes.NewReader(b))
	if err != nil || got != in {
		t.Fatalf("ReadRecord = %+v, %v; want %+v", got, err, in)
	}
}

// TestRecordFromOriginal decodes the 34 bytes the C program sent in the
// lab VM (testdata/original-record.txt) and checks them against what the
// same run printed: its MR, QP number and LID, and GID index 1 from sysfs.
func TestRecordFromOriginal(t *testing.T) {
	raw := readTestdata(t, "original-record.txt")
	var hexText string
	for _, l := range strings.Split(raw, "\n") {
		if h, ok := strings.CutPrefix(l, "record: "); ok {
			hexText = h
		}
	}
	b, err := hex.DecodeString(hexText)
	if err != nil {
		t.Fatal(err)
	}
	var r Record
	if err := r.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	want := originalRecord(t, raw)
	if r != want {
		t.Fatalf("decoded %+v, the C program printed %+v", r, want)
	}
	again, _ := r.MarshalBinary()
	if !bytes.Equal(again, b) {
		t.Fatalf("re-encoded\n%x\nthe C program sent\n%x", again, b)
	}
}

func TestRecordRejectsShort(t *testing.T) {
	for _, n := range []int{0, 1, 18, RecordSize - 1} {
		if _, err := ReadRecord(bytes.NewReader(make([]byte, n))); err == nil {
			t.Errorf("ReadRecord of %d bytes: no error", n)
		}
		var r Record
		if err := r.UnmarshalBinary(make([]byte, n)); err == nil {
			t.Errorf("UnmarshalBinary of %d bytes: no error", n)
		}
	}
	var r Record
	if err := r.UnmarshalBinary(make([]byte, RecordSize+1)); err == nil {
		t.Error("UnmarshalBinary of 35 bytes: no error")
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(make([]byte, RecordSize))
	f.Add([]byte("short"))
	f.Add(bytes.Repeat([]byte{0xff}, RecordSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Record
		err := r.UnmarshalBinary(b)
		if (err == nil) != (len(b) == RecordSize) {
			t.Fatalf("len %d: err %v", len(b), err)
		}
		if err != nil {
			return
		}
		again, _ := r.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding changed %x into %x", b, again)
		}
		if got, err := ReadRecord(bytes.NewReader(b)); err != nil || got != r {
			t.Fatalf("ReadRecord disagrees: %+v, %v", got, err)
		}
	})
}

// originalRecord is the record the C client's own lines describe.
func originalRecord(t *testing.T, raw string) Record {
	t.Helper()
	var r Record
	var g string
	for _, l := range strings.Split(raw, "\n") {
		switch {
		case strings.HasPrefix(l, "MR was registered"):
			var lkey, flags uint32
			_, err := fmt.Sscanf(l, "MR was registered with addr=0x%x, lkey=0x%x, rkey=0x%x, flags=0x%x", &r.Addr, &lkey, &r.RKey, &flags)
			must(t, err)
		case strings.HasPrefix(l, "QP was created"):
			_, err := fmt.Sscanf(l, "QP was created, QP number=0x%x", &r.QPNum)
			must(t, err)
		case strings.HasPrefix(l, "Local LID"):
			_, err := fmt.Sscanf(l, "Local LID = 0x%x", &r.LID)
			must(t, err)
		case strings.HasPrefix(l, "gid: "):
			g = strings.TrimPrefix(l, "gid: ")
		}
	}
	parsed, err := rdma.ParseGID(g)
	must(t, err)
	r.GID = parsed
	if r.Addr == 0 || r.QPNum == 0 {
		t.Fatalf("testdata lacks the client's lines: %q", raw)
	}
	return r
}

func TestRecordCheck(t *testing.T) {
	var http Record
	if err := http.UnmarshalBinary([]byte("GET / HTTP/1.1\r\nHost: 10.9.0.1:198")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    Record
		want string
	}{
		{http, "wider than 24 bits"},
		{Record{QPNum: 1}, "management QP"},
		{Record{Addr: 0x55d0c0de0000, RKey: 0x1234, QPNum: 0x11, GID: rdma.GID{10: 0xff, 11: 0xff, 12: 10, 15: 1}}, ""},
		{Record{QPNum: 0xffffff}, ""},
	} {
		got := ""
		if err := c.r.Check(); err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
