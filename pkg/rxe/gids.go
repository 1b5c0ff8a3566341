package rxe

import (
	"net/netip"

	"github.com/rdmactl/rdmactl/pkg/gids"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// RoCEv2GID returns the port's RoCE v2 GID that carries IPv4 address a.
func (p Port) RoCEv2GID(a netip.Addr) (GID, bool) {
	for _, g := range p.GIDs {
		if ip, ok := g.IPv4(); ok && g.IsRoCEv2() && ip == a {
			return g, true
		}
	}
	return GID{}, false
}

// ChooseGID picks the GID index rdma_cm and the RC demo should use on port
// p: the RoCE v2 entry of the netdev's first IPv4 address that has one.
func ChooseGID(p Port, nd Netdev) (GID, bool) {
	for _, a := range nd.IPv4() {
		if g, ok := p.RoCEv2GID(a.Addr()); ok {
			return g, true
		}
	}
	return GID{}, false
}

// showGIDs turns the port's GIDs into pkg/gids entries, to print them as
// `rdmactl gids` (and show_gids) do. sysfs names the type "RoCE v2" or
// "IB/RoCE v1", the latter meaning RoCE v1 on an Ethernet port.
func (p Port) showGIDs(device string) []gids.Entry {
	out := make([]gids.Entry, 0, len(p.GIDs))
	for _, g := range p.GIDs {
		typ := rdma.GIDTypeIB
		switch {
		case g.IsRoCEv2():
			typ = rdma.GIDTypeRoCEv2
		case p.LinkLayer == "Ethernet":
			typ = rdma.GIDTypeRoCEv1
		}
		out = append(out, gids.Entry{Device: device, Port: uint8(p.Num), GIDEntry: rdma.GIDEntry{
			Index: uint32(g.Index), GID: g.Addr.As16(), Type: typ, Netdev: g.Netdev,
		}})
	}
	return out
}
