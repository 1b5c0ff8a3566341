package stat

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/host"
)

const promPrefix = "node_infiniband_"

func writeProm(path string, s counters.Snapshot) error {
	return cli.WriteFileAtomic(path, 0o666, func(w io.Writer) error { return WriteProm(w, s.Ports) })
}

// WriteProm writes ports' counters in the node_exporter textfile format,
// named as node_exporter's infiniband collector names them: its IB port
// counters from counters/, and the RoCE hw_counters under the name of the
// IB or mlx5 counter that counts the same thing (rxe's sent_pkts is
// port_packets_transmitted_total); a counter it has no name for is
// node_infiniband_NAME_total. Labels device and port, as the collector's.
// Where two counters of a port map to one name, the IB one (counters/) wins.
func WriteProm(w io.Writer, ports []host.PortCounters) error {
	type family struct {
		name, help string
		lines      []string
	}
	var order []*family
	families := map[string]*family{}
	seen := map[string]bool{}
	add := func(p host.PortCounters, dir string, c host.Counter) {
		info := counters.Lookup(c.Name)
		metric := info.Metric
		if metric == "" {
			metric = promName(c.Name) + "_total"
		}
		name := promPrefix + metric
		series := fmt.Sprintf(`%s{device="%s",port="%d"}`, name, labelValue(p.Device), p.Port)
		if seen[series] {
			return
		}
		seen[series] = true
		f := families[name]
		if f == nil {
			help := info.Meaning
			if help == "" {
				help = "counter"
			}
			f = &family{name: name, help: fmt.Sprintf("%s (%s/%s)", help, dir, c.Name)}
			families[name] = f
			order = append(order, f)
		}
		v := c.Value
		if c.Name == "port_xmit_data" || c.Name == "port_rcv_data" {
			v *= 4 // counted in 4-byte words, exported in bytes
		}
		f.lines = append(f.lines, fmt.Sprintf("%s %d", series, v))
	}
	for _, p := range ports {
		for _, c := range p.PMA {
			add(p, "counters", c)
		}
		for _, c := range p.HW {
			add(p, "hw_counters", c)
		}
	}
	var b strings.Builder
	for _, f := range order {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", f.name, helpText(f.help), f.name)
		for _, l := range f.lines {
			b.WriteString(l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// promName makes a counter's name a valid metric name part.
func promName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func helpText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func labelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
