package rdma

import (
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// CM is the connection manager side of the stack (librdmacm): what rping
// and its peers need to find each other and connect an RC queue pair.
type CM interface {
	// LookupHost resolves name as getaddrinfo(name, NULL, NULL) does and
	// returns its first answer; an IPv6 scope id becomes a numeric zone.
	// Its errors are *LookupError.
	LookupHost(name string) (netip.Addr, error)
	// CreateEventChannel is rdma_create_event_channel.
	CreateEventChannel() (EventChannel, error)
}

// LookupError is a failed getaddrinfo: Msg is gai_strerror's text and
// Code its (negative) EAI_* value.
type LookupError struct {
	Code int
	Msg  string
}

func (e *LookupError) Error() string { return e.Msg }

// ErrTimeout is what a wait returns when its timeout passed.
var ErrTimeout error = syscall.ETIMEDOUT

// EventChannel delivers the CM events of the ids created on it or
// migrated to it (struct rdma_event_channel).
type EventChannel interface {
	// CreateID is rdma_create_id in the TCP port space.
	CreateID() (CMID, error)
	// GetEvent waits at most timeout (negative: forever) for the next
	// event and acknowledges it; ErrTimeout when none came.
	GetEvent(timeout time.Duration) (CMEvent, error)
	// Close destroys the channel; close or migrate its ids first.
	Close() error
}

// CMID is an rdma_cm identifier: one side of one connection, or a
// listener. Its QP methods act on the device the id is bound to.
type CMID interface {
	// ResolveAddr starts resolving dst (from src when src is valid);
	// ADDR_RESOLVED or ADDR_ERROR follows.
	ResolveAddr(src netip.Addr, dst netip.AddrPort, timeout time.Duration) error
	// ResolveRoute starts route resolution; ROUTE_RESOLVED or ROUTE_ERROR follows.
	ResolveRoute(timeout time.Duration) error
	// Bind binds a local address and port (the unspecified address: all).
	Bind(addr netip.AddrPort) error
	// Listen starts taking connect requests.
	Listen(backlog int) error
	// Migrate moves the id's future events to ch.
	Migrate(ch EventChannel) error
	// Connect and Accept send a connect request or its reply; nil uses
	// librdmacm's defaults.
	Connect(p *ConnParam) error
	Accept(p *ConnParam) error
	// Establish completes a client connection whose QP the program moved
	// to RTS itself.
	Establish() error
	// Disconnect tears the connection down; both sides see DISCONNECTED.
	Disconnect() error
	// Context is the device the id is bound to, borrowed; nil until the
	// address is resolved or bound to a device.
	Context() Context
	// CreateQP has the CM create an RC QP for the id (rdma_create_qp),
	// which the CM then moves through its states.
	CreateQP(pd PD, send, recv CQ, cap QPCap) (QP, error)
	// InitOwnQP moves a QP made with PD.CreateRCQP to INIT on the id's port.
	InitOwnQP(qp QP) error
	// ReadyOwnQP moves such a QP through INIT, RTR and RTS with the
	// attributes rdma_init_qp_attr gives for the connection.
	ReadyOwnQP(qp QP) error
	// PeerAddr is the other end of the connection (for a connect
	// request: the client), the zero AddrPort when there is none.
	PeerAddr() netip.AddrPort
	// Close destroys the id; close its QP first.
	Close() error
}

// RNRRetryCMID is a CM id that readies a QP the program made, as
// ReadyOwnQP does, with rnrRetry as the RNR retry count of the QP's own
// sends in place of the one the peer asked for (7 retries without end).
// Both stacks' ids implement it.
type RNRRetryCMID interface {
	ReadyOwnQPWithRNRRetry(qp QP, rnrRetry uint8) error
}

// ConnParam is the part of struct rdma_conn_param the tools use. QPNum
// is needed only for a QP the CM did not create, and for a UD accept.
type ConnParam struct {
	ResponderResources, InitiatorDepth, RetryCount, RNRRetryCount uint8
	QPNum                                                         uint32
}

// CMEvent is one acknowledged CM event. For a connect request ID is the
// new connection's id (the receiver owns it) and Listen the listener.
// PrivateData is the peer's (copied; for TCP and UDP port spaces it may
// carry the CM's zero padding). UD is set for the events of UDP and IPoIB
// port space ids that address a peer: ESTABLISHED and MULTICAST_JOIN.
// Conn is set for an RC connect request: what the client asked for, as
// the passive side sees it (its initiator depth is the client's responder
// resources and the other way round).
type CMEvent struct {
	Type        CMEventType
	Status      int
	ID          CMID
	Listen      CMID
	PrivateData []byte
	UD          *UDParam
	Conn        *ConnParam
}

// UDParam is where a UD peer or multicast group is reached (struct
// rdma_ud_param): the address, the QP number and the Q_Key to send with.
type UDParam struct {
	AH    AHAttr
	QPNum uint32
	QKey  uint32
}

// PortSpace is enum rdma_port_space: which protocol's port numbers an id
// binds, and so the QP type it serves.
type PortSpace int

const (
	PortSpaceIPoIB PortSpace = 0x0002
	PortSpaceTCP   PortSpace = 0x0106
	PortSpaceUDP   PortSpace = 0x0111
	PortSpaceIB    PortSpace = 0x013f
)

// PortSpaceChannel is implemented by event channels that create ids in
// any port space; CreateID is CreateIDIn(PortSpaceTCP).
type PortSpaceChannel interface {
	CreateIDIn(ps PortSpace) (CMID, error)
}

// DatagramID is implemented by CMIDs that also carry UD connections and
// multicast groups, and set the options the rdma_cm test tools use.
type DatagramID interface {
	// CreateTypedQP is CreateQP for a QP of type t. With pd, send and
	// recv all nil librdmacm makes its own (default PD, one CQ each);
	// blockSelfMcast keeps the QP's own multicast sends from it.
	CreateTypedQP(pd PD, send, recv CQ, cap QPCap, t QPType, blockSelfMcast bool) (QP, error)
	// JoinMulticast joins group (MULTICAST_JOIN or MULTICAST_ERROR
	// follows), as a send-only full member when sendOnly.
	JoinMulticast(group netip.Addr, sendOnly bool) error
	LeaveMulticast(group netip.Addr) error
	// Reject refuses a connect request.
	Reject() error
	// SetTOS sets the type of service of the id's future connection.
	SetTOS(tos uint8) error
	// SetAckTimeout sets the connection's local ACK timeout exponent.
	SetAckTimeout(exp uint8) error
	// ActiveMTU is the active MTU of the id's port in bytes.
	ActiveMTU() (int, error)
	// PortNum is the device port the id is bound to.
	PortNum() uint8
}

// QKeyQP is implemented by QPs that tell their Q_Key (a UD QP's, which
// rdma_cm set): a reply goes out with the Q_Key the sender's QP has.
type QKeyQP interface {
	QKey() (uint32, error)
}

// ReplyPoller is implemented by CQs that can address a reply to the
// sender of a datagram they completed.
type ReplyPoller interface {
	// PollReply is Poll; when want is set and a completion came it also
	// makes an address handle back to the sender of the first one from
	// that completion and the GRH the receive placed at grh (the first 40
	// bytes of the receive buffer), on port.
	PollReply(wc []WC, want bool, pd PD, grh MR, port uint8) (int, AH, error)
}

// CMEventType is enum rdma_cm_event_type.
type CMEventType int

const (
	CMEventAddrResolved CMEventType = iota
	CMEventAddrError
	CMEventRouteResolved
	CMEventRouteError
	CMEventConnectRequest
	CMEventConnectResponse
	CMEventConnectError
	CMEventUnreachable
	CMEventRejected
	CMEventEstablished
	CMEventDisconnected
	CMEventDeviceRemoval
	CMEventMulticastJoin
	CMEventMulticastError
	CMEventAddrChange
	CMEventTimewaitExit
)

var cmEventNames = [...]string{
	"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
	"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
	"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
	"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
	"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
	"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
	"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT",
}

// String is rdma_event_str's name, e.g. "RDMA_CM_EVENT_REJECTED".
func (t CMEventType) String() string {
	if t >= 0 && int(t) < len(cmEventNames) {
		return cmEventNames[t]
	}
	return "UNKNOWN EVENT " + strconv.Itoa(int(t))
}
