package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Counter is one named port counter.
type Counter struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// PortCounters are one port's counters as the kernel shows them.
type PortCounters struct {
	Device string `json:"device"`
	Port   int    `json:"port"`
	// HW are the driver's hw_counters, in the driver's order when read
	// over RDMA netlink (the order `rdma statistic show` prints).
	HW []Counter `json:"hw_counters"`
	// PMA are the InfiniBand port counters of counters/ (port_xmit_data &
	// co.), which real NICs have and Soft-RoCE does not.
	PMA []Counter `json:"counters,omitempty"`
}

// CounterReader is the capability of a Host that reads every port's
// counters; a Host without it has none to show.
type CounterReader interface {
	PortCounters() ([]PortCounters, error)
}

// PortCounters reads the hw counters over RDMA netlink (the driver's order,
// what iproute2 prints) and adds counters/ from sysfs; without RDMA netlink
// it reads both from sysfs.
func (systemHost) PortCounters() ([]PortCounters, error) {
	fromSysfs, sysErr := ReadSysfsCounters(ClassDir)
	ports, err := ReadNetlinkCounters()
	if err != nil {
		return fromSysfs, sysErr
	}
	for i := range ports {
		for _, s := range fromSysfs {
			if s.Device == ports[i].Device && s.Port == ports[i].Port {
				ports[i].PMA = s.PMA
			}
		}
	}
	return ports, nil
}

// lifespan is not a counter: it is how long (ms) the driver caches reads.
const hwLifespan = "lifespan"

// ReadSysfsCounters reads hw_counters/ and counters/ of every port of every
// device under dir (normally ClassDir), devices and counters by name. A
// missing dir returns fs.ErrNotExist.
func ReadSysfsCounters(dir string) ([]PortCounters, error) {
	devs, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []PortCounters
	for _, d := range devs {
		portDirs, err := os.ReadDir(filepath.Join(dir, d.Name(), "ports"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		var nums []int
		for _, pe := range portDirs {
			if n, err := strconv.Atoi(pe.Name()); err == nil {
				nums = append(nums, n)
			}
		}
		sort.Ints(nums)
		for _, n := range nums {
			pd := portDir(dir, d.Name(), n)
			pc := PortCounters{Device: d.Name(), Port: n}
			if pc.HW, err = readCounterDir(filepath.Join(pd, "hw_counters")); err != nil {
				return nil, err
			}
			if pc.PMA, err = readCounterDir(filepath.Join(pd, "counters")); err != nil {
				return nil, err
			}
			out = append(out, pc)
		}
	}
	return out, nil
}

// readCounterDir reads every counter file of dir; a missing dir has none,
// and a file the driver refuses to read (an unsupported counter) is left out.
func readCounterDir(dir string) ([]Counter, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cs []Counter
	for _, e := range entries {
		if e.IsDir() || e.Name() == hwLifespan {
			continue
		}
		v, err := readAttr(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			continue
		}
		cs = append(cs, Counter{Name: e.Name(), Value: n})
	}
	return cs, nil
}
