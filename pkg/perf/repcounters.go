package perf

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
)

// -W names port counters as perftest does, by their path under the
// port's sysfs directory: hw_counters/NAME (the driver's, what rdmactl stat
// lists) or counters/NAME (InfiniBand's). After each result row perftest
// prints how far each moved since it last looked, a tab before each.

// CounterChange is one -W counter's change over a result row, in --json.
type CounterChange struct {
	Bytes   uint64 `json:"bytes"`
	Counter string `json:"counter"`
	Delta   uint64 `json:"delta"`
}

// maxReportCounters bounds the list -W takes.
const maxReportCounters = 64

// ParseReportCounters checks -W's comma-separated list.
func ParseReportCounters(list string) ([]string, error) {
	names := strings.Split(list, ",")
	if len(names) > maxReportCounters {
		return nil, fmt.Errorf("-W: %d counters; give at most %d", len(names), maxReportCounters)
	}
	for _, n := range names {
		dir, name, ok := strings.Cut(n, "/")
		if !ok || (dir != "hw_counters" && dir != "counters") || name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
			return nil, fmt.Errorf("-W %q: name each counter hw_counters/NAME or counters/NAME, comma-separated ('rdmactl stat -d DEV' lists the hw counters)", n)
		}
	}
	return names, nil
}

// reportCounters reads -W's counters of one port from src.
type reportCounters struct {
	src   counters.Source
	dev   string
	port  int
	names []string
	last  []uint64
}

// openReportCounters takes the counters' first values, as perftest opens
// them before the client connects.
func openReportCounters(src counters.Source, dev string, port int, names []string) (*reportCounters, error) {
	if src == nil {
		return nil, errors.New("-W: Unable to access performance counters (this system reads no port counters)")
	}
	c := &reportCounters{src: src, dev: dev, port: port, names: names}
	var err error
	c.last, err = c.read()
	return c, err
}

func (c *reportCounters) read() ([]uint64, error) {
	ports, err := c.src.PortCounters()
	if err != nil {
		return nil, fmt.Errorf("-W: Unable to access performance counters: %w", err)
	}
	out := make([]uint64, len(c.names))
	for i, n := range c.names {
		dir, name, _ := strings.Cut(n, "/")
		found := false
		for _, p := range ports {
			if p.Device != c.dev || p.Port != c.port {
				continue
			}
			list := p.HW
			if dir == "counters" {
				list = p.PMA
			}
			for _, cn := range list {
				if cn.Name == name {
					out[i], found = cn.Value, true
				}
			}
		}
		if !found {
			return nil, cli.WithHint(fmt.Errorf("-W %s: Unable to access performance counters (%s port %d has none of that name)", n, c.dev, c.port),
				fmt.Sprintf("'rdmactl stat -d %s -i %d' lists the port's hw counters", c.dev, c.port))
		}
	}
	return out, nil
}

// print writes each counter's change since the last look, then a blank
// line, and returns the changes for the row of size bytes.
func (c *reportCounters) print(w io.Writer, size uint64) ([]CounterChange, error) {
	now, err := c.read()
	if err != nil {
		return nil, err
	}
	var out []CounterChange
	var b strings.Builder
	for i, n := range c.names {
		d := now[i]
		if now[i] >= c.last[i] { // a counter that went down was reset
			d = now[i] - c.last[i]
		}
		fmt.Fprintf(&b, "\t%s=%d\n", n, d)
		out = append(out, CounterChange{Bytes: size, Counter: n, Delta: d})
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
	c.last = now
	return out, nil
}
