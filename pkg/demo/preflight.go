package demo

import (
	"slices"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// preflight checks, before any TCP wait, what would otherwise surface only
// after a peer connected: that there is a device at all, the device, the
// port, the GID index, and RoCE without a GID index (where the original
// would go on and fail at RTR with no word about why). A server started
// on a host without RDMA, or with a typo, fails at once instead of
// waiting for a client.
func preflight(opts Options) error {
	list, err := opts.RDMA.DeviceList()
	if err != nil {
		return cli.Failf("cannot list RDMA devices (%v): run 'rdmactl doctor' to see why", err)
	}
	if len(list) == 0 {
		return cli.Failf("no RDMA device: libibverbs lists none; run 'rdmactl doctor' to see why and what to do")
	}
	names := make([]string, len(list))
	for i, d := range list {
		names[i] = d.Name
	}
	name := opts.Device
	if name == "" {
		name = names[0]
	}
	if !slices.Contains(names, name) {
		return cli.UnknownDevice(name, opts.DeviceSource, names)
	}
	dev, err := opts.RDMA.Open(name)
	if err != nil {
		return nil // the original's flow reports it in its words
	}
	defer dev.Close()
	p, err := dev.QueryPort(uint8(opts.IBPort))
	if err != nil {
		return cli.Usagef("%s has no port %d (see 'rdmactl devinfo -d %s')", name, opts.IBPort, name)
	}
	if opts.GRH {
		if g, err := queryGID(dev, opts.IBPort, opts.GIDIndex); err != nil || g.IsZero() {
			return cli.Usagef("%s port %d has no GID at index %d: pick one from 'rdmactl gids -d %s', or -g auto", name, opts.IBPort, opts.GIDIndex, name)
		}
	}
	if !opts.GRH && !opts.GIDAuto && p.LinkLayer == rdma.LinkLayerEthernet {
		return cli.Usagef("%s port %d is RoCE (link layer Ethernet): the QPs must address each other by GID, so give a GID index: -g auto, or -g N from 'rdmactl gids -d %s'", name, opts.IBPort, name)
	}
	return nil
}
