package devinfo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Options are ibv_devinfo's flags, plus rdmactl's --json.
type Options struct {
	Device  string // -d; "" for every device, unless Named
	Named   bool   // -d was given, even as an empty name
	Port    string // -i exactly as given; "" for every port
	List    bool   // -l
	Verbose bool   // -v
	JSON    bool

	Source Source // the factory's verbs stack, or a recorded report in tests
	IO     *cli.IOStreams
}

// usage is ibv_devinfo's help text, which it prints (to stdout, exit 1)
// for a port number that is not positive. The lab runs the tool as
// "ibv_devinfo", so that is the program name it shows.
const usage = `Usage: ibv_devinfo             print the ca attributes

Options:
  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)
  -i, --ib-port=<port>   use port <port> of IB device (default all ports)
  -l, --list             print only the IB devices names
  -v, --verbose          print all the attributes of the IB device(s)
`

// Run is `rdmactl devinfo`. Without JSON it writes what ibv_devinfo
// writes, to the same streams, and ends with its exit status. With JSON it
// writes the same data as one JSON document and fails with rdmactl's own
// one-line errors and exit codes instead.
func Run(_ context.Context, opts *Options) error {
	src, out, errOut := opts.Source, opts.IO.Out, opts.IO.ErrOut
	if opts.JSON {
		return runJSON(src, *opts, out)
	}
	// stdout is a file or pipe in every comparison with the C tool, so
	// libc holds it back until exit while stderr goes out at once.
	var buf bytes.Buffer
	status := runText(src, *opts, &buf, errOut)
	if _, err := out.Write(buf.Bytes()); err != nil {
		return cli.Failf("writing output: %v", err)
	}
	if status&0xff != 0 {
		return cli.SilentExit(status & 0xff)
	}
	return nil
}

// runText follows ibv_devinfo's main and returns its exit status.
func runText(src Source, opts Options, out, errOut io.Writer) int {
	// ibv_devinfo acts on -l as soon as it reads it; rdmactl sees all
	// flags at once and lets -l win.
	if opts.List {
		list, err := listDevices(src)
		if err != nil {
			return toolFailure(errOut, err)
		}
		plural := "s"
		if len(list) == 1 {
			plural = ""
		}
		fmt.Fprintf(out, "%d HCA%s found:\n", len(list), plural)
		for _, d := range list {
			fmt.Fprintf(out, "\t%s\n", d.Name)
		}
		fmt.Fprintf(out, "\n")
		return 0
	}

	var port uint8
	if opts.Port != "" {
		// strtol into an int, then passed on as a uint8: "0x1" is 1, "1abc"
		// is 1, 256 means every port and 257 is port 1, as with the tool.
		n := int32(cStrtol(opts.Port))
		if n <= 0 {
			fmt.Fprint(out, usage)
			return 1
		}
		port = uint8(n)
	}

	r, err := Collect(src, Selection{Device: opts.Device, Named: opts.Named, Port: port, GIDs: opts.Verbose})
	if err != nil {
		return toolFailure(errOut, err)
	}
	t := &textWriter{w: out}
	status := 0
	for i := range r.Devices {
		d := &r.Devices[i]
		writeDeviceText(t, d, opts.Verbose)
		for _, e := range d.errs {
			fmt.Fprint(errOut, e.Line)
		}
		status |= d.status
	}
	return status
}

func toolFailure(errOut io.Writer, err error) int {
	var te *ToolError
	if errors.As(err, &te) {
		fmt.Fprint(errOut, te.Line)
		return te.Status
	}
	fmt.Fprintln(errOut, err)
	return -1
}

func runJSON(src Source, opts Options, out io.Writer) error {
	if opts.List {
		list, err := listDevices(src)
		if err != nil {
			return cli.Failf("%v", err)
		}
		if list == nil {
			list = []rdma.DeviceEntry{}
		}
		return writeJSON(out, deviceList{list})
	}
	var port uint8
	if opts.Port != "" {
		n, err := strconv.ParseUint(opts.Port, 0, 8)
		if err != nil || n == 0 {
			return cli.Usagef("invalid port %q: --ib-port takes a port number from 1 to 255", opts.Port)
		}
		port = uint8(n)
	}
	r, err := Collect(src, Selection{Device: opts.Device, Named: opts.Named, DeviceSource: "-d", Port: port, GIDs: true})
	if err != nil {
		return cli.AsFailure(err)
	}
	for i := range r.Devices {
		if err := r.Devices[i].Err(); err != nil {
			return cli.Failf("%v", err)
		}
	}
	return writeJSON(out, r)
}

func writeJSON(out io.Writer, v any) error {
	if err := cli.WriteJSON(out, v); err != nil {
		return cli.Failf("writing output: %v", err)
	}
	return nil
}
