package perf

import "time"

// Port is what the tests need of the local port.
type Port struct {
	Active    bool
	ActiveMTU int // enum ibv_mtu: 1=256 … 5=4096
	LID       uint16
	Ethernet  bool // RoCE: QPs address each other by GID
}

// Verbs opens devices; the real one wraps pkg/cgoverbs, tests use a fake.
type Verbs interface {
	// Open opens the named device, or the first one for "".
	Open(name string) (Device, error)
}

// Device is an open RDMA device.
type Device interface {
	Name() string
	Port(port int) (Port, error)
	// GID is the port's GID at index (zeros for an empty entry).
	GID(port, index int) ([16]byte, error)
	// AutoGID picks the RoCE v2 GID of ip, or the best one when ip is nil.
	AutoGID(port int, ip []byte) (int, error)
	// MaxReads is the device's max_qp_rd_atom.
	MaxReads() (int, error)
	NewEndpoint(c EndpointConfig) (Endpoint, error)
	Close() error
}

// EndpointConfig sizes one QP and its registered buffer.
type EndpointConfig struct {
	Port    int
	BufSize int // the whole registered buffer
	TxDepth int
	RxDepth int
	Events  bool // give the CQs a completion channel (blocking waits)
}

// Connect are the attributes of the INIT→RTR→RTS transitions.
type Connect struct {
	Port     int
	MTU      int // enum ibv_mtu
	Local    Dest
	Remote   Dest
	GIDIndex int // -1: no GRH
}

// Stream is one bandwidth run by the active side: Iters operations of Size
// bytes from local offset 0 to the peer's RemoteAddr, at most TxDepth in
// flight, one completion per CQMod. With Duration set it runs for that
// long instead (Iters then bounds nothing).
type Stream struct {
	Test       Test
	Size       int
	Iters      int
	TxDepth    int
	CQMod      int
	RemoteAddr uint64
	RKey       uint32
	Duration   time.Duration
}

// PingPong is one latency run.
type PingPong struct {
	Test       Test
	Client     bool
	Size       int
	Iters      int
	RxDepth    int
	LocalOff   int // where the peer's writes land in our buffer (write_lat)
	RemoteAddr uint64
	RKey       uint32
	BusyPoll   bool
	Timeout    time.Duration
}

// Endpoint is one connected QP with its buffer, and the data paths of the
// tests over it.
type Endpoint interface {
	QPN() uint32
	RKey() uint32
	Addr() uint64 // the buffer's address
	Connect(c Connect) error
	// PostRecvs posts n receives of size bytes at offset off of the buffer.
	PostRecvs(n, off, size int) error
	// Stream runs a bandwidth test's active side.
	Stream(s Stream) (BWTiming, error)
	// Receive is send_bw's server: it takes iters messages, re-posting
	// receives, and times them.
	Receive(iters, size, off, rxDepth int, timeout time.Duration) (BWTiming, error)
	// PingPong runs a latency test and returns the post times.
	PingPong(p PingPong) ([]int64, error)
	Close() error
}
