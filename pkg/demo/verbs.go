package demo

import (
	"fmt"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Port holds the ibv_port_attr fields the demo prints and uses.
type Port struct {
	State     int // IBV_PORT_* (4 = PORT_ACTIVE)
	SMLID     uint16
	LID       uint16
	LMC       uint8
	LinkLayer int // IBV_LINK_LAYER_*: 0 unspecified, 1 InfiniBand, 2 Ethernet
}

// Link layers as libibverbs numbers them.
const (
	LinkLayerUnspecified = 0
	LinkLayerInfiniBand  = 1
	LinkLayerEthernet    = 2
)

// Op is a send-queue operation.
type Op int

// The three operations the demo posts.
const (
	OpSend Op = iota
	OpRDMARead
	OpRDMAWrite
)

// Completion is one polled work completion.
type Completion struct {
	Status    uint32 // IBV_WC_* (0 = success)
	VendorErr uint32
}

// RTR are the peer-dependent values of the INIT→RTR transition; the fixed
// ones (path MTU 256, PSN 0, one outstanding read, RNR timer 0x12, hop
// limit 1) are the implementation's business.
type RTR struct {
	Port      int
	DestQPN   uint32
	DestLID   uint16
	GRH       bool // address the peer through its GID (RoCE needs it)
	DestGID   GID
	SGIDIndex int
}

// Verbs is the RDMA side of the demo. The real one wraps pkg/cgoverbs;
// tests run the whole flow over a fake.
type Verbs interface {
	DeviceNames() ([]string, error)
	Open(name string) (Device, error)
}

// Device is an open RDMA device.
type Device interface {
	QueryPort(port int) (Port, error)
	// QueryGID is ibv_query_gid: zeros for an empty entry.
	QueryGID(port, index int) (GID, error)
	// GIDTable lists the port's populated GID entries with their types.
	GIDTable(port int) ([]rdma.GIDEntry, error)
	// Setup allocates the PD, a one-entry CQ, a zeroed buffer of size
	// bytes registered for local write, remote read and remote write.
	// Failures are *SetupError.
	Setup(size int) (Endpoint, error)
	Close() error
}

// Endpoint is the demo's registered buffer and, once created, its RC QP.
type Endpoint interface {
	Buffer() []byte
	Addr() uint64
	LKey() uint32
	RKey() uint32
	// CreateQP makes an RC QP on the CQ with one WR and one SGE each way,
	// every send signalled.
	CreateQP() error
	QPNum() uint32
	ToInit(port int) error
	ToRTR(RTR) error
	ToRTS() error
	// PostRecv and PostSend use the first length bytes of the buffer.
	PostRecv(length uint32) error
	PostSend(op Op, length uint32, remoteAddr uint64, rkey uint32) error
	// Poll returns at most one completion without waiting.
	Poll() (Completion, bool, error)
	Close() error
}

// SetupStep names what Device.Setup was doing when it failed.
type SetupStep int

// Steps of Device.Setup, in order.
const (
	StepPD SetupStep = iota
	StepCQ
	StepBuffer
	StepMR
)

// SetupError is a failed Device.Setup.
type SetupError struct {
	Step SetupStep
	Err  error
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("%s: %v", [...]string{"alloc PD", "create CQ", "allocate buffer", "register MR"}[e.Step], e.Err)
}

func (e *SetupError) Unwrap() error { return e.Err }
