// Package stat is `rdmactl stat`: the ports' counters as `rdma statistic
// show` prints them, and watched live (--watch) as a table, JSON lines, a
// node_exporter textfile (--prom) and an SVG plot of the rates (--plot).
package stat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/host"
)

// Options is what `rdmactl stat` runs with.
type Options struct {
	IO     *cli.IOStreams
	Source counters.Source
	// Device (-d) and Port (-i) narrow the ports shown; empty shows all.
	Device string
	Port   string
	JSON   bool

	// Watch samples every Interval until Count samples (0: until ctx ends).
	Watch    bool
	Interval time.Duration
	Count    int
	// Redraw redraws the table in place (stdout is a terminal); otherwise
	// a watch prints one line per interval.
	Redraw bool
	// PromFile and PlotFile are rewritten at each sample.
	PromFile string
	PlotFile string
}

// Run shows the counters once, or watches them until opts.Count samples
// or until ctx ends (SIGINT), and then returns nil.
func Run(ctx context.Context, opts *Options) error {
	port := 0
	if opts.Port != "" {
		n, err := strconv.Atoi(opts.Port)
		if err != nil || n < 1 {
			return cli.Usagef("invalid port %q: -i takes a port number from 1", opts.Port)
		}
		port = n
	}
	if opts.Source == nil {
		return cli.Failf("this host cannot read RDMA port counters")
	}
	sel := selector{device: opts.Device, port: port}
	first, err := take(opts.Source, sel)
	if err != nil {
		return opts.failure(err)
	}
	if opts.Watch {
		return watch(ctx, *opts, sel, first)
	}
	if opts.PromFile != "" {
		if err := writeProm(opts.PromFile, first); err != nil {
			return cli.Failf("--prom %s: %v", opts.PromFile, err)
		}
		if !opts.JSON {
			return nil
		}
	}
	if opts.JSON {
		return cli.WriteJSON(opts.IO.Out, showDocument{Ports: portsJSON(first.Ports)})
	}
	return WriteStatistic(opts.IO.Out, first.Ports)
}

// errNoSuchPort is the selection matching no port; iproute2 says "Wrong
// device name" for an unknown device and for a port the device lacks.
type errNoSuchPort struct{ sel selector }

func (e errNoSuchPort) Error() string {
	if e.sel.port != 0 && e.sel.device != "" {
		return fmt.Sprintf("no port %d on RDMA device %q (-d, -i)", e.sel.port, e.sel.device)
	}
	if e.sel.port != 0 {
		return fmt.Sprintf("no RDMA device has a port %d (-i)", e.sel.port)
	}
	return fmt.Sprintf("no RDMA device %q (-d)", e.sel.device)
}

// failure reports a read that found nothing: in text mode in iproute2's
// words and with its exit code 1; with --json as the error document.
func (opts Options) failure(err error) error {
	var none errNoSuchPort
	if errors.As(err, &none) && !opts.JSON {
		fmt.Fprintln(opts.IO.ErrOut, "Wrong device name")
		return cli.SilentExit(cli.ExitFailed)
	}
	return cli.Failf("%v", err)
}

type selector struct {
	device string
	port   int
}

// take reads a snapshot and keeps the selected ports; a selection that
// matches none is errNoSuchPort.
func take(src counters.Source, sel selector) (counters.Snapshot, error) {
	s, err := counters.Take(src)
	if errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("no RDMA port counters: %s is missing (no RDMA core in the kernel)", host.ClassDir)
	}
	if err != nil {
		return s, fmt.Errorf("reading the port counters: %w", err)
	}
	if sel.device == "" && sel.port == 0 {
		return s, nil
	}
	var kept []host.PortCounters
	for _, p := range s.Ports {
		if (sel.device == "" || p.Device == sel.device) && (sel.port == 0 || p.Port == sel.port) {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return s, errNoSuchPort{sel}
	}
	s.Ports = kept
	return s, nil
}

// WriteStatistic prints ports as `rdma statistic show` does: one line a
// port, "link DEV/PORT " then "NAME VALUE " for each hw counter.
func WriteStatistic(w io.Writer, ports []host.PortCounters) error {
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "link %s/%d ", p.Device, p.Port)
		for _, c := range p.HW {
			fmt.Fprintf(&b, "%s %d ", c.Name, c.Value)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type showDocument struct {
	Ports []portJSON `json:"ports"`
}

type portJSON struct {
	Device string `json:"device"`
	Port   int    `json:"port"`
	// HW and PMA keep the kernel's order: what `rdma -j statistic` prints
	// and the files under hw_counters/ and counters/.
	HW  orderedCounters `json:"hw_counters"`
	PMA orderedCounters `json:"counters"`
}

func portsJSON(ports []host.PortCounters) []portJSON {
	out := make([]portJSON, len(ports))
	for i, p := range ports {
		out[i] = portJSON{Device: p.Device, Port: p.Port, HW: p.HW, PMA: p.PMA}
	}
	return out
}

// orderedCounters encodes as one JSON object, name: value, in list order.
type orderedCounters []host.Counter

func (cs orderedCounters) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(c.Name)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(c.Value, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
