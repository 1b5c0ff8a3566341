package devinfo

// Source is where device data comes from: libibverbs (pkg/cgoverbs) in
// the program, captured data in tests.
type Source interface {
	// DeviceList is ibv_get_device_list. When it fails, the error's text
	// is what perror would print after the colon (strerror's words).
	DeviceList() ([]DeviceEntry, error)
	// Open opens the named device.
	Open(name string) (Device, error)
}

// Device is an open device.
type Device interface {
	// QueryDevice is ibv_query_device_ex plus the transport, board_id and
	// number of completion vectors of the device.
	QueryDevice() (DeviceAttr, error)
	// QueryPort is ibv_query_port; an error that is a syscall.Errno
	// becomes ibv_devinfo's exit status as the C return value would.
	QueryPort(port uint8) (PortAttr, error)
	// QueryGIDEntry is ibv_query_gid_ex; ErrNoGID for an empty slot.
	QueryGIDEntry(port uint8, index uint32) (GIDEntry, error)
	Close() error
}
