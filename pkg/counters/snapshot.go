package counters

import (
	"time"

	"github.com/rdmactl/rdmactl/pkg/host"
)

// Source reads every port's counters: host.System() through its
// host.CounterReader capability, or a fake.
type Source interface {
	PortCounters() ([]host.PortCounters, error)
}

// Snapshot is every port's counters at one moment.
type Snapshot struct {
	Time  time.Time
	Ports []host.PortCounters
}

// Take reads a snapshot from src.
func Take(src Source) (Snapshot, error) {
	ports, err := src.PortCounters()
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Time: time.Now(), Ports: ports}, nil
}

// Change is how far one counter of one port moved between two snapshots.
type Change struct {
	Device  string `json:"device"`
	Port    int    `json:"port"`
	Counter string `json:"counter"`
	Value   uint64 `json:"value"`
	Delta   uint64 `json:"delta"`
}

// Link names the port as iproute2 does: rxe0/1.
func (c Change) Link() string { return link(c.Device, c.Port) }

// Diff lists every counter of after with its change since before, in
// after's order (hw counters, then counters/). A counter that went down
// was reset (its device re-created): its whole value is the change. A port
// or counter before lacks moved from zero.
func Diff(before, after Snapshot) []Change {
	old := map[key]uint64{}
	for _, p := range before.Ports {
		for _, c := range all(p) {
			old[key{p.Device, p.Port, c.Name}] = c.Value
		}
	}
	var out []Change
	for _, p := range after.Ports {
		for _, c := range all(p) {
			d := c.Value
			if prev, ok := old[key{p.Device, p.Port, c.Name}]; ok && prev <= c.Value {
				d = c.Value - prev
			}
			out = append(out, Change{Device: p.Device, Port: p.Port, Counter: c.Name, Value: c.Value, Delta: d})
		}
	}
	return out
}

// Moved keeps the changes that are not zero.
func Moved(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if c.Delta != 0 {
			out = append(out, c)
		}
	}
	return out
}

type key struct {
	dev  string
	port int
	name string
}

func all(p host.PortCounters) []host.Counter {
	return append(append([]host.Counter(nil), p.HW...), p.PMA...)
}

// FromHost returns h's counters when h can read them, else nil.
func FromHost(h host.Host) Source {
	if r, ok := h.(host.CounterReader); ok {
		return r
	}
	return nil
}
