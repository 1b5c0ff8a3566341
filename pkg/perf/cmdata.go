package perf

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// cmData connects the endpoint's QPs with rdma_cm, perftest's
// create_rdma_cm_connection: a handshake, the client connects one id per
// QP to the server's listener on the same port (the control listener is
// gone by then), a handshake. The QPs are the endpoint's own: each is
// brought to RTS with the attributes of its connection.
type cmData struct {
	ch      rdma.EventChannel
	listen  rdma.CMID
	ids     []rdma.CMID
	param   rdma.ConnParam // each connection's, but for its QP number
	tos     *int           // -T: the client's ids'
	timeout time.Duration
}

func (s *session) connectDataCM(outReads int) error {
	d := &cmData{param: dataConnParam(s.r.Test, outReads), tos: s.r.TOS, timeout: s.r.Timeout}
	s.cmData = d
	var err error
	if d.ch, err = s.cm.CreateEventChannel(); err != nil {
		return err
	}
	// perftest's client connects as soon as this handshake is over, and
	// gives up when nobody listens yet: listen before it.
	if s.r.Server == "" {
		if err = d.listenOn(s.cmPort, s.r.QPs); err != nil {
			return fmt.Errorf("rdma_cm listener on port %d: %w", s.cmPort, err)
		}
	}
	// The records are not filled yet: perftest swaps zeroed ones here.
	if _, err := s.oob.Handshake(Dest{}); err != nil {
		return s.peerErr(err)
	}
	if s.r.Server == "" {
		err = d.accept(s.ep, s.r.QPs)
	} else {
		err = d.dial(s.ep, s.cmServer, s.r.QPs)
	}
	if err != nil {
		return cli.WithHint(fmt.Errorf("connecting the QPs with rdma_cm: %w", err),
			"both sides must run with -R, on the same RDMA device the IP address routes to")
	}
	if _, err := s.oob.Handshake(Dest{}); err != nil {
		return s.peerErr(err)
	}
	return nil
}

// dataConnParam is what perftest asks of its data connections: on a READ
// test its outstanding reads as both responder resources and initiator
// depth, without which rdma_cm grants the QPs no remote reads at all.
func dataConnParam(t Test, outReads int) rdma.ConnParam {
	p := rdma.ConnParam{RetryCount: cmRetries, RNRRetryCount: cmRetries}
	if t.fetches() {
		p.ResponderResources = uint8(min(outReads, 255))
		p.InitiatorDepth = p.ResponderResources
	}
	return p
}

// listenOn binds a listener to the port (all addresses) with a backlog
// of the QP count, as perftest.
func (d *cmData) listenOn(port uint16, n int) error {
	var err error
	if d.listen, err = d.ch.CreateID(); err != nil {
		return err
	}
	if err = d.listen.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), port)); err != nil {
		return err
	}
	return d.listen.Listen(n)
}

// accept answers n connect requests, each with the next QP.
func (d *cmData) accept(ep rdma.PerfEndpoint, n int) error {
	for qp := 0; qp < n; qp++ {
		ev, err := d.nextRequest()
		if err != nil {
			return err
		}
		d.ids = append(d.ids, ev.ID)
		if err := readyPerfQP(ev.ID, ep, qp); err != nil {
			return err
		}
		p := d.param
		p.QPNum = ep.QPN(qp)
		if err := ev.ID.Accept(&p); err != nil {
			return err
		}
	}
	return nil
}

// nextRequest waits for the next connect request; the accepted
// connections' ESTABLISHED events may come before it.
func (d *cmData) nextRequest() (rdma.CMEvent, error) {
	for {
		ev, err := awaitCMEvent(d.ch, rdma.CMEventConnectRequest, d.timeout)
		var ce *cmEventError
		if errors.As(err, &ce) && ce.got.Type == rdma.CMEventEstablished {
			continue
		}
		return ev, err
	}
}

// dial connects one id per QP, one after the other. A reject means the
// server is not listening yet: perftest retries ten times 100 ms apart,
// and so does this.
func (d *cmData) dial(ep rdma.PerfEndpoint, server netip.AddrPort, n int) error {
	for qp := 0; qp < n; qp++ {
		var err error
		for try := 0; try < 10; try++ {
			if err = d.dialOne(ep, server, qp); err == nil {
				break
			}
			var ce *cmEventError
			if !errors.As(err, &ce) || ce.got.Type != rdma.CMEventRejected {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *cmData) dialOne(ep rdma.PerfEndpoint, server netip.AddrPort, qp int) error {
	id, err := d.ch.CreateID()
	if err != nil {
		return err
	}
	if err = id.ResolveAddr(netip.Addr{}, server, 2*time.Second); err == nil {
		_, err = awaitCMEvent(d.ch, rdma.CMEventAddrResolved, d.timeout)
	}
	if err == nil {
		err = setTOS(id, d.tos)
	}
	if err == nil {
		if err = id.ResolveRoute(2 * time.Second); err == nil {
			_, err = awaitCMEvent(d.ch, rdma.CMEventRouteResolved, d.timeout)
		}
	}
	if err == nil {
		p := d.param
		p.QPNum = ep.QPN(qp)
		err = id.Connect(&p)
	}
	if err == nil {
		// For a QP it did not make, the CM reports the reply and leaves
		// the QP's states and rdma_establish to the program.
		_, err = awaitCMEvent(d.ch, rdma.CMEventConnectResponse, d.timeout)
	}
	if err == nil {
		if err = readyPerfQP(id, ep, qp); err == nil {
			err = id.Establish()
		}
	}
	if err != nil {
		id.Close()
		return err
	}
	d.ids = append(d.ids, id)
	return nil
}

// setTOS sets -T on a client's id once its address is resolved, before
// the route (where perftest sets it); nil sets none.
func setTOS(id rdma.CMID, tos *int) error {
	if tos == nil {
		return nil
	}
	d, ok := id.(interface{ SetTOS(uint8) error })
	if !ok {
		return errors.New("this RDMA stack cannot set an rdma_cm type of service (-T)")
	}
	if err := d.SetTOS(uint8(*tos)); err != nil {
		return fmt.Errorf("-T %d: %w", *tos, err)
	}
	return nil
}

func readyPerfQP(id rdma.CMID, ep rdma.PerfEndpoint, qp int) error {
	r, ok := id.(rdma.PerfCMID)
	if !ok {
		return errors.New("this RDMA stack cannot connect perf QPs with rdma_cm")
	}
	// Perftest's server sets its RNR timer after rdma_accept; both sides
	// here, as without -R: rdma_cm's 0 would make a sender that outruns the
	// receives wait 655 ms at each RNR NAK.
	return r.ReadyPerfQP(ep, qp, minRNRTimer)
}

// close disconnects the QPs' connections and frees the ids; the endpoint
// (closed after) destroys the QPs.
func (d *cmData) close() {
	for _, id := range d.ids {
		id.Disconnect()
	}
	for _, id := range d.ids {
		id.Close()
	}
	if d.listen != nil {
		d.listen.Close()
	}
	if d.ch != nil {
		d.ch.Close()
	}
}
