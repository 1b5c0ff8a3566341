package cm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// A long-running responder (rdmactl serve) answers the tools' clients one
// connect request at a time: Listen, then Next and Answer for each.

// The message count and size the tools send by default.
const (
	DefaultCount = 10
	DefaultSize  = 100
)

// Listener takes connect requests in one port space.
type Listener struct {
	cm rdma.CM
	ps rdma.PortSpace
	ec rdma.EventChannel
	id rdma.CMID
}

// Listen listens on addr (empty: every address) and port in port space
// ps: rdma.PortSpaceUDP for udaddy clients, rdma.PortSpaceTCP for
// ucmatose and rdma_client ones.
func Listen(c rdma.CM, addr string, port int, ps rdma.PortSpace) (*Listener, error) {
	at, err := passiveAddr(c, addr, strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	ec, err := c.CreateEventChannel()
	if err != nil {
		return nil, err
	}
	l := &Listener{cm: c, ps: ps, ec: ec}
	psc, ok := ec.(rdma.PortSpaceChannel)
	switch {
	case ok:
		l.id, err = psc.CreateIDIn(ps)
	case ps == rdma.PortSpaceTCP:
		l.id, err = ec.CreateID()
	default:
		err = &rdma.Error{Op: "rdma_create_id", Errno: syscall.EINVAL}
	}
	if err == nil {
		if err = l.id.Bind(at); err == nil {
			err = l.id.Listen(0)
		}
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close stops listening. Requests already taken live on.
func (l *Listener) Close() {
	if l.id != nil {
		_ = l.id.Close()
	}
	_ = l.ec.Close()
}

// Request is one client's connect request, on its own event channel.
type Request struct {
	// Tool is the client's tool as told by its request: "udaddy",
	// "ucmatose" or "rdma_client".
	Tool string
	Peer netip.AddrPort
	cm   rdma.CM
	id   rdma.CMID
	ec   rdma.EventChannel
	err  error // the request could not be moved to its channel
}

// Next waits up to poll for a connect request: nil when none came.
func (l *Listener) Next(poll time.Duration) (*Request, error) {
	ev, err := l.ec.GetEvent(poll)
	if err == rdma.ErrTimeout {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if ev.Type != rdma.CMEventConnectRequest {
		return nil, nil
	}
	r := &Request{Tool: ToolOf(l.ps, ev.Conn), Peer: ev.ID.PeerAddr(), cm: l.cm, id: ev.ID}
	if r.ec, r.err = l.cm.CreateEventChannel(); r.err == nil {
		if r.err = ev.ID.Migrate(r.ec); r.err != nil {
			_ = r.ec.Close()
			r.ec = nil
		}
	}
	return r, nil
}

// ToolOf is the client tool a connect request comes from. UDP port space
// requests are udaddy's. On TCP, rdma_client connects without parameters
// and so with librdmacm's defaults, a retry and an RNR retry count of 7;
// ucmatose asks for a retry count of 5 and no RNR retries.
func ToolOf(ps rdma.PortSpace, conn *rdma.ConnParam) string {
	switch {
	case ps == rdma.PortSpaceUDP:
		return "udaddy"
	case conn != nil && conn.RetryCount == 7 && conn.RNRRetryCount == 7:
		return "rdma_client"
	}
	return "ucmatose"
}

// Refuse turns the request away.
func (r *Request) Refuse() {
	if dg, ok := r.id.(rdma.DatagramID); ok {
		_ = dg.Reject()
	}
	r.release()
}

func (r *Request) release() {
	_ = r.id.Close()
	if r.ec != nil {
		_ = r.ec.Close()
	}
}

// Result is how answering one client, or one probe, went.
type Result struct {
	OK       bool
	Messages int // sent and received
	// Answered is what a responder answered an udaddy or ucmatose
	// client (nil for rdma_client's one message each way).
	Answered *Answered
	Error    string
	Hint     string
	// Event and Status are the rdma_cm event that failed a probe.
	Event  rdma.CMEventType
	Status int
}

// Answer runs the server side of the request's tool (udaddy, ucmatose
// or rdma_server) for this one client, each wait bounded by timeout,
// until the client is done or ctx ends. udaddy and ucmatose clients of
// any -C and -S are answered (see answerUD and answerRC), within
// MaxUDMessages and MaxRCMessageSize. It releases everything it made.
func (r *Request) Answer(ctx context.Context, timeout time.Duration) Result {
	if r.err != nil {
		r.release()
		return Result{Error: r.err.Error()}
	}
	var errOut bytes.Buffer
	o := &Options{Tool: r.Tool, Connections: 1, PortSpace: rdma.PortSpaceTCP,
		Timeout: timeout, IO: cli.Test(nil, io.Discard, &errOut), CM: r.cm, done: ctx.Done()}
	var (
		ret      int
		fail     failure
		messages int
		answered *Answered
		name     string
	)
	if r.Tool == "rdma_client" {
		e := newEndpoint(o, "rdma_server")
		e.ec, e.id = r.ec, r.id
		if ret = e.answer(); ret == 0 && !e.timed {
			messages = 2
		}
		e.close()
		fail, name = e.fail, "rdma_client"
	} else {
		if r.Tool == "udaddy" {
			o.PortSpace = rdma.PortSpaceUDP
		}
		t := newToolTest(o)
		t.ec, t.started, t.answersAny = r.ec, time.Now(), true
		ret = t.answer(r.id)
		adopted := t.nodes[0].id != nil
		t.closeNodes()
		if !adopted {
			_ = r.id.Close()
		}
		if t.timedOut && ret == 0 {
			ret = 1
		}
		fail, name = t.fail, r.Tool
		if x := t.exchanged; x != nil && ret == 0 {
			messages, answered = 2*x.received, x.answered()
		}
	}
	_ = r.ec.Close()
	if ret == 0 {
		return Result{OK: true, Messages: messages, Answered: answered}
	}
	hint := fail.hint(name, "")
	switch {
	case fail.Call == errStopped:
		hint = ""
	case cli.HintOf(fail.Call) != "":
		hint = cli.HintOf(fail.Call)
	}
	return failed(fail, hint, &errOut, fmt.Sprintf("return status %d", ret))
}

// failed is a failed run's Result: the failure's own message, else the
// first line the tool printed on stderr, else fallback.
func failed(fail failure, hint string, stderr *bytes.Buffer, fallback string) Result {
	res := Result{Error: fail.message(), Hint: hint, Event: fail.Event, Status: fail.Status}
	if res.Error == "" {
		res.Error, _, _ = strings.Cut(strings.TrimSpace(stderr.String()), "\n")
	}
	if res.Error == "" {
		res.Error = fallback
	}
	return res
}

// answer is the server for one connect request, id, already taken.
func (t *nodeTest) answer(id rdma.CMID) int {
	t.nodes = []*node{{}}
	t.connectsLeft = 1
	if ret := t.connectHandler(id); ret != 0 {
		return ret
	}
	return t.exchange(nil)
}
