package rdma

import "fmt"

// RC is what an open Device offers the RC demo (RDMA_RC_example): one
// registered buffer and one reliable-connected QP over a one-entry CQ.
// The values of the QP transitions come from the caller, which knows the
// example's constants; the adapter only binds them.
type RC interface {
	// SetupRC allocates a PD, a one-entry CQ and a zeroed buffer of size
	// bytes registered with access. Failures are *SetupError.
	SetupRC(size int, access Access) (RCEndpoint, error)
}

// RCEndpoint is the RC demo's registered buffer and, once created, its QP.
type RCEndpoint interface {
	Buffer() []byte
	Addr() uint64
	LKey() uint32
	RKey() uint32
	// CreateQP makes an RC QP on the CQ with one WR and one SGE each way,
	// every send signalled.
	CreateQP() error
	QPNum() uint32
	// ToInit moves the QP to INIT on port (P_Key index 0) with access.
	ToInit(port uint8, access Access) error
	ToRTR(RTRAttr) error
	ToRTS(RTSAttr) error
	// PostRecv and PostSend use the first length bytes of the buffer.
	PostRecv(length uint32) error
	PostSend(op SendOp, length uint32, remoteAddr uint64, rkey uint32) error
	// Poll returns at most one completion without waiting.
	Poll() (WC, bool, error)
	// Close releases in the example's order: QP, MR, buffer, CQ, PD.
	Close() error
}

// Access is a set of IBV_ACCESS_* flags.
type Access uint32

// The access flags (enum ibv_access_flags).
const (
	AccessLocalWrite  Access = 1
	AccessRemoteWrite Access = 2
	AccessRemoteRead  Access = 4
)

// SendOp is a send work request's operation.
type SendOp int

// The operations the RC demo posts.
const (
	OpSend SendOp = iota
	OpRDMARead
	OpRDMAWrite
)

// GRH addresses the peer by GID, which RoCE needs.
type GRH struct {
	DGID         GID
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
}

// RTRAttr are the values of an RC QP's INIT→RTR transition.
type RTRAttr struct {
	PathMTU         MTU
	DestQPN         uint32
	RQPSN           uint32
	MaxDestRdAtomic uint8
	MinRNRTimer     uint8
	DLID            uint16
	SL              uint8
	Port            uint8
	GRH             *GRH // nil: LID routing only
}

// RTSAttr are the values of an RC QP's RTR→RTS transition.
type RTSAttr struct {
	Timeout     uint8
	RetryCnt    uint8
	RNRRetry    uint8
	SQPSN       uint32
	MaxRdAtomic uint8
}

// SetupStep names what SetupRC was doing when it failed.
type SetupStep int

// Steps of SetupRC, in order.
const (
	StepPD SetupStep = iota
	StepCQ
	StepBuffer
	StepMR
)

// SetupError is a failed SetupRC.
type SetupError struct {
	Step SetupStep
	Err  error
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("%s: %v", [...]string{"alloc PD", "create CQ", "allocate buffer", "register MR"}[e.Step], e.Err)
}

func (e *SetupError) Unwrap() error { return e.Err }
