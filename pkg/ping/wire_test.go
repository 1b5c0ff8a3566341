package ping

import (
	"bytes"
	"testing"
)

func TestBufferInfoEncodeIsNetworkOrder(t *testing.T) {
	var got [InfoSize]byte
	BufferInfo{Addr: 0x0102030405060708, RKey: 0x11121314, Size: 64}.Encode(got[:])
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0, 0, 0, 64}
	if !bytes.Equal(got[:], want) {
		t.Fatalf("Encode = % x, want % x", got, want)
	}
}

func TestDecodeBufferInfo(t *testing.T) {
	// An advertisement as rping's client sent it in the lab (-d printed
	// "RDMA addr 558097089da0 rkey 21c0 len 64").
	p := []byte{0, 0, 0x55, 0x80, 0x97, 0x08, 0x9d, 0xa0, 0, 0, 0x21, 0xc0, 0, 0, 0, 0x40}
	got, err := DecodeBufferInfo(p)
	if err != nil {
		t.Fatal(err)
	}
	want := BufferInfo{Addr: 0x558097089da0, RKey: 0x21c0, Size: 64}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestDecodeBufferInfoRejectsOtherSizes(t *testing.T) {
	for _, n := range []int{0, 15, 17, 64} {
		if _, err := DecodeBufferInfo(make([]byte, n)); err == nil {
			t.Errorf("%d bytes: no error", n)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(make([]byte, InfoSize))
	f.Add([]byte{0, 0, 0x55, 0x80, 0x97, 0x08, 0x9d, 0xa0, 0, 0, 0x21, 0xc0, 0, 0, 0, 0x40})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, p []byte) {
		info, err := DecodeBufferInfo(p)
		if len(p) != InfoSize {
			if err == nil {
				t.Fatalf("%d bytes accepted", len(p))
			}
			return
		}
		if err != nil {
			t.Fatalf("16 bytes rejected: %v", err)
		}
		var again [InfoSize]byte
		info.Encode(again[:])
		if !bytes.Equal(again[:], p) {
			t.Fatalf("round trip: % x became % x", p, again)
		}
	})
}
