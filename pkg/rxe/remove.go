package rxe

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// RemoveOptions are the inputs of `rdmactl rxe remove`.
type RemoveOptions struct {
	IO     *cli.IOStreams
	JSON   bool
	Target string // an RDMA device name or the netdev of an rxe link
	Host   Host
}

// Remove deletes the Soft-RoCE link named Target, or the one on netdev Target.
func Remove(opts *RemoveOptions) error {
	h := opts.Host
	devs, err := h.Devices()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cli.Failf("reading RDMA devices: %v", err)
	}
	dev, ok := findDevice(devs, opts.Target)
	if !ok {
		dev, ok = rxeOn(devs, opts.Target)
	}
	if !ok {
		return cli.Failf("no RDMA device named %s and no rxe link on a netdev named %s (see rdmactl rxe status)", opts.Target, opts.Target)
	}
	if !dev.IsRxe() {
		return cli.Failf("%s is not a Soft-RoCE (rxe) device; rdmactl removes rxe links only", dev.Name)
	}
	if !h.CanAdminNet() {
		return cli.Failf("removing RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe remove %s)", opts.Target)
	}
	if err := h.DelLink(dev.Name); err != nil {
		if errors.Is(err, unix.EPERM) {
			return cli.Failf("removing RDMA links needs CAP_NET_ADMIN: run as root (sudo rdmactl rxe remove %s)", opts.Target)
		}
		return cli.Failf("rdma link delete %s: %v", dev.Name, err)
	}
	if opts.JSON {
		return cli.WriteJSON(opts.IO.Out, struct {
			Device  string `json:"device"`
			Netdev  string `json:"netdev"`
			Removed bool   `json:"removed"`
		}{dev.Name, dev.Parent, true})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s: removed from %s\n", dev.Name, dev.Parent)
	return err
}
