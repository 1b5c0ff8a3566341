package ping

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// failure records what went wrong first, for the one-line hint.
type failure struct {
	event   rdma.CMEventType // error CM event, when one arrived
	status  int              // its status
	call    error            // a failed library call
	wc      rdma.WCStatus    // a failed work completion
	wcOp    rdma.WCOpcode
	timeout *timeoutError
	// noAddress is why the client had no server address: -a "missing"
	// or "empty".
	noAddress string
}

func (f *failure) note(g failure) {
	if f.empty() {
		*f = g
	}
}

func (f *failure) empty() bool {
	return f.event == 0 && f.call == nil && f.wc == 0 && f.timeout == nil && f.noAddress == ""
}

// timeoutError is rdmactl's own failure when --timeout passes, with the
// step that was waiting, for the hint.
type timeoutError struct {
	cli.TimeoutError
	step waitStep
}

// hintFor names the likely cause of a failure in one line (printed after
// "hint: "), or returns "" when it has nothing useful to add. peer is the
// -a address and port, addr the address alone. Each hint says only what
// the observed failure implies; where the cause is open, it says what was
// seen and points at `rdmactl doctor`.
func hintFor(f failure, peer, addr string, server bool) string {
	noAnswer := peer + " did not answer the connect request: nothing RDMA answers there, or UDP port 4791 is filtered on the way (`rdmactl doctor --ip " + addr + "` checks this side)"
	noNeighbour := "no neighbour answered ARP/ND for " + addr + " (or for the gateway toward it): is that host up and on this link? (`ip neigh show " + addr + "`, `rdmactl doctor --ip " + addr + "`)"
	switch {
	case f.noAddress != "":
		return "-a is " + f.noAddress + ": the client needs the server's address (rdmactl ping -c -a ADDR)"
	case f.timeout != nil && f.timeout.step == stepResolve:
		return "resolving " + addr + " did not finish within --timeout (an address on this link that nobody answers ARP/ND for does this); `rdmactl doctor --ip " + addr + "` checks the route"
	case f.timeout != nil && f.timeout.step == stepConnect && !server:
		return "no answer to the connect request: is a ping server running on " + peer + ", and is UDP port 4791 open?"
	case f.timeout != nil && server:
		return "the client stopped answering (is it still running?)"
	case f.timeout != nil:
		return "the server stopped answering (is it still running?)"
	case f.event == rdma.CMEventRejected && f.status == 8:
		// IB_CM_REJ_INVALID_SERVICE_ID: no listener on that port.
		return cli.NothingListensHint(peer, "rdmactl ping -s")
	case f.event == rdma.CMEventRejected && f.status == 28:
		// IB_CM_REJ_CONSUMER_DEFINED: the server took the request and
		// dropped it, as rping does when its own setup fails.
		return "the server on " + peer + " took the connect request and then rejected it (reason 28): its setup failed; its own output says why"
	case f.event == rdma.CMEventRejected:
		return fmt.Sprintf("the server on %s rejected the connect request (reason %d); `rdmactl doctor` checks this side", peer, f.status)
	case (f.event == rdma.CMEventAddrError || f.event == rdma.CMEventRouteError) && f.status == -int(syscall.ENODEV):
		return "the netdev that leads to " + addr + " has no RDMA device (`rdmactl gids` lists the addresses that have one; `rdmactl doctor --ip " + addr + "` checks)"
	case f.event == rdma.CMEventAddrError && f.status == -int(syscall.ETIMEDOUT):
		return noNeighbour
	case f.event == rdma.CMEventAddrError || f.event == rdma.CMEventRouteError:
		return fmt.Sprintf("%s failed with status %d; `rdmactl doctor --ip %s` checks the route and device", f.event, f.status, addr)
	case f.event == rdma.CMEventUnreachable || f.event == rdma.CMEventConnectError:
		return noAnswer
	case f.event == rdma.CMEventDeviceRemoval:
		return "the RDMA device went away (was the rxe link deleted?)"
	case f.wc != 0:
		return hintForCompletion(f.wc, f.wcOp)
	case f.call != nil:
		return hintForCall(f.call, peer)
	}
	return ""
}

func hintForCompletion(st rdma.WCStatus, op rdma.WCOpcode) string {
	switch {
	case op == rdma.WCRDMARead && (st == rdma.WCLocLenErr || st == rdma.WCLocProtErr):
		return "the client's -S is larger than the server's; give both sides the same -S"
	case st == rdma.WCRetryExcErr:
		return "the peer stopped answering (transport retries exhausted)"
	}
	return "a work request failed: " + st.String()
}

// kernelDevices lists the kernel's RDMA devices; classOK is false when
// the class itself is missing: no RDMA in the kernel.
var kernelDevices = func() (names []string, classOK bool) {
	devs, err := host.ReadDevices(host.ClassDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	for _, d := range devs {
		names = append(names, d.Name)
	}
	return names, true
}

func hintForCall(err error, peer string) string {
	var ce *rdma.Error
	if !errors.As(err, &ce) {
		return ""
	}
	switch {
	case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.ENODEV:
		return "-a is not an address of a netdev with an RDMA device (`rdmactl gids` lists those; `rdmactl rxe add <netdev>` adds one)"
	case ce.Errno == syscall.ENODEV:
		return noDeviceHint()
	case ce.Op == "rdma_create_event_channel" && ce.Errno == syscall.ENOENT:
		return "/dev/infiniband/rdma_cm is missing (rdma_ucm not loaded?); `rdmactl doctor` checks what is missing"
	case ce.Errno == syscall.ENETUNREACH || ce.Errno == syscall.EHOSTUNREACH:
		return "no route to " + peer + "; check the address and `ip route`"
	case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.EADDRNOTAVAIL:
		return "-a must be an address of this host (see `rdmactl gids`)"
	case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.EADDRINUSE:
		return "another server already listens on that port; choose another with -p"
	}
	return ""
}

// noDeviceHint explains why libibverbs found no device from what the
// kernel shows.
func noDeviceHint() string {
	names, classOK := kernelDevices()
	switch {
	case !classOK:
		return "this kernel shows no RDMA support (no /sys/class/infiniband); `rdmactl doctor` says what is missing"
	case len(names) > 0:
		return "the kernel has " + strings.Join(names, ", ") + " but libibverbs found no device: is its provider library installed (ibverbs-providers)? `rdmactl doctor` checks"
	}
	return "no RDMA device here; create one with `rdmactl rxe add <netdev>` (`rdmactl doctor` checks the rest)"
}
