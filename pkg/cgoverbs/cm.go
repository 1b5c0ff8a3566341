package cgoverbs

/*
#include <stdlib.h>
#include <netdb.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>
#include "cm.h"
*/
import "C"

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// cmError wraps a helper's -errno return as the call's rdma.Error.
func cmError(op string, rc C.int) error {
	return &rdma.Error{Op: op, Errno: syscall.Errno(-rc)}
}

// LookupHost resolves name as getaddrinfo(name, NULL, NULL) does and returns
// its first answer; an IPv6 scope id becomes the address's numeric zone.
func (Stack) LookupHost(name string) (netip.Addr, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var a C.struct_cm_addr
	switch rc := C.cm_lookup(cname, &a); {
	case rc == 1:
		return netip.Addr{}, &rdma.LookupError{Code: -1, Msg: "not an IPv4 or IPv6 address"}
	case rc != 0:
		return netip.Addr{}, &rdma.LookupError{Code: int(rc), Msg: C.GoString(C.gai_strerror(rc))}
	}
	ip := C.GoBytes(unsafe.Pointer(&a.ip[0]), 16)
	if a.family == C.AF_INET {
		return netip.AddrFrom4([4]byte(ip[:4])), nil
	}
	addr := netip.AddrFrom16([16]byte(ip))
	if a.scope != 0 {
		addr = addr.WithZone(strconv.FormatUint(uint64(a.scope), 10))
	}
	return addr, nil
}

func toCMAddr(ap netip.AddrPort) (C.struct_cm_addr, error) {
	var a C.struct_cm_addr
	ip := ap.Addr()
	if !ip.IsValid() {
		return a, nil
	}
	a.port = C.uint16_t(ap.Port())
	if ip.Is4() {
		a.family = C.AF_INET
		b := ip.As4()
		for i := range b {
			a.ip[i] = C.uint8_t(b[i])
		}
		return a, nil
	}
	a.family = C.AF_INET6
	b := ip.As16()
	for i := range b {
		a.ip[i] = C.uint8_t(b[i])
	}
	if z := ip.Zone(); z != "" {
		if n, err := strconv.ParseUint(z, 10, 32); err == nil {
			a.scope = C.uint32_t(n)
		} else if ifi, err := net.InterfaceByName(z); err == nil {
			a.scope = C.uint32_t(ifi.Index)
		} else {
			return a, fmt.Errorf("IPv6 zone %q: no such interface", z)
		}
	}
	return a, nil
}

// EventChannel delivers rdma_cm events; its fd can be polled.
type EventChannel struct {
	ch  *C.struct_rdma_event_channel
	ids map[*C.struct_rdma_cm_id]*CMID
}

var _ rdma.EventChannel = (*EventChannel)(nil)

// CreateEventChannel opens an event channel. When the system has no RDMA
// device the error wraps syscall.ENODEV.
func (Stack) CreateEventChannel() (rdma.EventChannel, error) {
	var ch *C.struct_rdma_event_channel
	if rc := C.cm_create_channel(&ch); rc != 0 {
		return nil, cmError("rdma_create_event_channel", rc)
	}
	return &EventChannel{ch: ch, ids: map[*C.struct_rdma_cm_id]*CMID{}}, nil
}

// fd is the channel's file descriptor, readable when an event is pending.
func (ec *EventChannel) fd() C.int { return ec.ch.fd }

// Close destroys the channel; destroy or migrate its ids first.
func (ec *EventChannel) Close() error {
	if ec == nil || ec.ch == nil {
		return nil
	}
	C.rdma_destroy_event_channel(ec.ch)
	ec.ch = nil
	return nil
}

