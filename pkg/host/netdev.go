package host

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"

	"github.com/vishvananda/netlink"
)

// Netdev is a network device with what rxe and doctor need of it.
type Netdev struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"` // "veth", "dummy", "device", …
	Index    int    `json:"index"`
	AdminUp  bool   `json:"admin_up"` // set up with `ip link set … up`
	OperUp   bool   `json:"oper_up"`
	State    string `json:"state"` // operstate: "up", "down", "unknown", …
	MTU      int    `json:"mtu"`
	Loopback bool   `json:"loopback"`
	// Ethernet is ARPHRD_ETHER framing, the only kind rdma_rxe runs over.
	Ethernet bool           `json:"ethernet"`
	Addrs    []netip.Prefix `json:"addrs"`
}

// IPv4 returns the device's IPv4 addresses.
func (n Netdev) IPv4() []netip.Prefix {
	var out []netip.Prefix
	for _, a := range n.Addrs {
		if a.Addr().Is4() {
			out = append(out, a)
		}
	}
	return out
}

// ErrNoNetdev is returned for a network device name that does not exist.
var ErrNoNetdev = errors.New("no such network device")

// ListNetdevs reads every network device and its addresses over rtnetlink,
// in ifindex order.
func ListNetdevs() ([]Netdev, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("listing network devices: %w", err)
	}
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("listing addresses: %w", err)
	}
	byIndex := map[int][]netip.Prefix{}
	for _, a := range addrs {
		if p, ok := prefixOf(a.IPNet); ok {
			byIndex[a.LinkIndex] = append(byIndex[a.LinkIndex], p)
		}
	}
	out := make([]Netdev, 0, len(links))
	for _, l := range links {
		at := l.Attrs()
		out = append(out, Netdev{
			Name:     at.Name,
			Kind:     l.Type(),
			Index:    at.Index,
			AdminUp:  at.Flags&net.FlagUp != 0,
			OperUp:   at.OperState == netlink.OperUp || (at.OperState == netlink.OperUnknown && at.Flags&net.FlagUp != 0),
			State:    at.OperState.String(),
			MTU:      at.MTU,
			Loopback: at.Flags&net.FlagLoopback != 0,
			Ethernet: at.EncapType == "ether",
			Addrs:    byIndex[at.Index],
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones), true
}

// FindNetdev returns the named device from list, or ErrNoNetdev.
func FindNetdev(list []Netdev, name string) (Netdev, error) {
	for _, n := range list {
		if n.Name == name {
			return n, nil
		}
	}
	return Netdev{}, fmt.Errorf("%w %q", ErrNoNetdev, name)
}
