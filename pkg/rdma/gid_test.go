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

func TestChooseGIDFilterAndAddressOrder(t *testing.T) {
	v4 := netip.MustParseAddr("10.9.0.1")
	v4b := netip.MustParseAddr("10.9.0.7")
	entries := []GIDEntry{
		{Index: 0, GID: GIDFor(v4), Type: GIDTypeRoCEv1},
		{Index: 1, GID: GIDFor(v4b), Type: GIDTypeRoCEv1},
		{Index: 2, GID: GIDFor(v4), Type: GIDTypeRoCEv2},
	}
	tests := []struct {
		name   string
		accept GIDFilter
		ips    []netip.Addr
		want   int // -1: none
	}{
		{"v2 before v1", nil, []netip.Addr{v4}, 2},
		{"v1 when it is the only one", nil, []netip.Addr{v4b}, 1},
		{"filter refuses the only entry", RoCEv2, []netip.Addr{v4b}, -1},
		{"first address with an admitted entry wins", RoCEv2, []netip.Addr{v4b, v4}, 2},
		{"unmapped and mapped forms are one address", nil, []netip.Addr{netip.MustParseAddr("::ffff:10.9.0.7")}, 1},
		{"no address", nil, nil, -1},
	}
	for _, tt := range tests {
		e, ok := ChooseGID(entries, tt.accept, tt.ips...)
		if tt.want < 0 {
			if ok {
				t.Errorf("%s: chose %+v, want none", tt.name, e)
			}
			continue
		}
		if !ok || int(e.Index) != tt.want {
			t.Errorf("%s: chose %+v (%v), want index %d", tt.name, e, ok, tt.want)
		}
	}
}
