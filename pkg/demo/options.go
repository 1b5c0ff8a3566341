package demo

import (
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The original's messages and sizes. Every transfer moves msgSize bytes
// (strlen of sendMsg plus its NUL), but the strings copied into the buffer
// are longer: the C program overruns its 16-byte malloc there, and what it
// prints depends on the bytes past the first 16 ("RDMA write operaion ").
// rdmactl keeps a larger buffer so the same bytes are printed, and
// receives into all of it: NVIDIA's public variant sends 18 bytes
// ("SEDN operation   "), the seed's ibv_demo 16.
const (
	sendMsg    = "SEND operation "
	readMsg    = "RDMA read operation "
	writeMsg   = "RDMA write operation"
	msgSize    = uint32(len(sendMsg) + 1)
	bufferSize = 64
	mrFlags    = 0x7 // IBV_ACCESS_LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ

	// PollTimeout is the original's MAX_POLL_CQ_TIMEOUT.
	PollTimeout = 2000 * time.Millisecond

	// DefaultTimeout bounds the wait for the peer when Options.Timeout is 0.
	DefaultTimeout = 2 * time.Minute
)

// The original's fixed connection attributes (modify_qp_to_rtr/rts).
const (
	pathMTU         = rdma.MTU256
	minRNRTimer     = 0x12
	maxRdAtomic     = 1
	hopLimit        = 1
	ackTimeout      = 0x12
	retryCount      = 6
	rnrRetry        = 0
	startPSN        = 0
	accessAllRights = rdma.AccessLocalWrite | rdma.AccessRemoteRead | rdma.AccessRemoteWrite
)

// Options are the demo's settings. Without GRH (and without GIDAuto) no
// GID is used, as the original's default gid_idx of -1.
type Options struct {
	// IO is where Run prints (Probe and ServeConn print nowhere).
	IO *cli.IOStreams
	// RDMA is the verbs the demo runs on (the factory's rdma.Stack, or a
	// fake in tests).
	RDMA rdma.Verbs

	Server string // empty: be the server
	Device string // empty: the first device
	// DeviceSource is where Device came from (-d, RDMACTL_DEVICE,
	// FILE:device), for the error when it names no device.
	DeviceSource string
	IBPort       int
	GRH          bool // a GID index was given
	GIDIndex     int
	GIDAuto      bool // choose the index from the TCP connection's address
	TCPPort      int
	// Timeout bounds the wait for the peer: accept, connect and each
	// exchange over the TCP connection. 0 means DefaultTimeout.
	Timeout time.Duration
	JSON    bool
	// Counters are the port counters read before and after the run, to
	// say which error counters rose; nil reads none.
	Counters counters.Source

	// Test-only knobs (hidden flags) that let rdmactl stand in, in the
	// lab, for peers that behave otherwise.
	// Message replaces the message the server SENDs; its length plus the
	// NUL is then the size every transfer of this side moves, as in a C
	// variant built with that MSG.
	Message string
	// AdvertiseRKey, when set, is sent to the peer instead of the MR's
	// rkey: a peer whose record is wrong.
	AdvertiseRKey *uint32
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

func (o Options) message() string {
	if o.Message != "" {
		return o.Message
	}
	return sendMsg
}

func (o Options) msgSize() uint32 { return uint32(len(o.message()) + 1) }

func (o Options) client() bool { return o.Server != "" }
