package rxe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// StatusOptions are the inputs of `rdmactl rxe status`.
type StatusOptions struct {
	IO   *cli.IOStreams
	JSON bool
	Host Host
}

// StatusRow is one netdev in the status table, as rxe_cfg status showed
// it: the netdev, its link, MTU and IPv4 addresses, and its rxe device.
type StatusRow struct {
	Netdev    string   `json:"netdev"`
	Link      string   `json:"-"` // operstate as sysfs spells it: "up"
	MTU       int      `json:"mtu"`
	IPv4      []string `json:"ipv4"`
	Device    string   `json:"device,omitempty"`
	PortState string   `json:"state,omitempty"` // "ACTIVE", as rdma link -j
	ActiveMTU int      `json:"active_mtu,omitempty"`
	// Persistent: the link is recorded in ConfPath (rxe add --persist).
	Persistent bool `json:"persistent,omitempty"`
}

// MarshalJSON adds the netdev's operstate as `ip -j link` spells it (UP,
// DOWN, UNKNOWN) beside the other members.
func (r StatusRow) MarshalJSON() ([]byte, error) {
	type row StatusRow // without this method
	return json.Marshal(struct {
		Netdev    string `json:"netdev"`
		Operstate string `json:"operstate"`
		row
	}{r.Netdev, strings.ToUpper(r.Link), row(r)})
}

// Status prints the table (or JSON) of netdevs and their rxe devices.
func Status(opts *StatusOptions) error {
	h := opts.Host
	netdevs, err := h.Netdevs()
	if err != nil {
		return cli.Failf("%v", err)
	}
	devs, err := h.Devices()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cli.Failf("reading RDMA devices: %v", err)
	}
	rows := StatusRows(netdevs, devs)
	markPersistent(rows, ConfPath)
	if opts.JSON {
		if rows == nil {
			rows = []StatusRow{}
		}
		return cli.WriteJSON(opts.IO.Out, struct {
			Netdevs []StatusRow `json:"netdevs"`
		}{rows})
	}
	return WriteStatus(opts.IO.Out, rows)
}

// StatusRows lists every non-loopback netdev (and any netdev carrying an
// rxe link) with its rxe device, if it has one.
func StatusRows(netdevs []Netdev, devs []Device) []StatusRow {
	rows := []StatusRow{}
	for _, nd := range netdevs {
		dev, hasRxe := rxeOn(devs, nd.Name)
		if nd.Loopback && !hasRxe {
			continue
		}
		row := StatusRow{Netdev: nd.Name, Link: nd.State, MTU: nd.MTU, IPv4: []string{}}
		for _, a := range nd.IPv4() {
			row.IPv4 = append(row.IPv4, a.Addr().String())
		}
		if hasRxe {
			row.Device = dev.Name
			if len(dev.Ports) > 0 {
				row.PortState = dev.Ports[0].State
			}
			row.ActiveMTU = ActiveMTU(nd.MTU)
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteStatus prints rows as an aligned table.
func WriteStatus(w io.Writer, rows []StatusRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NETDEV\tLINK\tMTU\tIPV4\tRDEV\tSTATE\tRMTU")
	for _, r := range rows {
		ips := strings.Join(r.IPv4, ",")
		dev, state, rmtu := r.Device, r.PortState, strconv.Itoa(r.ActiveMTU)
		if dev == "" {
			dev, state, rmtu = "-", "-", "-"
		} else if r.Persistent {
			dev += "*"
		}
		if ips == "" {
			ips = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Netdev, r.Link, r.MTU, ips, dev, state, rmtu)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writePersistentNote(w, rows)
}

// ActiveMTU is the RoCE MTU rdma_rxe gives a port on a netdev of the given
// MTU: the largest IB MTU (256…4096) that fits once the 80 bytes rxe
// reserves for Ethernet, IP, UDP and IB headers are taken off; 256 at least.
func ActiveMTU(netdevMTU int) int {
	room := netdevMTU - 80
	for _, m := range []int{4096, 2048, 1024, 512, 256} {
		if room >= m {
			return m
		}
	}
	return 256
}
