package devinfo

import (
	"errors"
	"fmt"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Selection is which devices and ports to query, as -d and -i choose them.
type Selection struct {
	Device string // "" for every device, unless Named
	// Named says -d was given: an empty name is then a name, which no
	// device has (ibv_devinfo -d '').
	Named bool
	// DeviceSource is where Device came from (-d, RDMACTL_DEVICE,
	// FILE:device), for rdmactl's error when it names no device.
	DeviceSource string
	Port         uint8 // 0 for every port
	GIDs         bool  // walk the rdma.GID tables (ibv_devinfo -v)
}

// Report is what one ibv_devinfo run finds, in the order it prints it.
type Report struct {
	Devices []DeviceReport `json:"devices"`
}

// DeviceReport is one device. When a query fails part-way, what was read
// before the failure is kept, because ibv_devinfo has printed it by then.
type DeviceReport struct {
	Name  string           `json:"device"`
	Attr  *rdma.DeviceAttr `json:"attributes,omitempty"`
	Ports []PortReport     `json:"ports"`

	errs   []*ToolError
	status int  // the value ibv_devinfo ORs into its exit status
	cutOff bool // the last port's rdma.GID list stopped on an error
}

// PortReport is one port with its populated GIDs (when GIDs were asked for).
type PortReport struct {
	Port uint8           `json:"port"`
	Attr rdma.PortAttr   `json:"attributes"`
	GIDs []rdma.GIDEntry `json:"gids"`
}

// ToolError is a failure with two wordings: Line is what ibv_devinfo
// writes to stderr (byte for byte, newline included when it writes one)
// and Status the exit status it adds; Error() is rdmactl's own wording.
type ToolError struct {
	Line   string
	Status int
	Msg    string
	// Err, when set, is the rdmactl error behind Msg (its exit code).
	Err error
}

func (e *ToolError) Error() string { return e.Msg }

func (e *ToolError) Unwrap() error { return e.Err }

// Err is the first failure met on the device, nil when it was read whole.
func (d *DeviceReport) Err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return d.errs[0]
}

// errNoDevices is the failure for an empty device list.
func errNoDevices() *ToolError {
	return &ToolError{Line: "No IB devices found\n", Status: -1,
		Msg: "no RDMA devices found (load a driver, or create a Soft-RoCE device with 'rdma link add')"}
}

// Collect queries what ibv_devinfo would print for sel, in its order and
// with its rules for stopping. The error is a *ToolError for failures
// before any device is read: the device list, an unknown name, no devices.
func Collect(src Source, sel Selection) (*Report, error) {
	list, err := listDevices(src)
	if err != nil {
		return nil, err
	}
	if sel.Device != "" || sel.Named {
		for _, d := range list {
			if d.Name == sel.Device {
				return &Report{Devices: []DeviceReport{collectDevice(src, d.Name, sel)}}, nil
			}
		}
		unknown := cli.UnknownDevice(sel.Device, sel.DeviceSource, deviceNames(list))
		return nil, &ToolError{Line: fmt.Sprintf("IB device '%s' wasn't found\n", sel.Device), Status: -1,
			Msg: unknown.Error(), Err: unknown}
	}
	if len(list) == 0 {
		return nil, errNoDevices()
	}
	r := &Report{}
	for _, d := range list {
		r.Devices = append(r.Devices, collectDevice(src, d.Name, sel))
	}
	return r, nil
}

func listDevices(src Source) ([]rdma.DeviceEntry, error) {
	list, err := src.DeviceList()
	if err != nil {
		return nil, &ToolError{Line: "Failed to get IB devices list: " + rdma.Perror(err) + "\n", Status: -1,
			Msg: "cannot list RDMA devices: " + err.Error()}
	}
	return list, nil
}

func deviceNames(list []rdma.DeviceEntry) []string {
	names := make([]string, len(list))
	for i, d := range list {
		names[i] = d.Name
	}
	return names
}

// collectDevice follows print_hca_cap: open, query the device, check the
// port, then each port and (verbose) its GID table.
func collectDevice(src Source, name string, sel Selection) (r DeviceReport) {
	r.Name = name
	fail := func(line string, status int, format string, args ...any) {
		r.errs = append(r.errs, &ToolError{Line: line, Status: status, Msg: name + ": " + fmt.Sprintf(format, args...)})
		r.status = status
	}

	dev, err := src.Open(name)
	if err != nil {
		fail("Failed to open device\n", 1, "cannot open: %v", err)
		return r
	}
	defer func() {
		if err := dev.Close(); err != nil {
			fail("Failed to close device", 3, "cannot close: %v", err)
		}
	}()

	attr, err := dev.QueryDevice()
	if err != nil {
		fail("Failed to query device props\n", 2, "cannot query the device: %v", err)
		return r
	}
	if sel.Port != 0 && sel.Port > attr.PhysPortCnt {
		fail("Invalid port requested for device\n", 4, "no port %d (it has %s)", sel.Port, portRange(attr.PhysPortCnt))
		return r
	}
	r.Attr = &attr
	r.Ports = []PortReport{} // JSON's lists are [] when empty, never null

	for port := uint8(1); port != 0 && port <= attr.PhysPortCnt; port++ {
		if sel.Port != 0 && port != sel.Port {
			continue
		}
		pa, err := dev.QueryPort(port)
		if err != nil {
			fail(fmt.Sprintf("Failed to query port %d props\n", port), rdma.ErrnoOf(err), "cannot query port %d: %v", port, err)
			return r
		}
		pr := PortReport{Port: port, Attr: pa, GIDs: []rdma.GIDEntry{}}
		if sel.GIDs {
			gids, err := rdma.ReadGIDs(dev, port, pa.GIDTblLen)
			pr.GIDs = gids
			if se := (*rdma.GIDSlotError)(nil); errors.As(err, &se) {
				r.Ports = append(r.Ports, pr)
				r.cutOff = true
				// ibv_query_gid returns -1 on failure.
				fail(fmt.Sprintf("Failed to query gid to port %d, index %d\n", port, se.Index), -1,
					"cannot query GID %d of port %d: %v", se.Index, port, se.Err)
				return r
			}
		}
		r.Ports = append(r.Ports, pr)
	}
	return r
}

func portRange(n uint8) string {
	switch n {
	case 0:
		return "no ports"
	case 1:
		return "only port 1"
	}
	return fmt.Sprintf("ports 1-%d", n)
}
