package ping

import (
	"fmt"
	"io"
	"strconv"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// State is a connection's protocol state. The numbers are rping's, which
// it prints in its "wait for … state N" messages.
type State int

const (
	Idle State = iota + 1
	ConnectRequest
	AddrResolved
	RouteResolved
	Connected
	ReadAdv
	ReadComplete
	WriteAdv
	WriteComplete
	Disconnected
	Failed
)

var stateNames = [...]string{
	Idle:           "IDLE",
	ConnectRequest: "CONNECT_REQUEST",
	AddrResolved:   "ADDR_RESOLVED",
	RouteResolved:  "ROUTE_RESOLVED",
	Connected:      "CONNECTED",
	ReadAdv:        "RDMA_READ_ADV",
	ReadComplete:   "RDMA_READ_COMPLETE",
	WriteAdv:       "RDMA_WRITE_ADV",
	WriteComplete:  "RDMA_WRITE_COMPLETE",
	Disconnected:   "DISCONNECTED",
	Failed:         "ERROR",
}

func (s State) String() string {
	if s >= Idle && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// rdmaRouteTimeoutMs is rping's fixed resolution timeout (address and route).
const rdmaRouteTimeoutMs = 2000

// machine is the event-driven half of a connection: it turns CM events
// and work completions into state changes and "posts", exactly as rping's
// CM and CQ threads do for its main thread's semaphore, and prints what
// they print. Waiting is the conn's job; machine never blocks.
type machine struct {
	server bool
	state  State
	posts  int // pending semaphore posts

	// exitCode is set when rping's CM thread would have ended the process
	// with exit(-1) after printing an error event.
	exitCode int
	// cqStopped is set when rping's CQ thread would have exited (after an
	// error or a flushed completion): later completions go unhandled.
	cqStopped bool

	remote BufferInfo // the peer's last advertisement (server)
	child  rdma.CMID

	// failure remembers the first error for the closing hint.
	failure failure

	inbox  []byte       // the receive buffer of the 16-byte messages
	errOut io.Writer    // rping's stderr
	debug  func(string) // nil unless -d

	// resolveRoute starts route resolution once the address is resolved.
	resolveRoute func() error
	// repostRecv gives the receive buffer back to the QP.
	repostRecv func() error
}

func (m *machine) post() { m.posts++ }

func (m *machine) errorf(format string, args ...any) {
	fmt.Fprintf(m.errOut, format, args...)
}

func (m *machine) debugf(format string, args ...any) {
	if m.debug != nil {
		m.debug(fmt.Sprintf(format, args...))
	}
}

// handleCM applies one CM event, as rping's rping_cma_event_handler does.
func (m *machine) handleCM(ev rdma.CMEvent, parent bool) {
	role := "child"
	if parent {
		role = "parent"
	}
	m.debugf("cma_event type %s cma_id (%s)\n", ev.Type, role)

	switch ev.Type {
	case rdma.CMEventAddrResolved:
		m.state = AddrResolved
		if err := m.resolveRoute(); err != nil {
			m.state = Failed
			m.errorf("%v\n", err)
			m.failure.note(failure{call: err})
			m.post()
		}
	case rdma.CMEventRouteResolved:
		m.state = RouteResolved
		m.post()
	case rdma.CMEventConnectRequest:
		m.state = ConnectRequest
		m.child = ev.ID
		m.debugf("child cma\n")
		m.post()
	case rdma.CMEventConnectResponse:
		m.debugf("CONNECT_RESPONSE\n")
		m.state = Connected
		m.post()
	case rdma.CMEventEstablished:
		m.debugf("ESTABLISHED\n")
		// The server wakes up on its first receive instead.
		if !m.server {
			m.state = Connected
		}
		m.post()
	case rdma.CMEventAddrError, rdma.CMEventRouteError, rdma.CMEventConnectError,
		rdma.CMEventUnreachable, rdma.CMEventRejected:
		m.errorf("cma event %s, error %d\n", ev.Type, ev.Status)
		m.failure.note(failure{event: ev.Type, status: ev.Status})
		m.post()
		m.exitCode = 255
	case rdma.CMEventDisconnected:
		side := "client"
		if m.server {
			side = "server"
		}
		m.errorf("%s DISCONNECT EVENT...\n", side)
		m.state = Disconnected
		m.post()
	case rdma.CMEventDeviceRemoval:
		m.errorf("cma detected device removal!!!!\n")
		m.failure.note(failure{event: ev.Type})
		m.state = Failed
		m.post()
		m.exitCode = 255
	default:
		m.errorf("unhandled event: %s, ignoring\n", ev.Type)
	}
}

// handleCompletions applies one batch of work completions, as rping's
// rping_cq_event_handler does for one completion event.
func (m *machine) handleCompletions(wcs []rdma.WC) {
	if m.cqStopped {
		return
	}
	flushed := false
	for i := range wcs {
		wc := &wcs[i]
		if wc.Status != rdma.WCSuccess {
			if wc.Status == rdma.WCWRFlushErr {
				flushed = true
				continue
			}
			m.errorf("cq completion failed status %d\n", wc.Status)
			m.failure.note(failure{wc: wc.Status, wcOp: wc.Opcode})
			m.cqFailed()
			return
		}
		switch wc.Opcode {
		case rdma.WCSend:
			m.debugf("send completion\n")
		case rdma.WCRDMAWrite:
			m.debugf("rdma write completion\n")
			m.state = WriteComplete
			m.post()
		case rdma.WCRDMARead:
			m.debugf("rdma read completion\n")
			m.state = ReadComplete
			m.post()
		case rdma.WCRecv:
			m.debugf("recv completion\n")
			if !m.received(wc.ByteLen) {
				m.errorf("recv wc error: %d\n", -1)
				m.cqFailed()
				return
			}
			if err := m.repostRecv(); err != nil {
				m.errorf("post recv error: %d\n", rdma.ErrnoOf(err))
				m.cqFailed()
				return
			}
			m.post()
		default:
			m.debugf("unknown!!!!! completion\n")
			m.cqFailed()
			return
		}
	}
	if flushed {
		m.cqStopped = true
	}
}

func (m *machine) cqFailed() {
	m.state = Failed
	m.post()
	m.cqStopped = true
}

// received handles an incoming advertisement (server) or go-ahead (client).
func (m *machine) received(n uint32) bool {
	if n != InfoSize {
		m.errorf("Received bogus data, size %d\n", n)
		return false
	}
	if !m.server {
		if m.state == ReadAdv {
			m.state = WriteAdv
		} else {
			m.state = WriteComplete
		}
		return true
	}
	m.remote, _ = DecodeBufferInfo(m.inbox[:InfoSize])
	if m.debug != nil { // boxing the numbers allocates, once a ping
		m.debugf("Received rkey %x addr %x len %d from peer\n", m.remote.RKey, m.remote.Addr, int32(m.remote.Size))
	}
	if m.state <= Connected || m.state == WriteComplete {
		m.state = ReadAdv
	} else {
		m.state = WriteAdv
	}
	return true
}

// take consumes one post and reports whether the state is the one the
// caller waited for; if not it prints rping's complaint, which names the
// awaited state (what) and the actual one.
func (m *machine) take(want State, what string) bool {
	m.posts--
	if m.state == want {
		return true
	}
	m.errorf("%s state %d\n", what, int(m.state))
	return false
}
