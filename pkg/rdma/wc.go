package rdma

import "fmt"

// WCStatus is a work completion status (enum ibv_wc_status).
type WCStatus uint32

// The statuses rdmactl tells apart; the rest are only printed.
const (
	WCSuccess      WCStatus = 0
	WCLocLenErr    WCStatus = 1
	WCLocQPOpErr   WCStatus = 2
	WCLocProtErr   WCStatus = 4
	WCWRFlushErr   WCStatus = 5
	WCRemInvReqErr WCStatus = 9
	WCRemAccessErr WCStatus = 10
	WCRemOpErr     WCStatus = 11
	WCRetryExcErr  WCStatus = 12
	WCRNRRetryErr  WCStatus = 13
)

// wcStatusTexts is ibv_wc_status_str's table (rdma-core 44).
var wcStatusTexts = [...]string{
	"success", "local length error", "local QP operation error",
	"local EE context operation error", "local protection error",
	"Work Request Flushed Error", "memory management operation error",
	"bad response error", "local access error", "remote invalid request error",
	"remote access error", "remote operation error",
	"transport retry counter exceeded", "RNR retry counter exceeded",
	"local RDD violation error", "remote invalid RD request", "aborted error",
	"invalid EE context number", "invalid EE context state", "fatal error",
	"response timeout error", "general error", "TM error", "TM software rendezvous",
}

// String is libibverbs' text for the status, e.g. "transport retry counter exceeded".
func (s WCStatus) String() string {
	if int(s) < len(wcStatusTexts) {
		return wcStatusTexts[s]
	}
	return "unknown"
}

// WCOpcode says what a completion completed (enum ibv_wc_opcode).
type WCOpcode uint32

// The opcodes of the operations rdmactl posts.
const (
	WCSend      WCOpcode = 0
	WCRDMAWrite WCOpcode = 1
	WCRDMARead  WCOpcode = 2
	WCRecv      WCOpcode = 128
)

func (o WCOpcode) String() string {
	switch o {
	case WCSend:
		return "SEND"
	case WCRDMAWrite:
		return "RDMA_WRITE"
	case WCRDMARead:
		return "RDMA_READ"
	case WCRecv:
		return "RECV"
	case WCCompSwap:
		return "COMP_SWAP"
	case WCFetchAdd:
		return "FETCH_ADD"
	case WCRecvRDMAWithImm:
		return "RECV_RDMA_WITH_IMM"
	}
	return fmt.Sprintf("opcode(%d)", uint32(o))
}

// WC is one work completion. Imm is the immediate in host order, valid
// when HasImm.
type WC struct {
	WRID      uint64
	Status    WCStatus
	Opcode    WCOpcode
	VendorErr uint32
	ByteLen   uint32
	Imm       uint32
	HasImm    bool
	QPNum     uint32 // the local QP the work was on
}

// DidNotFit says whether a receive failed as one that a message did not
// fit does: a local length error by the spec; rxe says a local QP
// operation error when the copy overruns the receive, and a remote
// invalid request when its length check does. Only where the receives
// are well formed and the peer sends nothing but sends is that all it
// can mean.
func (s WCStatus) DidNotFit() bool {
	return s == WCLocLenErr || s == WCLocQPOpErr || s == WCRemInvReqErr
}
