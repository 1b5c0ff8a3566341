package ping

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// failure records what went wrong first, for the one-line hint.
type failure struct {
	event   cgoverbs.CMEventType // error CM event, when one arrived
	status  int                  // its status
	call    error                // a failed library call
	wc      rdma.WCStatus        // a failed work completion
	wcOp    rdma.WCOpcode
	timeout *timeoutError
}

func (f *failure) note(g failure) {
	if f.empty() {
		*f = g
	}
}

func (f *failure) empty() bool {
	return f.event == 0 && f.call == nil && f.wc == 0 && f.timeout == nil
}

// timeoutError is rdmactl's own failure when --timeout passes.
type timeoutError struct {
	after time.Duration
	what  string
	step  waitStep
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("timed out after %v waiting for %s", e.after, e.what)
}

// hintFor names the likely cause of a failure in one line (printed after
// "hint: "), or returns "" when it has nothing useful to add. peer is the
// -a address and port.
func hintFor(f failure, peer string, server bool) string {
	filtered := peer + " did not answer: it is unreachable over RoCE or UDP port 4791 is filtered (`rdmactl doctor` checks this side)"
	switch {
	case f.timeout != nil && f.timeout.step == stepResolve:
		return filtered
	case f.timeout != nil && f.timeout.step == stepConnect && !server:
		return "no answer to the connect request: is a ping server running on " + peer + ", and is UDP port 4791 open?"
	case f.timeout != nil && server:
		return "the client stopped answering (is it still running?)"
	case f.timeout != nil:
		return "the server stopped answering (is it still running?)"
	case f.event == cgoverbs.CMEventRejected:
		return "nothing listens on " + peer + " (start `rdmactl ping -s` there, or check -p)"
	case (f.event == cgoverbs.CMEventAddrError || f.event == cgoverbs.CMEventRouteError) && f.status == -int(syscall.ENODEV):
		return "no RDMA device owns the source address; add one with `rdmactl rxe add <netdev>` and check `rdmactl gids`"
	case f.event == cgoverbs.CMEventAddrError || f.event == cgoverbs.CMEventRouteError:
		if f.status == -int(syscall.ETIMEDOUT) {
			return filtered
		}
		return "address or route resolution failed; check the address and `rdmactl gids`"
	case f.event == cgoverbs.CMEventUnreachable || f.event == cgoverbs.CMEventConnectError:
		return filtered
	case f.event == cgoverbs.CMEventDeviceRemoval:
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

func hintForCall(err error, peer string) string {
	var ce *rdma.Error
	if !errors.As(err, &ce) {
		return ""
	}
	switch {
	case ce.Errno == syscall.ENODEV:
		return "no RDMA device here; create one with `rdmactl rxe add <netdev>`"
	case ce.Errno == syscall.ENETUNREACH || ce.Errno == syscall.EHOSTUNREACH:
		return "no route to " + peer + "; check the address and `ip route`"
	case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.EADDRNOTAVAIL:
		return "-a must be an address of this host (see `rdmactl gids`)"
	case ce.Op == "rdma_bind_addr" && ce.Errno == syscall.EADDRINUSE:
		return "another server already listens on that port; choose another with -p"
	}
	return ""
}
