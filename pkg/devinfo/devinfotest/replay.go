// Package devinfotest replays captured device data as a devinfo.Source, so
// that code above pkg/cgoverbs can be tested without RDMA.
package devinfotest

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/rdmactl/rdmactl/pkg/devinfo"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Source serves the devices of Report (as `rdmactl --json devinfo`
// writes it). Fail makes single calls fail; its keys are "open DEV",
// "query_device DEV", "query_port DEV PORT", "gid DEV PORT INDEX" and
// "close DEV".
type Source struct {
	Report  *devinfo.Report
	ListErr error
	Fail    map[string]error
}

// Load reads a Report from a JSON file.
func Load(path string) (*devinfo.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r devinfo.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// DeviceList lists the report's devices.
func (s *Source) DeviceList() ([]rdma.DeviceEntry, error) {
	if s.ListErr != nil {
		return nil, s.ListErr
	}
	var out []rdma.DeviceEntry
	if s.Report != nil {
		for _, d := range s.Report.Devices {
			out = append(out, rdma.DeviceEntry{Name: d.Name, NodeGUID: d.Attr.NodeGUID})
		}
	}
	return out, nil
}

// Open opens a device of the report.
func (s *Source) Open(name string) (rdma.Device, error) {
	if err := s.Fail["open "+name]; err != nil {
		return nil, err
	}
	for i := range s.Report.Devices {
		if d := &s.Report.Devices[i]; d.Name == name {
			return &device{src: s, d: d}, nil
		}
	}
	return nil, fmt.Errorf("no device %s in the capture", name)
}

type device struct {
	src *Source
	d   *devinfo.DeviceReport
}

func (d *device) fail(format string, args ...any) error {
	return d.src.Fail[fmt.Sprintf(format, args...)]
}

func (d *device) QueryDevice() (rdma.DeviceAttr, error) {
	if err := d.fail("query_device %s", d.d.Name); err != nil {
		return rdma.DeviceAttr{}, err
	}
	return *d.d.Attr, nil
}

func (d *device) QueryPort(port uint8) (rdma.PortAttr, error) {
	if err := d.fail("query_port %s %d", d.d.Name, port); err != nil {
		return rdma.PortAttr{}, err
	}
	for _, p := range d.d.Ports {
		if p.Port == port {
			return p.Attr, nil
		}
	}
	return rdma.PortAttr{}, fmt.Errorf("no port %d of %s in the capture", port, d.d.Name)
}

func (d *device) QueryGIDEntry(port uint8, index uint32) (rdma.GIDEntry, error) {
	if err := d.fail("gid %s %d %d", d.d.Name, port, index); err != nil {
		return rdma.GIDEntry{}, err
	}
	for _, p := range d.d.Ports {
		if p.Port != port {
			continue
		}
		for _, g := range p.GIDs {
			if g.Index == index {
				return g, nil
			}
		}
	}
	return rdma.GIDEntry{}, rdma.ErrNoGID
}

func (d *device) Close() error { return d.fail("close %s", d.d.Name) }
