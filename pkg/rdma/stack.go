package rdma

import "errors"

// Stack is the one seam between rdmactl's commands and the RDMA stack
// (libibverbs and librdmacm). cmd/rdmactl wires pkg/cgoverbs's Stack into
// the factory; tests hand commands a fake. Commands may declare narrower
// interfaces of their own over these types.
type Stack interface {
	Verbs
	CM
}

// Verbs lists and opens devices (libibverbs).
type Verbs interface {
	// DeviceList is ibv_get_device_list.
	DeviceList() ([]DeviceEntry, error)
	// Open opens the named device.
	Open(name string) (Device, error)
}

// Device is an open device.
type Device interface {
	// QueryDevice is ibv_query_device_ex plus the transport, board_id and
	// number of completion vectors of the device.
	QueryDevice() (DeviceAttr, error)
	// QueryPort is ibv_query_port.
	QueryPort(port uint8) (PortAttr, error)
	// QueryGIDEntry is ibv_query_gid_ex; ErrNoGID for an empty slot.
	QueryGIDEntry(port uint8, index uint32) (GIDEntry, error)
	// RC makes the RC demo's resources on this device (rc.go).
	RC
	// Perf makes rdmactl perf's endpoints on this device (perf.go).
	Perf
	Close() error
}

// GIDTable is the populated entries of port's GID table, in index order.
func GIDTable(d Device, port uint8) ([]GIDEntry, error) {
	a, err := d.QueryPort(port)
	if err != nil {
		return nil, err
	}
	var out []GIDEntry
	for i := int32(0); i < a.GIDTblLen; i++ {
		e, err := d.QueryGIDEntry(port, uint32(i))
		if errors.Is(err, ErrNoGID) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
