package cgoverbs

/*
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>

// cm_peer copies the id's peer address (rdma_get_peer_addr) into ip/port;
// it returns the address family, 0 when the id has no IP peer.
static int cm_peer(struct rdma_cm_id *id, uint8_t *ip, uint16_t *port) {
	struct sockaddr *sa = rdma_get_peer_addr(id);
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)sa;
		memcpy(ip, &s->sin_addr, 4);
		*port = ntohs(s->sin_port);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;
		memcpy(ip, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		return AF_INET6;
	}
	return 0;
}
*/
import "C"

import (
	"net/netip"
	"unsafe"
)

// PeerAddr is the address of the other end of a connection (for a
// connect request: the client's), the zero AddrPort when there is none.
func (id *CMID) PeerAddr() netip.AddrPort {
	if id == nil || id.id == nil {
		return netip.AddrPort{}
	}
	var ip [16]byte
	var port C.uint16_t
	switch C.cm_peer(id.id, (*C.uint8_t)(unsafe.Pointer(&ip[0])), &port) {
	case C.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip[:4])), uint16(port))
	case C.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16(ip).Unmap(), uint16(port))
	}
	return netip.AddrPort{}
}
