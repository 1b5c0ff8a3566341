package rdma

import (
	"errors"
	"fmt"
)

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
	Close() error
}

// GIDTableReader is implemented by devices that read a port's whole GID
// table in one call (ibv_query_gid_table) rather than slot by slot.
type GIDTableReader interface {
	// ReadGIDTable is the populated entries of port's table of tblLen
	// slots, in index order.
	ReadGIDTable(port uint8, tblLen int32) ([]GIDEntry, error)
}

// GIDSlotError is a GID slot that could not be read (not an empty one).
type GIDSlotError struct {
	Port  uint8
	Index int32
	Err   error
}

func (e *GIDSlotError) Error() string {
	return fmt.Sprintf("cannot query GID %d of port %d: %v", e.Index, e.Port, e.Err)
}

func (e *GIDSlotError) Unwrap() error { return e.Err }

// GIDTable is the populated entries of port's GID table, in index order.
func GIDTable(d Device, port uint8) ([]GIDEntry, error) {
	a, err := d.QueryPort(port)
	if err != nil {
		return nil, err
	}
	return ReadGIDs(d, port, a.GIDTblLen)
}

// ReadGIDs is the populated entries of port's GID table of tblLen slots,
// in index order: in one call where the device can, else (or when that
// call fails, as on kernels without it) slot by slot, as ibv_devinfo
// does. A slot that cannot be read ends it with a *GIDSlotError and the
// entries before that slot.
func ReadGIDs(d Device, port uint8, tblLen int32) ([]GIDEntry, error) {
	if r, ok := d.(GIDTableReader); ok {
		if t, err := r.ReadGIDTable(port, tblLen); err == nil {
			return t, nil
		}
	}
	out := []GIDEntry{}
	for i := int32(0); i < tblLen; i++ {
		e, err := d.QueryGIDEntry(port, uint32(i))
		if errors.Is(err, ErrNoGID) {
			continue
		}
		if err != nil {
			return out, &GIDSlotError{Port: port, Index: i, Err: err}
		}
		out = append(out, e)
	}
	return out, nil
}
