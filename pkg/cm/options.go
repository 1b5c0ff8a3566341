// Package cm is rdmactl's rdma_cm test tools: udaddy, ucmatose,
// rdma_server, rdma_client, mckey and cmtime from rdma-core's
// rdmacm-utils, with the same flags, wire protocol, output lines and exit
// codes, plus --timeout, hints and --json.
package cm

import (
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Options are one run's flags. Each tool reads the ones it has.
type Options struct {
	// Tool is the C tool emulated: udaddy, ucmatose, rdma_server,
	// rdma_client, mckey or cmtime.
	Tool string
	// Server is -s: the address to connect to (mckey: the sender flag is
	// Sender); empty runs the server side.
	Server string
	// Bind is -b: the local address to bind.
	Bind string
	// Port is -p where it is a port number (ucmatose, rdma_*, cmtime).
	Port string
	// UDPort is udaddy's port, which the C tool fixes at 7174 (empty);
	// `rdmactl smoke` points it at a serve's --ud-port.
	UDPort      string
	Connections int
	Count       int // -C
	Size        int // -S
	TOS         uint8
	SetTOS      bool
	PortSpace   rdma.PortSpace
	Migrate     bool // ucmatose -m
	AckTimeout  uint8
	SetAck      bool
	Group       string // mckey -m/-M
	Unmapped    bool   // mckey -M
	Sender      bool   // mckey -s
	SendOnly    bool   // mckey -o
	NoLoopback  bool   // mckey -l
	Retries     int    // cmtime -r
	TimeoutMs   int    // cmtime -t
	Timeout     time.Duration
	JSON        bool
	IO          *cli.IOStreams
	CM          rdma.CM

	// done is the run's ctx.Done(): when it closes the waits end (nil:
	// never, and waits are not sliced to look at it).
	done <-chan struct{}
}
