package cm

import (
	"errors"
	"net/netip"
	"strconv"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// lookup is getaddrinfo(name) as the tools call it; the error's text is
// gai_strerror's.
func lookup(cm rdma.CM, name string) (netip.Addr, error) {
	return cm.LookupHost(name)
}

func gaiText(err error) string {
	var le *rdma.LookupError
	if errors.As(err, &le) {
		return le.Msg
	}
	return err.Error()
}

// portOf is a service argument as a port number ("Servname not
// supported" otherwise, as getaddrinfo says).
func portOf(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, &rdma.LookupError{Code: -8, Msg: "Servname not supported for ai_socktype"}
	}
	return uint16(n), nil
}

// passiveAddr is the address a server binds: src, else every IPv4 one
// (what rdma_getaddrinfo's passive lookup yields first).
func passiveAddr(cm rdma.CM, src, port string) (netip.AddrPort, error) {
	p, err := portOf(port)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if src == "" {
		return netip.AddrPortFrom(netip.IPv4Unspecified(), p), nil
	}
	a, err := lookup(cm, src)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(a, p), nil
}
