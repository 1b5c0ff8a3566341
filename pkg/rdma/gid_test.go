package rdma

import (
	"encoding/hex"
	"net/netip"
	"testing"
)

// Expected strings are glibc's inet_ntop output on the development
// machine (Python's socket.inet_ntop calls it).
func TestFormatIPv6LikeGlibc(t *testing.T) {
	tests := []struct{ hex, want string }{
		{"00000000000000000000000000000000", "::"},
		{"00000000000000000000000000000001", "::1"},
		{"00000000000000000000ffff0a090001", "::ffff:10.9.0.1"},
		{"0000000000000000000000000a090001", "::10.9.0.1"},
		{"fe80000000000000802500fffeb50f48", "fe80::8025:ff:feb5:f48"},
		{"fd090000000000000000000000000001", "fd09::1"},
		{"00010000000000010000000000000001", "1:0:0:1::1"},
		{"00010000000000020000000000030004", "1::2:0:0:3:4"},
		{"00010002000300040005000600070008", "1:2:3:4:5:6:7:8"},
		{"00000000000000000000ffff00000001", "::ffff:0.0.0.1"},
		{"00000000000000000000000100000000", "::1:0:0"},
		{"00010000000000000000000000000000", "1::"},
		{"00000001000000000000000000000000", "0:1::"},
		{"00010000000200030004000500060007", "1:0:2:3:4:5:6:7"},
		{"00000000000200030004000500060007", "::2:3:4:5:6:7"},
	}
	for _, tt := range tests {
		var a GID
		if _, err := hex.Decode(a[:], []byte(tt.hex)); err != nil {
			t.Fatal(err)
		}
		if got := a.String(); got != tt.want {
			t.Errorf("GID(%s).String() = %q, want %q", tt.hex, got, tt.want)
		}
	}
}

func TestGIDForAndIPv4(t *testing.T) {
	v4, ok := GIDFor(netip.MustParseAddr("10.9.0.1")).IPv4()
	if !ok || v4.String() != "10.9.0.1" {
		t.Errorf("got %v %v", v4, ok)
	}
	for _, s := range []string{"fd09::1", "::10.9.0.1", "fe80::1"} {
		if v4, ok := GIDFor(netip.MustParseAddr(s)).IPv4(); ok {
			t.Errorf("%s read as IPv4 %v", s, v4)
		}
	}
	if got := GIDFor(netip.MustParseAddr("10.9.0.1")).Groups(); got != "0000:0000:0000:0000:0000:ffff:0a09:0001" {
		t.Errorf("GIDFor(10.9.0.1) = %s", got)
	}
}
