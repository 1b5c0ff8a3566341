package devinfo

import (
	"math"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Expected values are glibc's strtol(s, NULL, 0) on the development
// machine (called through Python's ctypes).
func TestCStrtolLikeGlibc(t *testing.T) {
	tests := []struct {
		s    string
		want int64
	}{
		{"1", 1}, {"0x1", 1}, {"0X1f", 31}, {"010", 8}, {"08", 0}, {"1abc", 1}, {"abc", 0}, {"", 0},
		{"  7", 7}, {" -3", -3}, {"+5", 5}, {"0x", 0}, {"0xg", 0},
		{"99999999999999999999", math.MaxInt64}, {"-99999999999999999999", math.MinInt64},
		{"4294967297", 4294967297}, {"2147483648", 2147483648}, {"0x100", 256}, {"257", 257},
	}
	for _, tt := range tests {
		if got := cStrtol(tt.s); got != tt.want {
			t.Errorf("cStrtol(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestGIDForms(t *testing.T) {
	var g rdma.GID
	if err := g.UnmarshalText([]byte("0000:0000:0000:0000:0000:ffff:0a09:0001")); err != nil {
		t.Fatal(err)
	}
	if g.String() != "::ffff:10.9.0.1" || g.Groups() != "0000:0000:0000:0000:0000:ffff:0a09:0001" {
		t.Errorf("String %q Groups %q", g.String(), g.Groups())
	}
	if err := g.UnmarshalText([]byte("10.9.0.1")); err == nil {
		t.Error("an IPv4 address was taken for a GID")
	}
}

func TestGUIDText(t *testing.T) {
	var g rdma.GUID
	if err := g.UnmarshalText([]byte("3471:66ff:fe64:c7ee")); err != nil {
		t.Fatal(err)
	}
	if g != 0x347166fffe64c7ee || g.String() != "3471:66ff:fe64:c7ee" {
		t.Errorf("got %#x %s", uint64(g), g)
	}
	for _, bad := range []string{"3471:66ff:fe64", "3471:66ff:fe64:c7ee0", "zz:0:0:0"} {
		if err := g.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Values without a name (rdma-core adds some over time) survive JSON as
// numbers, and ibv_devinfo's words for unknown values are kept in text.
func TestEnumJSONAndText(t *testing.T) {
	for _, tt := range []struct {
		v    rdma.Speed
		json string
		text string
	}{{4, `"QDR"`, "10.0 Gbps"}, {8, `"FDR10"`, "10.0 Gbps"}, {3, `3`, "invalid speed"}} {
		b, err := tt.v.MarshalJSON()
		if err != nil || string(b) != tt.json || tt.v.String() != tt.text {
			t.Errorf("%d: JSON %s text %q", tt.v, b, tt.v.String())
		}
		var back rdma.Speed
		if err := back.UnmarshalJSON(b); err != nil || back != tt.v {
			t.Errorf("%s read back as %d (%v)", b, back, err)
		}
	}
	if rdma.Width(3).String() != "invalid widthX" || rdma.PortState(0).String() != "invalid state" {
		t.Error("fallback words differ from ibv_devinfo's")
	}
	var s rdma.PortState
	if err := s.UnmarshalJSON([]byte(`"PORT_NOPE"`)); err == nil {
		t.Error("unknown name accepted")
	}
}
