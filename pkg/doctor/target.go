package doctor

import (
	"fmt"
	"net/netip"
	"strings"
)

// checkTarget is the addr-device check for --ip: the address is local on
// a netdev with an RDMA device, or routed via one whose next hop answers.
func checkTarget(f *Facts, a netip.Addr, rdma map[string][]string) Result {
	if nd, ok := localNetdev(f.Netdevs, a); ok {
		if devs, ok := rdma[nd.Name]; ok {
			return result(CheckAddrs, OK, fmt.Sprintf("%s is on %s, which has %s", a, nd.Name, strings.Join(devs, ",")), "")
		}
		return result(CheckAddrs, Fail,
			fmt.Sprintf("%s is on %s, which has no RDMA device: rdma_bind_addr fails with ENODEV, rping with RDMA_CM_EVENT_ADDR_ERROR", a, nd.Name),
			"rdmactl rxe add "+nd.Name)
	}
	t := f.Target
	if t == nil || t.RouteErr != "" {
		why := "no route"
		if t != nil {
			why = t.RouteErr
		}
		return result(CheckAddrs, Fail,
			fmt.Sprintf("%s is not local and cannot be reached (%s): rdma_resolve_addr ends in RDMA_CM_EVENT_ADDR_ERROR", a, why),
			"add a route or an address in its subnet on an RDMA netdev")
	}
	if devs, ok := rdma[t.RouteNetdev]; ok {
		if bad := neighbourProblem(t); bad != "" {
			return result(CheckAddrs, Fail, bad,
				fmt.Sprintf("check that the peer is up and holds %s on the link of %s (ip neigh show dev %s)", t.Neighbour, t.RouteNetdev, t.RouteNetdev))
		}
		return result(CheckAddrs, OK,
			fmt.Sprintf("%s is reached via %s (source %s), which has %s", a, t.RouteNetdev, t.RouteSrc, strings.Join(devs, ",")), "")
	}
	return result(CheckAddrs, Fail,
		fmt.Sprintf("%s is reached via %s, which has no RDMA device: rdma_resolve_addr ends in RDMA_CM_EVENT_ADDR_ERROR", a, t.RouteNetdev),
		fmt.Sprintf("rdmactl rxe add %s, or route %s via a netdev that has one", t.RouteNetdev, a))
}

// neighbourProblem says what was seen when the next hop to the target
// did not answer ARP: rdma_resolve_addr then ends in ADDR_ERROR -110.
func neighbourProblem(t *Target) string {
	if !t.Neighbour.IsValid() {
		return ""
	}
	switch t.NeighState {
	case "FAILED", "INCOMPLETE", "":
	default:
		return ""
	}
	who := t.Neighbour.String()
	if t.Neighbour != t.Addr {
		who = "the gateway " + who + " to " + t.Addr.String()
	}
	state := t.NeighState
	if state == "" {
		state = "no entry"
	}
	return fmt.Sprintf("%s is on-link via %s but did not answer ARP (neighbour %s after %s): rdma_resolve_addr ends in RDMA_CM_EVENT_ADDR_ERROR (-110)",
		who, t.RouteNetdev, state, t.NeighWait)
}