// GetEvent waits for the next event for at most timeout (negative =
// forever); on timeout it returns rdma.ErrTimeout.
func (ec *EventChannel) GetEvent(timeout time.Duration) (rdma.CMEvent, error) {
	var e C.struct_cm_event_copy
	if rc := C.cm_get_event(ec.ch, timeoutMillis(timeout), &e); rc != 0 {
		if syscall.Errno(-rc) == syscall.ETIMEDOUT {
			return rdma.CMEvent{}, rdma.ErrTimeout
		}
		return rdma.CMEvent{}, cmError("rdma_get_cm_event", rc)
	}
	ev := rdma.CMEvent{Type: rdma.CMEventType(e._type), Status: int(e.status), ID: ec.lookup(e.id)}
	if e.listen_id != nil {
		ev.Listen = ec.lookup(e.listen_id)
	}
	if e.private_len > 0 {
		ev.PrivateData = C.GoBytes(unsafe.Pointer(&e.private_data[0]), e.private_len)
	}
	if e.is_ud != 0 && (ev.Type == rdma.CMEventEstablished || ev.Type == rdma.CMEventMulticastJoin) {
		ev.UD = &rdma.UDParam{AH: ahAttrFrom(&e.ah), QPNum: uint32(e.qp_num), QKey: uint32(e.qkey)}
	}
	if e.is_ud == 0 && ev.Type == rdma.CMEventConnectRequest {
		ev.Conn = &rdma.ConnParam{ResponderResources: uint8(e.resp_res), InitiatorDepth: uint8(e.init_depth),
			RetryCount: uint8(e.retry), RNRRetryCount: uint8(e.rnr_retry)}
	}
	return ev, nil
}

// lookup maps a C id to its wrapper, adopting ids the kernel created
// (connect requests).
func (ec *EventChannel) lookup(id *C.struct_rdma_cm_id) *CMID {
	if w, ok := ec.ids[id]; ok {
		return w
	}
	w := &CMID{id: id, ec: ec}
	ec.ids[id] = w
	return w
}

// CMID is an rdma_cm identifier (struct rdma_cm_id), TCP port space.
type CMID struct {
	id *C.struct_rdma_cm_id
	ec *EventChannel
}

var (
	_ rdma.CMID         = (*CMID)(nil)
	_ rdma.RNRRetryCMID = (*CMID)(nil)
)

// CreateID creates an id whose events arrive on ec.
func (ec *EventChannel) CreateID() (rdma.CMID, error) {
	var id *C.struct_rdma_cm_id
	if rc := C.cm_create_id(ec.ch, &id); rc != 0 {
		return nil, cmError("rdma_create_id", rc)
	}
	return ec.lookup(id), nil
}

// Close destroys the id (and forgets it). Destroy its QP first.
func (id *CMID) Close() error {
	if id == nil || id.id == nil {
		return nil
	}
	delete(id.ec.ids, id.id)
	rc := C.cm_destroy_id(id.id)
	id.id = nil
	if rc != 0 {
		return cmError("rdma_destroy_id", rc)
	}
	return nil
}

// Migrate moves the id's future events to ch, which must be this
// package's.
func (id *CMID) Migrate(ch rdma.EventChannel) error {
	ec, ok := ch.(*EventChannel)
	if !ok {
		return &rdma.Error{Op: "rdma_migrate_id", Errno: syscall.EINVAL}
	}
	if rc := C.cm_migrate_id(id.id, ec.ch); rc != 0 {
		return cmError("rdma_migrate_id", rc)
	}
	delete(id.ec.ids, id.id)
	id.ec = ec
	ec.ids[id.id] = id
	return nil
}

// ResolveAddr starts address resolution of dst, from src when src is
// valid; ADDR_RESOLVED or ADDR_ERROR follows.
func (id *CMID) ResolveAddr(src netip.Addr, dst netip.AddrPort, timeout time.Duration) error {
	d, err := toCMAddr(dst)
	if err != nil {
		return err
	}
	s, err := toCMAddr(netip.AddrPortFrom(src, 0))
	if err != nil {
		return err
	}
	if rc := C.cm_resolve_addr(id.id, &s, &d, timeoutMillis(timeout)); rc != 0 {
		return cmError("rdma_resolve_addr", rc)
	}
	return nil
}

