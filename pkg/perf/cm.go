package perf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// connectCM opens the out-of-band exchange over rdma_cm (-R or -z): the
// server takes one control connection on the port, the client makes it;
// with -R the data QPs follow later on the same port (cmdata.go).
func (s *session) connectCM(v rdma.Verbs) error {
	flag := "-R"
	if !s.r.RDMACM {
		flag = "-z"
	}
	cm, ok := v.(rdma.CM)
	if !ok {
		return errors.New(flag + ": this RDMA stack has no connection manager")
	}
	s.cm = cm
	s.cmPort = uint16(s.r.TCPPort)
	var err error
	if s.r.Server == "" {
		fmt.Fprint(s.out, "\n************************************\n* Waiting for client to connect... *\n************************************\n")
		if s.cmCtl, err = acceptCMControl(cm, s.cmPort, s.r.QPs, s.r.Timeout); err != nil {
			return cli.WithHint(fmt.Errorf("rdma_cm control connection on port %d: %w", s.cmPort, err),
				"start the client with "+flag+" and this host's IPv4 address on the RDMA interface, or raise --timeout")
		}
	} else {
		ip, err := cm.LookupHost(s.r.Server)
		if err != nil {
			return fmt.Errorf("%s: %w", s.r.Server, err)
		}
		if !ip.Unmap().Is4() {
			return &UsageError{fmt.Errorf("%s: %s is not an IPv4 address; perftest's rdma_cm exchange is IPv4 only", flag, s.r.Server)}
		}
		s.cmServer = netip.AddrPortFrom(ip.Unmap(), s.cmPort)
		if s.cmCtl, err = dialCMControl(cm, s.cmServer, s.r.Timeout); err != nil {
			err = fmt.Errorf("rdma_cm control connection to %v: %w", s.cmServer, err)
			var ce *cmEventError
			if errors.As(err, &ce) && ce.got.Type == rdma.CMEventRejected {
				return cli.WithHint(err, fmt.Sprintf("the peer is not listening: run the server side with %s (rdmactl perf %s %s or ib_%s %s) first", flag, s.r.Test, flag, s.r.Test, flag))
			}
			return err
		}
	}
	s.oob = &OOB{client: s.r.Server != "", timeout: s.r.Timeout, msg: s.cmCtl}
	return nil
}

// localIP is the address this side's end of the exchange uses, for -x
// auto: the TCP socket's, or with rdma_cm the one the route to the peer
// leaves from.
func (o *OOB) localIP() net.IP {
	if o.conn != nil {
		return o.conn.LocalAddr().(*net.TCPAddr).IP
	}
	if c, ok := o.msg.(*cmControl); ok {
		return c.localIP()
	}
	return nil
}

// localIP asks the kernel which source address routes to the peer (a
// UDP socket connects without sending anything).
func (c *cmControl) localIP() net.IP {
	peer := c.id.PeerAddr()
	if !peer.IsValid() {
		return nil
	}
	conn, err := net.Dial("udp", netip.AddrPortFrom(peer.Addr(), 9).String())
	if err != nil {
		return nil
	}
	defer conn.Close()
	return conn.LocalAddr().(*net.UDPAddr).IP
}
