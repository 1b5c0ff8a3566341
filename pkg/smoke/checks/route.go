// Package checks holds the checks `rdmactl smoke` runs on a real host: the
// doctor's local checks, and per peer its route and GID, an rping-protocol
// ping and the RC demo exchange against `rdmactl serve`. pkg/smoke runs
// and reports them; this package is where they touch the system.
package checks

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/host"
)

// Route is how this host reaches a peer over RoCE.
type Route struct {
	Peer   netip.Addr // the peer's address (its name resolved)
	Src    netip.Addr // this host's source address toward it
	Netdev string     // the egress netdev
	Local  bool       // the peer is an address of this host (loopback)
	host.RoCEPort
}

// System is what route resolution reads from the host; tests fake it.
type System struct {
	// Lookup resolves a peer name to IPv4 addresses.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Netdevs lists the netdevs with their addresses.
	Netdevs func() ([]host.Netdev, error)
	// RouteTo asks the kernel for the egress netdev and source address.
	RouteTo func(dst netip.Addr) (netdev string, src netip.Addr, err error)
	// RoCEPort finds the ACTIVE port carrying ip as a RoCE v2 GID,
	// looking at the devices on netdev first; HasRDMA tells whether any
	// RDMA port sits on netdev.
	RoCEPort func(netdev string, ip netip.Addr) (host.RoCEPort, bool)
	HasRDMA  func(netdev string) bool
	// FirstRoCEAddr is the address a loopback run uses.
	FirstRoCEAddr func() (netip.Addr, bool)
}

// HostSystem reads this host.
func HostSystem() System {
	return System{
		Lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
		},
		Netdevs: host.ListNetdevs,
		RouteTo: routeTo,
		RoCEPort: func(netdev string, ip netip.Addr) (host.RoCEPort, bool) {
			return host.FindRoCEPort(host.ClassDir, netdev, ip)
		},
		HasRDMA:       func(netdev string) bool { return host.HasRDMA(host.ClassDir, netdev) },
		FirstRoCEAddr: func() (netip.Addr, bool) { return host.FirstRoCEAddr(host.ClassDir) },
	}
}

// routeTo is `ip route get`: it sends nothing.
func routeTo(dst netip.Addr) (string, netip.Addr, error) {
	routes, err := netlink.RouteGet(dst.AsSlice())
	if err == nil && len(routes) == 0 {
		err = unix.ENETUNREACH
	}
	if err != nil {
		return "", netip.Addr{}, err
	}
	link, err := netlink.LinkByIndex(routes[0].LinkIndex)
	if err != nil {
		return "", netip.Addr{}, err
	}
	src, _ := netip.AddrFromSlice(routes[0].Src)
	return link.Attrs().Name, src.Unmap(), nil
}

// RouteError is a failed resolution with the fix.
type RouteError struct {
	Msg, Hint string
}

func (e *RouteError) Error() string { return e.Msg }

// ResolveRoute finds how this host reaches peer: its address, the egress
// netdev and source address (as rdma_resolve_addr would pick them), and
// the RDMA port and RoCE v2 GID index that carry the source address (the
// GID `-g auto` picks).
func (s System) ResolveRoute(ctx context.Context, peer string) (Route, error) {
	var r Route
	ip, err := netip.ParseAddr(peer)
	if err != nil {
		ips, lerr := s.Lookup(ctx, peer)
		if lerr != nil || len(ips) == 0 {
			return r, &RouteError{Msg: fmt.Sprintf("cannot resolve %s: %v", peer, lerr),
				Hint: "check the name (getent hosts " + peer + ") or give the peer's IP address"}
		}
		ip = ips[0]
	}
	r.Peer = ip.Unmap()
	if !r.Peer.Is4() {
		return r, &RouteError{Msg: fmt.Sprintf("%s is not an IPv4 address", r.Peer),
			Hint: "smoke checks RoCE v2 over IPv4 (the RC demo speaks IPv4 only); give the peer's IPv4 address"}
	}
	netdevs, _ := s.Netdevs()
	loopback := map[string]bool{}
	for _, nd := range netdevs {
		loopback[nd.Name] = nd.Loopback
		for _, p := range nd.Addrs {
			if p.Addr() == r.Peer {
				r.Local, r.Netdev, r.Src = true, nd.Name, r.Peer
			}
		}
	}
	if !r.Local {
		r.Netdev, r.Src, err = s.RouteTo(r.Peer)
		if err != nil {
			return r, &RouteError{Msg: fmt.Sprintf("no route to %s: %v", r.Peer, err),
				Hint: "add a route to " + r.Peer.String() + ", or an address in its subnet on an RDMA netdev"}
		}
	}
	port, ok := s.RoCEPort(r.Netdev, r.Src)
	if !ok {
		hint := "rdmactl rxe add " + r.Netdev
		switch {
		case loopback[r.Netdev]:
			// rxe add refuses a loopback netdev: nothing RDMA runs there.
			hint = r.Netdev + " is a loopback netdev, which carries no RDMA device: give the peer's address on an RDMA netdev (`rdmactl gids` lists this host's), or no PEER for a loopback run"
		case s.HasRDMA(r.Netdev):
			hint = "the RDMA device on " + r.Netdev + " has no RoCE v2 GID for " + r.Src.String() + " (see `rdmactl gids` and `rdmactl doctor`)"
		}
		return r, &RouteError{
			Msg:  fmt.Sprintf("%s is reached via %s from %s, which no ACTIVE RDMA port carries as a RoCE v2 GID", r.Peer, r.Netdev, r.Src),
			Hint: hint,
		}
	}
	r.RoCEPort = port
	return r, nil
}

// String is the route in one line, for the check's message.
func (r Route) String() string {
	via := fmt.Sprintf("via %s from %s", r.Netdev, r.Src)
	if r.Local {
		via = "local on " + r.Netdev
	}
	return fmt.Sprintf("%s %s: %s port %d, GID index %d", r.Peer, via, r.Device, r.Port, r.GIDIndex)
}
