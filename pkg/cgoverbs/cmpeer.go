package cgoverbs

/*
#include <sys/socket.h>
#include "cm.h"
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
