package devinfo

import (
	"fmt"
	"io"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// DevicesOptions are the devices command's flags.
type DevicesOptions struct {
	JSON bool

	Source Source
	IO     *cli.IOStreams
}

// RunDevices is `rdmactl devices`: ibv_devices' table, or the same list
// as JSON.
func RunDevices(opts *DevicesOptions) error {
	src, out, errOut := opts.Source, opts.IO.Out, opts.IO.ErrOut
	list, err := src.DeviceList()
	if err != nil {
		if opts.JSON {
			return cli.Failf("cannot list RDMA devices: %v", err)
		}
		fmt.Fprintf(errOut, "Failed to get IB devices list: %s\n", rdma.Perror(err))
		return cli.SilentExit(1)
	}
	if opts.JSON {
		if list == nil {
			list = []rdma.DeviceEntry{}
		}
		return writeJSON(out, deviceList{list})
	}
	return WriteDevices(out, list)
}

// WriteDevices prints the table ibv_devices prints.
func WriteDevices(out io.Writer, list []rdma.DeviceEntry) error {
	b := fmt.Appendf(nil, "    %-16s\t   node GUID\n", "device")
	b = fmt.Appendf(b, "    %-16s\t----------------\n", "------")
	for _, d := range list {
		b = fmt.Appendf(b, "    %-16s\t%016x\n", d.Name, uint64(d.NodeGUID))
	}
	if _, err := out.Write(b); err != nil {
		return cli.Failf("writing output: %v", err)
	}
	return nil
}

// deviceList is the JSON of a device listing.
type deviceList struct {
	Devices []rdma.DeviceEntry `json:"devices"`
}