// ResolveRoute starts route resolution; ROUTE_RESOLVED or ROUTE_ERROR follows.
func (id *CMID) ResolveRoute(timeout time.Duration) error {
	if rc := C.cm_resolve_route(id.id, timeoutMillis(timeout)); rc != 0 {
		return cmError("rdma_resolve_route", rc)
	}
	return nil
}

// Bind binds the id to a local address and port (the unspecified address
// binds to all).
func (id *CMID) Bind(addr netip.AddrPort) error {
	a, err := toCMAddr(addr)
	if err != nil {
		return err
	}
	if rc := C.cm_bind_addr(id.id, &a); rc != 0 {
		return cmError("rdma_bind_addr", rc)
	}
	return nil
}

// Listen starts listening for connect requests.
func (id *CMID) Listen(backlog int) error {
	if rc := C.cm_listen(id.id, C.int(backlog)); rc != 0 {
		return cmError("rdma_listen", rc)
	}
	return nil
}

func (id *CMID) connect(p *rdma.ConnParam, accept bool) error {
	var q rdma.ConnParam
	if p != nil {
		q = *p
	}
	rc := C.cm_connect(id.id, cBool(p != nil), C.uint8_t(q.ResponderResources), C.uint8_t(q.InitiatorDepth),
		C.uint8_t(q.RetryCount), C.uint8_t(q.RNRRetryCount), C.uint32_t(q.QPNum), cBool(accept))
	switch {
	case rc == 0:
		return nil
	case accept:
		return cmError("rdma_accept", rc)
	}
	return cmError("rdma_connect", rc)
}

// Connect sends a connect request; p nil uses librdmacm's defaults.
func (id *CMID) Connect(p *rdma.ConnParam) error { return id.connect(p, false) }

// Accept accepts a connect request; p nil uses librdmacm's defaults.
func (id *CMID) Accept(p *rdma.ConnParam) error { return id.connect(p, true) }

// Establish completes a client connection whose QP the program moved to
// RTS itself.
func (id *CMID) Establish() error {
	if rc := C.cm_establish(id.id); rc != 0 {
		return cmError("rdma_establish", rc)
	}
	return nil
}

// Disconnect tears the connection down; the peer sees DISCONNECTED.
func (id *CMID) Disconnect() error {
	if rc := C.cm_disconnect(id.id); rc != 0 {
		return cmError("rdma_disconnect", rc)
	}
	return nil
}

// Context is the device the id is bound to, borrowed: it is not closed.
// It is nil until the address is resolved or bound to a device.
func (id *CMID) Context() rdma.Context {
	if id.id.verbs == nil {
		return nil
	}
	return cmContext{&Context{c: id.id.verbs, owned: false}}
}

// CreateQP has the CM create an RC QP for the id (rdma_create_qp); the CM
// moves it through its states as the connection progresses.
func (id *CMID) CreateQP(pd rdma.PD, send, recv rdma.CQ, cap rdma.QPCap) (rdma.QP, error) {
	p, sq, rq, err := ownVerbs("rdma_create_qp", pd, send, recv)
	if err != nil {
		return nil, err
	}
	attr := QPCap(cap).initAttr(sq, rq)
	if rc := C.cm_create_qp(id.id, p.pd, &attr); rc != 0 {
		return nil, cmError("rdma_create_qp", rc)
	}
	return cmQP{&QP{qp: id.id.qp, cm: id}}, nil
}

func (id *CMID) destroyQP() { C.rdma_destroy_qp(id.id) }

// InitOwnQP moves a QP made with PD.CreateRCQP to INIT on the id's port.
func (id *CMID) InitOwnQP(qp rdma.QP) error {
	q, ok := qp.(cmQP)
	if !ok {
		return &rdma.Error{Op: "ibv_modify_qp", Errno: syscall.EINVAL}
	}
	if rc := C.cm_init_own_qp(id.id, q.qp); rc != 0 {
		return cmError("ibv_modify_qp", rc)
	}
	return nil
}

