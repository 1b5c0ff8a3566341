package rxe

import "github.com/rdmactl/rdmactl/pkg/host"

// The rxe commands work on pkg/host's model of the machine; these names
// keep rxe's callers short.
type (
	Host   = host.Host
	Netdev = host.Netdev
	Device = host.Device
	Port   = host.Port
)
