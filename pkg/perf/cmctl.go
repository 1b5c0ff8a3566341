package perf

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// With -R perftest's whole out-of-band exchange runs over an rdma_cm
// connection instead of TCP (perftest_communication.c, rdma_client_connect
// and rdma_server_connect): one RC QP of depth 1 made by the CM, each
// message one SEND into a receive of a QP record's size, re-posted as soon
// as it is consumed. The messages are the TCP exchange's, but QP records
// travel as binary structs (destbin.go).

// messenger carries the out-of-band exchange instead of a TCP stream.
type messenger interface {
	// exchange sends mine and returns as many bytes of the peer's
	// message: the client sends first, the server receives first.
	exchange(mine []byte, client bool) ([]byte, error)
}

// cmControl is the rdma_cm control connection.
type cmControl struct {
	ch             rdma.EventChannel
	id             rdma.CMID
	pd             rdma.PD
	sendCh, recvCh rdma.CompChannel
	sendCQ, recvCQ rdma.CQ
	mr             rdma.MR
	qp             rdma.QP
	timeout        time.Duration
}

// Offsets in the control buffer: receives land at 0, sends go from
// ctlSendOff; each message is at most a QP record.
const (
	ctlSendOff = 64
	ctlBufLen  = 128
)

// cmRetries is perftest's retry count and its RNR retry (7: for ever).
const cmRetries = 7

func newCMControl(cm rdma.CM, timeout time.Duration) (*cmControl, error) {
	c := &cmControl{timeout: timeout}
	var err error
	if c.ch, err = cm.CreateEventChannel(); err != nil {
		return nil, err
	}
	return c, nil
}

// dialCMControl is the client's side: resolve, make the QP, connect.
// Without -T's type of service: perftest gives -T to the test's
// connections only, so the exchange's packets leave with TOS 0.
func dialCMControl(cm rdma.CM, server netip.AddrPort, timeout time.Duration) (*cmControl, error) {
	c, err := newCMControl(cm, timeout)
	if err != nil {
		return nil, err
	}
	if c.id, err = c.ch.CreateID(); err != nil {
		c.close()
		return nil, err
	}
	steps := []struct {
		start func() error
		want  rdma.CMEventType
	}{
		{func() error { return c.id.ResolveAddr(netip.Addr{}, server, 2*time.Second) }, rdma.CMEventAddrResolved},
		{func() error { return c.id.ResolveRoute(2 * time.Second) }, rdma.CMEventRouteResolved},
	}
	for _, st := range steps {
		if err = st.start(); err == nil {
			_, err = c.await(c.ch, st.want)
		}
		if err != nil {
			c.close()
			return nil, err
		}
	}
	if err = c.makeQP(); err == nil {
		err = c.id.Connect(&rdma.ConnParam{RetryCount: cmRetries, RNRRetryCount: cmRetries})
	}
	if err == nil {
		_, err = c.await(c.ch, rdma.CMEventEstablished)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// acceptCMControl is the server's side: listen on port (all addresses,
// a backlog of the QP count as perftest), take one connect request, make
// the QP and accept; the listener goes.
func acceptCMControl(cm rdma.CM, port uint16, backlog int, timeout time.Duration) (*cmControl, error) {
	c, err := newCMControl(cm, timeout)
	if err != nil {
		return nil, err
	}
	listen, err := c.ch.CreateID()
	if err != nil {
		c.close()
		return nil, err
	}
	defer listen.Close()
	if err = listen.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), port)); err == nil {
		if err = listen.Listen(backlog); err == nil {
			var ev rdma.CMEvent
			if ev, err = c.await(c.ch, rdma.CMEventConnectRequest); err == nil {
				c.id = ev.ID
			}
		}
	}
	if err == nil {
		err = c.makeQP()
	}
	if err == nil {
		err = c.id.Accept(&rdma.ConnParam{RetryCount: cmRetries, RNRRetryCount: cmRetries})
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// await takes the next event of ch and wants it to be of type want.
func (c *cmControl) await(ch rdma.EventChannel, want rdma.CMEventType) (rdma.CMEvent, error) {
	return awaitCMEvent(ch, want, c.timeout)
}

func awaitCMEvent(ch rdma.EventChannel, want rdma.CMEventType, timeout time.Duration) (rdma.CMEvent, error) {
	ev, err := ch.GetEvent(timeout)
	if errors.Is(err, rdma.ErrTimeout) {
		return ev, fmt.Errorf("rdma_cm: no %s within %v", want, timeout)
	}
	if err != nil {
		return ev, err
	}
	if ev.Type != want {
		return ev, &cmEventError{got: ev, want: want}
	}
	return ev, nil
}

// cmEventError is an rdma_cm event other than the one the step waits for.
type cmEventError struct {
	got  rdma.CMEvent
	want rdma.CMEventType
}

func (e *cmEventError) Error() string {
	return fmt.Sprintf("rdma_cm: %s (status %d) instead of %s", e.got.Type, e.got.Status, e.want)
}

// makeQP makes the control QP on the id's device with its buffer, and
// posts the first receive.
func (c *cmControl) makeQP() error {
	ctx := c.id.Context()
	if ctx == nil {
		return errors.New("rdma_cm: the control connection's id has no device")
	}
	var err error
	if c.pd, err = ctx.AllocPD(); err != nil {
		return err
	}
	if c.sendCh, err = ctx.CreateCompChannel(); err != nil {
		return err
	}
	if c.recvCh, err = ctx.CreateCompChannel(); err != nil {
		return err
	}
	if c.sendCQ, err = ctx.CreateCQ(2, c.sendCh); err != nil {
		return err
	}
	if c.recvCQ, err = ctx.CreateCQ(2, c.recvCh); err != nil {
		return err
	}
	if c.mr, err = c.pd.RegMR(ctlBufLen, rdma.AccessLocalWrite); err != nil {
		return err
	}
	if c.qp, err = c.id.CreateQP(c.pd, c.sendCQ, c.recvCQ, rdma.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}); err != nil {
		return err
	}
	return c.postRecv()
}

