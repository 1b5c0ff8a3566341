package rdma

// QPInitAttr makes a QP (struct ibv_qp_init_attr): its type, its CQs, the
// SRQ its receives come from (nil: its own receive queue) and its sizes.
type QPInitAttr struct {
	Type   QPType
	SendCQ CQ
	RecvCQ CQ
	SRQ    SRQ
	Cap    QPCap
}

// InitAttr are the values of the RESET→INIT transition. RC and UC QPs
// take Access (remote rights), UD QPs QKey.
type InitAttr struct {
	Port      uint8
	PKeyIndex uint16
	Access    Access
	QKey      uint32
}

// GRH addresses the peer by GID, which RoCE needs.
type GRH struct {
	DGID         GID
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
}

// RTRAttr are the values of the INIT→RTR transition.
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

// RTSAttr are the values of the RTR→RTS transition.
type RTSAttr struct {
	Timeout     uint8
	RetryCnt    uint8
	RNRRetry    uint8
	SQPSN       uint32
	MaxRdAtomic uint8
}

// The transitions by QP type: RC takes every field of RTRAttr and
// RTSAttr; UC the path (PathMTU, DestQPN, RQPSN and the address) and
// SQPSN; UD only SQPSN, its peers being named by each send's UDDest.

// QPState is enum ibv_qp_state.
type QPState uint32

const (
	QPStateReset QPState = 0
	QPStateInit  QPState = 1
	QPStateRTR   QPState = 2
	QPStateRTS   QPState = 3
	QPStateSQD   QPState = 4
	QPStateSQE   QPState = 5
	QPStateErr   QPState = 6
)

func (s QPState) String() string {
	names := [...]string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}
	if int(s) < len(names) {
		return names[s]
	}
	return "unknown QP state"
}

// QPInfo is what ibv_query_qp tells of a QP: its state and the
// capabilities the device gave it (which may exceed those asked for).
type QPInfo struct {
	State QPState
	Cap   QPCap
}

// SRQAttr sizes a shared receive queue.
type SRQAttr struct {
	MaxWR  uint32
	MaxSGE uint32
}

// SRQ is a shared receive queue: the receives of the QPs made with it.
type SRQ interface {
	// PostRecv posts one receive scattered over sges.
	PostRecv(id uint64, sges ...SGE) error
	Close() error
}

// The opcodes of completions of atomics and of writes with immediate.
const (
	WCCompSwap        WCOpcode = 3
	WCFetchAdd        WCOpcode = 4
	WCRecvRDMAWithImm WCOpcode = 129
)

// GRHSize is the Global Route Header a UD receive finds in front of its
// data: receive buffers of UD QPs are that much longer than the message.
const GRHSize = 40

// VerbsDevice is implemented by devices whose verbs resources (PDs, CQs,
// QPs) a program makes itself rather than through a command's endpoint.
type VerbsDevice interface {
	// VerbsContext is the device's resource factory, valid until the
	// device is closed.
	VerbsContext() Context
}
