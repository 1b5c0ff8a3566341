package gids

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/devinfo"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Options are the gids command's flags.
type Options struct {
	Device string // -d or the DEV operand; "" for every device
	// DeviceSource is where Device came from (-d, the operand,
	// RDMACTL_DEVICE, FILE:device), for the error when it names none.
	DeviceSource string
	Port         string // -p as given; "" for every port
	IP           string // --ip; "" to list instead
	JSON         bool

	Source devinfo.Source
	IO     *cli.IOStreams
}

// Run is `rdmactl gids`: the show_gids table with the GIDs to use marked,
// or with --ip only the index of the GID that carries that address.
func Run(_ context.Context, opts *Options) error {
	src, ios := opts.Source, opts.IO
	var port uint8
	if opts.Port != "" {
		n, err := strconv.ParseUint(opts.Port, 10, 8)
		if err != nil || n == 0 {
			return cli.Usagef("invalid port %q: -p takes a port number from 1 to 255", opts.Port)
		}
		port = uint8(n)
	}
	var ip netip.Addr
	if opts.IP != "" {
		var err error
		if ip, err = netip.ParseAddr(opts.IP); err != nil {
			return cli.Usagef("--ip %q is not an IP address (e.g. --ip 10.9.0.1)", opts.IP)
		}
	}

	entries, err := List(src, devinfo.Selection{Device: opts.Device, DeviceSource: opts.DeviceSource}, port)
	if err != nil {
		return cli.AsFailure(err)
	}

	if ip.IsValid() {
		e, err := ChooseForIP(entries, ip)
		if err != nil {
			return cli.Failf("%v", err)
		}
		if opts.JSON {
			return writeJSON(ios.Out, jsonEntryOf(e))
		}
		_, err = fmt.Fprintf(ios.Out, "%d\n", e.Index)
		return writeErr(err)
	}
	if opts.JSON {
		list := make([]jsonEntry, len(entries))
		for i, e := range entries {
			list[i] = jsonEntryOf(e)
		}
		return writeJSON(ios.Out, struct {
			GIDs []jsonEntry `json:"gids"`
		}{list})
	}
	if err := writeErr(WriteShowGIDs(ios.Out, entries)); err != nil {
		return err
	}
	// Scripts read show_gids' stdout to its last line, n_gids_found=N: the
	// advice goes to stderr, uncoloured (stderr may be a file when stdout
	// is a terminal).
	_, err = ios.ErrOut.Write(advice(entries, (&cli.IOStreams{}).Palette()))
	return err
}

// WriteTable prints the entries as show_gids does (its header, its tabs,
// its n_gids_found line), then one line for each GID to use.
func WriteTable(w io.Writer, entries []Entry, pal cli.Palette) error {
	if err := WriteShowGIDs(w, entries); err != nil {
		return err
	}
	_, err := w.Write(advice(entries, pal))
	return err
}

// WriteShowGIDs prints the entries as show_gids does: its header, its
// tabs, its n_gids_found line last.
func WriteShowGIDs(w io.Writer, entries []Entry) error {
	b := []byte("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n" +
		"---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n")
	for _, e := range entries {
		if v4, ok := e.GID.IPv4(); ok {
			b = fmt.Appendf(b, "%s\t%d\t%d\t%s\t%s  \t%s\t%s\n", e.Device, e.Port, e.Index, e.GID.Groups(), v4, e.Version(), e.Netdev)
		} else {
			b = fmt.Appendf(b, "%s\t%d\t%d\t%s\t\t\t%s\t%s\n", e.Device, e.Port, e.Index, e.GID.Groups(), e.Version(), e.Netdev)
		}
	}
	b = fmt.Appendf(b, "n_gids_found=%d\n", len(entries))
	_, err := w.Write(b)
	return err
}

// advice names each GID to use, or says why there is none.
func advice(entries []Entry, pal cli.Palette) []byte {
	var b []byte
	recommended, roce := false, false
	for _, e := range entries {
		if e.Recommended() {
			v4, _ := e.GID.IPv4()
			b = fmt.Appendf(b, "%s %s port %d index %d (RoCE v2, %s, %s): use -g %d\n",
				pal.Green("recommended:"), e.Device, e.Port, e.Index, v4, e.Netdev, e.Index)
			recommended = true
		}
		roce = roce || e.Version() != ""
	}
	if roce && !recommended {
		b = fmt.Appendf(b, "%s no RoCE v2 GID has an IPv4 address: add one to the netdev of the RDMA device\n",
			pal.Yellow("note:"))
	}
	return b
}

// jsonEntry is an Entry as --json shows it.
type jsonEntry struct {
	Device      string       `json:"device"`
	Port        uint8        `json:"port"`
	Index       uint32       `json:"gid_index"`
	GID         rdma.GID     `json:"gid"`
	IPv4        string       `json:"ipv4,omitempty"`
	Type        rdma.GIDType `json:"gid_type"`
	Netdev      string       `json:"netdev,omitempty"`
	Recommended bool         `json:"recommended"`
}

func jsonEntryOf(e Entry) jsonEntry {
	j := jsonEntry{Device: e.Device, Port: e.Port, Index: e.Index, GID: e.GID, Type: e.Type,
		Netdev: e.Netdev, Recommended: e.Recommended()}
	if v4, ok := e.GID.IPv4(); ok {
		j.IPv4 = v4.String()
	}
	return j
}

func writeJSON(w io.Writer, v any) error { return writeErr(cli.WriteJSON(w, v)) }

func writeErr(err error) error {
	if err != nil {
		return cli.Failf("writing output: %v", err)
	}
	return nil
}
