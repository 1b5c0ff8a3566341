package devinfo

import "github.com/rdmactl/rdmactl/pkg/rdma"

// Source is where device data comes from: libibverbs (pkg/cgoverbs) in
// the program, captured data in tests.
type Source interface {
	// DeviceList is ibv_get_device_list. When it fails, the error's text
	// is what perror would print after the colon (strerror's words).
	DeviceList() ([]rdma.DeviceEntry, error)
	// Open opens the named device.
	Open(name string) (Device, error)
}

// Device is an open device.
type Device interface {
	// QueryDevice is ibv_query_device_ex plus the transport, board_id and
	// number of completion vectors of the device.
	QueryDevice() (rdma.DeviceAttr, error)
	// QueryPort is ibv_query_port; an error that is a syscall.Errno
	// becomes ibv_devinfo's exit status as the C return value would.
	QueryPort(port uint8) (rdma.PortAttr, error)
	// QueryGIDEntry is ibv_query_gid_ex; ErrNoGID for an empty slot.
	QueryGIDEntry(port uint8, index uint32) (rdma.GIDEntry, error)
	Close() error
}
