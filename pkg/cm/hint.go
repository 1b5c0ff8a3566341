package cm

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// whatConnectRequest is what a server waits for until its first client.
const whatConnectRequest = "a connect request"

// failure is the first thing that went wrong in a run, for its hint and
// the JSON document.
type failure struct {
	Event   rdma.CMEventType
	Status  int
	Call    error
	Timeout time.Duration // --timeout passed while waiting for what
	What    string
}

func (f *failure) empty() bool { return f.Event == 0 && f.Call == nil && f.Timeout == 0 }

func (f *failure) noteEvent(ev rdma.CMEvent) {
	if f.empty() {
		f.Event, f.Status = ev.Type, ev.Status
	}
}

func (f *failure) noteCall(err error) {
	if f.empty() && err != nil {
		f.Call = err
	}
}

func (f *failure) noteTimeout(d time.Duration, what string) {
	if f.empty() {
		f.Timeout, f.What = d, what
	}
}

func (f *failure) message() string {
	switch {
	case f.Timeout != 0:
		return (&cli.TimeoutError{After: f.Timeout, Doing: "waiting for " + f.What}).Error()
	case f.Event != 0:
		return fmt.Sprintf("%s, error: %d", f.Event, f.Status)
	case f.Call != nil:
		return f.Call.Error()
	}
	return ""
}

// hint names the likely cause of what was observed, in one line, or ""
// when the observation does not point anywhere. peer is the address the
// client tried (empty on a server), tool the C tool's name.
func (f *failure) hint(tool, peer string) string {
	switch {
	case f.Timeout != 0 && f.What == "multicast data":
		return "the group was joined but no datagram arrived within --timeout: is a sender (`mckey -s -m` with the same group) running, and started after this receiver joined?"
	case f.Timeout != 0 && f.What == whatConnectRequest:
		return "no client connected within --timeout: run the client side (`" + tool + " -s <an address of this host>`) against this server"
	case f.Timeout != 0 && peer != "":
		return "no answer from " + peer + " within --timeout: is `" + tool + "` running there as the server, and is UDP port 4791 open?"
	case f.Timeout != 0:
		return "the client stopped answering within --timeout (is it still running?)"
	case f.Event == rdma.CMEventRejected && f.Status == 8:
		return "nothing listens on " + peer + " in this port space (start the server side there, or check -p)"
	case f.Event == rdma.CMEventRejected:
		return fmt.Sprintf("the server on %s rejected the connect request (reason %d); its own output says why", peer, f.Status)
	case (f.Event == rdma.CMEventAddrError || f.Event == rdma.CMEventRouteError) && f.Status == -int(syscall.ENODEV):
		return "the netdev that leads to " + peer + " has no RDMA device (`rdmactl gids` lists the addresses that have one)"
	case f.Event == rdma.CMEventAddrError && f.Status == -int(syscall.ETIMEDOUT):
		return "no neighbour answered ARP/ND for " + peer + ": is that host up and on this link? (`rdmactl doctor --ip` checks)"
	case f.Event == rdma.CMEventAddrError || f.Event == rdma.CMEventRouteError:
		return fmt.Sprintf("%s with status %d: `rdmactl doctor` checks the route and device", f.Event, f.Status)
	case f.Event == rdma.CMEventUnreachable:
		return peer + " did not answer the connect request: nothing RDMA answers there, or UDP port 4791 is filtered on the way"
	case f.Event == rdma.CMEventConnectError:
		return fmt.Sprintf("the connection to %s broke while it was being set up (status %d): the server went away or dropped it meanwhile; its own output says why", peer, f.Status)
	case f.Event == rdma.CMEventMulticastError:
		return fmt.Sprintf("the multicast join was refused (status %d): on RoCE the group must be an IP multicast address the netdev can join", f.Status)
	}
	var ce *rdma.Error
	if errors.As(f.Call, &ce) {
		switch {
		case ce.Op == "rdma_create_id" && ce.Errno == syscall.EINVAL:
			return "the port space is not one rdma_cm knows (-p takes 0x111 for UDP or 0x2 for IPoIB)"
		case ce.Op == "rdma_create_event_channel" && ce.Errno == syscall.ENODEV:
			return "no RDMA device: `rdmactl rxe add <netdev>` adds a Soft-RoCE one"
		case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.EADDRNOTAVAIL:
			return "-b is not an address of this host"
		case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.ENODEV:
			return "-b is not an address of a netdev with an RDMA device (`rdmactl gids` lists those)"
		case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.EADDRINUSE:
			return "the port is taken: another server runs there (check -p)"
		case ce.Op == "rdma_join_multicast":
			return "the multicast join was refused: on RoCE the group must be an IP multicast address (`-m 239.1.1.1`)"
		}
	}
	return ""
}
