// Package gids lists the populated GIDs of RDMA devices in the layout of
// the vendor show_gids script, marks the ones to use, and chooses the GID
// that carries a given IP address (for `rdmactl gids --ip` and demo's
// `-g auto`).
package gids

import (
	"fmt"
	"net/netip"

	"github.com/rdmactl/rdmactl/pkg/devinfo"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Entry is one populated GID of one device port.
type Entry struct {
	Device string
	Port   uint8
	rdma.GIDEntry
}

// Version is show_gids' VER column: "v1" or "v2" for RoCE, "" for IB.
func (e Entry) Version() string {
	switch e.Type {
	case rdma.GIDTypeRoCEv1:
		return "v1"
	case rdma.GIDTypeRoCEv2:
		return "v2"
	}
	return ""
}

// Recommended reports whether e is a GID to use: RoCE v2 with an IPv4
// address, the combination that routes and that every peer supports.
func (e Entry) Recommended() bool {
	_, v4 := e.GID.IPv4()
	return v4 && e.Type == rdma.GIDTypeRoCEv2
}

// ChooseForIP picks the entry whose GID carries ip by pkg/rdma's one rule
// (RoCE v2 before RoCE v1, otherwise the listing order: device, port,
// index).
func ChooseForIP(entries []Entry, ip netip.Addr) (Entry, error) {
	i := rdma.ChooseGIDIndex(len(entries), func(i int) rdma.GIDEntry { return entries[i].GIDEntry }, nil, ip)
	if i < 0 {
		return Entry{}, fmt.Errorf("no GID carries %s: add the address to the netdev of an RDMA device, or see 'rdmactl gids' for the GIDs there are", ip.Unmap())
	}
	return entries[i], nil
}

// List reads the populated GIDs of sel's device (every device when "")
// and port (every port when 0), in device, port, index order.
func List(src devinfo.Source, sel devinfo.Selection, port uint8) ([]Entry, error) {
	device := sel.Device
	sel.GIDs = true
	r, err := devinfo.Collect(src, sel)
	if err != nil {
		return nil, err
	}
	var out []Entry
	portFound := false
	for _, d := range r.Devices {
		if err := d.Err(); err != nil {
			return nil, err
		}
		if port != 0 && port > d.Attr.PhysPortCnt {
			continue
		}
		portFound = true
		for _, p := range d.Ports {
			if port != 0 && p.Port != port {
				continue
			}
			for _, g := range p.GIDs {
				if !g.GID.IsZero() {
					out = append(out, Entry{Device: d.Name, Port: p.Port, GIDEntry: g})
				}
			}
		}
	}
	if port != 0 && !portFound {
		if device != "" {
			return nil, fmt.Errorf("%s has no port %d (see 'rdmactl devinfo -d %s')", device, port, device)
		}
		return nil, fmt.Errorf("no RDMA device has a port %d (see 'rdmactl devinfo')", port)
	}
	return out, nil
}