func (c *cmControl) postRecv() error {
	return c.qp.PostRecv(1, rdma.SGE{Addr: c.mr.Addr(), Len: destBinLen, LKey: c.mr.LKey()})
}

func (c *cmControl) exchange(mine []byte, client bool) ([]byte, error) {
	if client {
		if err := c.send(mine); err != nil {
			return nil, err
		}
		return c.recv(len(mine))
	}
	theirs, err := c.recv(len(mine))
	if err != nil {
		return nil, err
	}
	return theirs, c.send(mine)
}

func (c *cmControl) send(b []byte) error {
	if len(b) > ctlBufLen-ctlSendOff {
		return fmt.Errorf("control message of %d bytes", len(b))
	}
	copy(c.mr.Bytes()[ctlSendOff:], b)
	err := c.qp.PostSend(rdma.SendWR{
		ID: 2, Op: rdma.WRSend, Signaled: true,
		Local: rdma.SGE{Addr: c.mr.Addr() + ctlSendOff, Len: uint32(len(b)), LKey: c.mr.LKey()},
	})
	if err != nil {
		return err
	}
	_, err = c.complete(c.sendCQ)
	return err
}

// recv takes the next message, of which the caller wants n bytes, and
// posts the receive for the one after.
func (c *cmControl) recv(n int) ([]byte, error) {
	wc, err := c.complete(c.recvCQ)
	if err != nil {
		return nil, err
	}
	if int(wc.ByteLen) < n {
		return nil, fmt.Errorf("the peer's control message has %d bytes, want %d", wc.ByteLen, n)
	}
	out := append([]byte(nil), c.mr.Bytes()[:n]...)
	return out, c.postRecv()
}

// complete waits for one completion on cq; a flushed or failed one
// means the peer went away.
func (c *cmControl) complete(cq rdma.CQ) (rdma.WC, error) {
	wc := make([]rdma.WC, 1)
	deadline := time.Now().Add(c.timeout)
	for {
		// The CM's events come with: a peer that exits disconnects.
		n, evReady, err := cq.Await(wc, c.ch, time.Until(deadline))
		if errors.Is(err, rdma.ErrTimeout) {
			return rdma.WC{}, fmt.Errorf("no message from the peer within %v", c.timeout)
		}
		if err != nil {
			return rdma.WC{}, err
		}
		if n == 0 {
			if evReady {
				if err := c.peerEvent(); err != nil {
					return rdma.WC{}, err
				}
			}
			continue
		}
		if wc[0].Status != rdma.WCSuccess {
			if wc[0].Status == rdma.WCWRFlushErr || wc[0].Status == rdma.WCRetryExcErr {
				return wc[0], ErrPeerClosed
			}
			return wc[0], &rdma.WCError{Status: wc[0].Status, VendorErr: wc[0].VendorErr}
		}
		return wc[0], nil
	}
}

// peerEvent takes a pending CM event of the control connection: the
// server's ESTABLISHED is expected, an end of the connection means the
// peer is gone.
func (c *cmControl) peerEvent() error {
	ev, err := c.ch.GetEvent(0)
	if errors.Is(err, rdma.ErrTimeout) {
		return nil
	}
	if err != nil {
		return err
	}
	switch ev.Type {
	case rdma.CMEventEstablished:
		return nil
	case rdma.CMEventDisconnected, rdma.CMEventTimewaitExit:
		return ErrPeerClosed
	}
	return fmt.Errorf("rdma_cm control connection: %s (status %d)", ev.Type, ev.Status)
}

// close disconnects and frees everything, QP first.
func (c *cmControl) close() {
	if c.qp != nil {
		c.id.Disconnect()
		c.qp.Close()
	}
	for _, cl := range []interface{ Close() error }{c.mr, c.sendCQ, c.recvCQ, c.sendCh, c.recvCh, c.pd, c.id, c.ch} {
		if cl != nil {
			cl.Close()
		}
	}
}
