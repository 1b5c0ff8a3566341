package rdma

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// GIDEntry is one populated GID table entry (struct ibv_gid_entry, with the
// netdev named rather than given by ifindex).
type GIDEntry struct {
	Index  uint32  `json:"gid_index"`
	GID    GID     `json:"gid"`
	Type   GIDType `json:"gid_type"`
	Netdev string  `json:"netdev,omitempty"`
}

// ErrNoGID is what a Device returns for an empty GID table slot.
var ErrNoGID = errors.New("GID table entry is empty")

// GID is a 16-byte GID in wire (network) order.
type GID [16]byte

// IsZero reports whether every byte is zero, i.e. the table slot is empty.
func (g GID) IsZero() bool { return g == GID{} }

// Groups is the sysfs and show_gids form: eight groups of four hex digits.
func (g GID) Groups() string {
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02x%02x", g[i], g[i+1])
	}
	return b.String()
}

// String is the GID as glibc's inet_ntop writes an IPv6 address, which is
// how ibv_devinfo prints RoCE v2 GIDs (e.g. "::ffff:10.9.0.1").
func (g GID) String() string { return formatIPv6(g) }

// Addr is the GID read as an IPv6 address.
func (g GID) Addr() netip.Addr { return netip.AddrFrom16(g) }

// MarshalText writes the GID as String does.
func (g GID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText reads an IPv6 address (the String form) or the Groups form.
func (g *GID) UnmarshalText(b []byte) error {
	a, err := netip.ParseAddr(string(b))
	if err != nil || !a.Is6() {
		return fmt.Errorf("GID %q is not an IPv6-form address", b)
	}
	*g = a.As16()
	return nil
}

// IPv4 is the address an IPv4-mapped GID (::ffff:a.b.c.d) carries.
func (g GID) IPv4() (netip.Addr, bool) {
	a := g.Addr()
	if !a.Is4In6() {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// IsLinkLocal reports a fe80::/10 GID, the entry derived from the MAC.
func (g GID) IsLinkLocal() bool { return g.Addr().IsLinkLocalUnicast() }

// Colons is the RC example's "Remote GID" form: 16 two-digit hex bytes
// separated by colons.
func (g GID) Colons() string {
	var b strings.Builder
	for i, c := range g {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02x", c)
	}
	return b.String()
}

// ParseGID reads a GID in IPv6 notation, the sysfs form included.
func ParseGID(s string) (GID, error) {
	var g GID
	err := g.UnmarshalText([]byte(s))
	return g, err
}

// GIDFor is the GID RoCE uses for ip: the address itself for IPv6, the
// IPv4-mapped form for IPv4.
func GIDFor(ip netip.Addr) GID { return ip.Unmap().As16() }

// GIDFilter says which entries a GID choice may return; nil admits all.
type GIDFilter func(GIDEntry) bool

// RoCEv2 admits RoCE v2 entries only: the GIDs that route, that every peer
// speaks, and that rdma_cm binds.
func RoCEv2(e GIDEntry) bool { return e.Type == GIDTypeRoCEv2 }

// Carries reports whether the entry's GID is the one RoCE uses for ip.
func (e GIDEntry) Carries(ip netip.Addr) bool { return e.GID == GIDFor(ip) }

// ChooseGID is the one rule for picking a GID for an address: for each of
// ips in turn, the entry admitted by accept whose GID carries it, RoCE v2
// before RoCE v1 (v2 routes, and every peer speaks it), otherwise the
// first in the order given; the first address with such an entry wins.
func ChooseGID(entries []GIDEntry, accept GIDFilter, ips ...netip.Addr) (GIDEntry, bool) {
	i := ChooseGIDIndex(len(entries), func(i int) GIDEntry { return entries[i] }, accept, ips...)
	if i < 0 {
		return GIDEntry{}, false
	}
	return entries[i], true
}

// ChooseGIDIndex is ChooseGID over n entries of any list, for lists that
// carry more than the entry (the device and port too); -1 when none
// qualifies.
func ChooseGIDIndex(n int, entry func(i int) GIDEntry, accept GIDFilter, ips ...netip.Addr) int {
	for _, ip := range ips {
		best := -1
		for i := 0; i < n; i++ {
			e := entry(i)
			if !e.Carries(ip) || (accept != nil && !accept(e)) {
				continue
			}
			if best < 0 || (RoCEv2(e) && !RoCEv2(entry(best))) {
				best = i
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}
