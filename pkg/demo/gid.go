package demo

import (
	"fmt"
	"net/netip"
	"strings"
)

// GID is a 16-byte RDMA global identifier, in wire (network) order.
type GID [16]byte

// IPv4 is the address the original prints for a GID: its last four bytes,
// whatever kind of GID it is (a link-local GID gives a meaningless address,
// as the original shows too).
func (g GID) IPv4() netip.Addr {
	return netip.AddrFrom4([4]byte(g[12:16]))
}

// Colons formats g as the original's "Remote GID" line does: 16 two-digit
// hex bytes separated by colons.
func (g GID) Colons() string {
	var sb strings.Builder
	for i, b := range g {
		if i > 0 {
			sb.WriteByte(':')
		}
		fmt.Fprintf(&sb, "%02x", b)
	}
	return sb.String()
}

// String is the IPv6 notation rdmactl uses elsewhere (::ffff:10.9.0.1).
func (g GID) String() string { return netip.AddrFrom16(g).String() }

// IsZero reports an unset GID (what a peer sends without -g).
func (g GID) IsZero() bool { return g == GID{} }

// IsLinkLocal reports a fe80::/10 GID, the entry derived from the MAC.
func (g GID) IsLinkLocal() bool { return netip.AddrFrom16(g).IsLinkLocalUnicast() }

// IsIPv4 reports an IPv4-mapped GID (::ffff:a.b.c.d).
func (g GID) IsIPv4() bool { return netip.AddrFrom16(g).Is4In6() }

// ParseGID parses a GID in IPv6 notation, including the kernel's sysfs
// form (eight groups of four hex digits).
func ParseGID(s string) (GID, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return GID{}, fmt.Errorf("not a GID: %q", s)
	}
	return GID(a.As16()), nil
}