// ReadyOwnQP moves a self-created QP to INIT, RTR and RTS with the
// attributes rdma_init_qp_attr gives for the id's connection. Call it once
// the peer's connect request or reply is known.
func (id *CMID) ReadyOwnQP(qp rdma.QP) error {
	q, ok := qp.(cmQP)
	if !ok {
		return &rdma.Error{Op: "ibv_modify_qp", Errno: syscall.EINVAL}
	}
	return id.readyQP(q.qp, -1)
}

// ReadyOwnQPWithRNRRetry is ReadyOwnQP with rnrRetry as the QP's RNR
// retry count, not the one the peer asked for.
func (id *CMID) ReadyOwnQPWithRNRRetry(qp rdma.QP, rnrRetry uint8) error {
	q, ok := qp.(cmQP)
	if !ok {
		return &rdma.Error{Op: "ibv_modify_qp", Errno: syscall.EINVAL}
	}
	return id.readyQPRetrying(q.qp, -1, int(rnrRetry))
}

// readyQP is ReadyOwnQP with the RNR NAK timer minRNRTimer, or rdma_cm's
// when it is negative.
func (id *CMID) readyQP(qp *C.struct_ibv_qp, minRNRTimer int) error {
	return id.readyQPRetrying(qp, minRNRTimer, -1)
}

// readyQPRetrying is readyQP with the RNR retry count rnrRetry, or the
// peer's when it is negative.
func (id *CMID) readyQPRetrying(qp *C.struct_ibv_qp, minRNRTimer, rnrRetry int) error {
	var step C.int
	if rc := C.cm_ready_own_qp(id.id, qp, C.int(minRNRTimer), C.int(rnrRetry), &step); rc != 0 {
		if step == 0 {
			return cmError("rdma_init_qp_attr", rc)
		}
		return cmError("ibv_modify_qp", rc)
	}
	return nil
}

// pkg/rdma's copies of the C enums, checked when this package compiles: a
// value that differs makes an index out of range.
var (
	_ = [1]int{}[int(rdma.CMEventAddrResolved)-int(C.RDMA_CM_EVENT_ADDR_RESOLVED)]
	_ = [1]int{}[int(rdma.CMEventRejected)-int(C.RDMA_CM_EVENT_REJECTED)]
	_ = [1]int{}[int(rdma.CMEventDeviceRemoval)-int(C.RDMA_CM_EVENT_DEVICE_REMOVAL)]
	_ = [1]int{}[int(rdma.CMEventTimewaitExit)-int(C.RDMA_CM_EVENT_TIMEWAIT_EXIT)]
	_ = [1]int{}[int(rdma.WRRDMAWrite)-int(C.IBV_WR_RDMA_WRITE)]
	_ = [1]int{}[int(rdma.WRSend)-int(C.IBV_WR_SEND)]
	_ = [1]int{}[int(rdma.WRRDMARead)-int(C.IBV_WR_RDMA_READ)]
	_ = [1]int{}[int(rdma.AccessLocalWrite)-int(C.IBV_ACCESS_LOCAL_WRITE)]
	_ = [1]int{}[int(rdma.AccessRemoteWrite)-int(C.IBV_ACCESS_REMOTE_WRITE)]
	_ = [1]int{}[int(rdma.AccessRemoteRead)-int(C.IBV_ACCESS_REMOTE_READ)]
)

// cmEventStr is librdmacm's rdma_event_str, which rdma.CMEventType's
// String copies (cm_test.go holds them together).
func cmEventStr(t rdma.CMEventType) string {
	return C.GoString(C.rdma_event_str(C.enum_rdma_cm_event_type(t)))
}

// waitReadable is cm_get_event's wait on its own, for the test that holds
// it to its deadline when signals interrupt it.
func waitReadable(fd int, timeout time.Duration) syscall.Errno {
	return syscall.Errno(-C.cm_wait_readable(C.int(fd), timeoutMillis(timeout)))
}
