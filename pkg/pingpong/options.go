// Package pingpong is rdmactl pingpong: the libibverbs examples
// ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong
// as one code path with the QP type as a parameter, speaking their TCP
// exchange and printing their lines, plus -g auto, --timeout, --stats and
// --json.
package pingpong

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Kind is which of the four tools runs.
type Kind int

const (
	RC Kind = iota
	UC
	UD
	SRQ
)

// Kinds are the tools in order, by their rdmactl names.
var Kinds = []Kind{RC, UC, UD, SRQ}

func (k Kind) String() string { return [...]string{"rc", "uc", "ud", "srq"}[k] }

// Tool is the emulated program's name.
func (k Kind) Tool() string { return "ibv_" + k.String() + "_pingpong" }

// ParseKind reads rc, uc, ud or srq.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown pingpong type %q: want rc, uc, ud or srq", s)
}

func (k Kind) qpType() rdma.QPType {
	switch k {
	case UC:
		return rdma.QPTypeUC
	case UD:
		return rdma.QPTypeUD
	}
	return rdma.QPTypeRC
}

// DefaultSize is the tool's message size: ud's is bounded by the MTU.
func (k Kind) DefaultSize() int {
	if k == UD {
		return 1024
	}
	return 4096
}

// Defaults shared by the four tools.
const (
	DefaultPort    = 18515
	DefaultRxDepth = 500
	DefaultIters   = 1000
	DefaultMTU     = 1024
	DefaultNumQP   = 16
	// maxQP is srq's table size: it always swaps this many records.
	maxQP = 256
	qkey  = 0x11111111
)

// Options are one run's settings, the tools' flags first.
type Options struct {
	IO    *cli.IOStreams
	Verbs rdma.Verbs
	// Lookup resolves the server's name as getaddrinfo does (its
	// errors are *rdma.LookupError); nil uses Go's resolver.
	Lookup func(name string) (netip.Addr, error)

	Kind     Kind
	Server   string // empty: this side is the server
	Port     int
	Device   string // empty: the first device
	IBPort   int
	Size     int
	MTU      int // bytes
	RxDepth  int
	Iters    int
	SL       int
	Events   bool
	GIDIndex int // negative: none
	GIDAuto  bool
	Check    bool
	NumQP    int // srq
	// AnySizeAndCount makes rc's server answer a client of any -s (up
	// to MaxAnswerSize) and -n until it falls silent, Size and Iters
	// unused (rdmactl serve's, through Answer).
	AnySizeAndCount bool

	// rc's options for features rxe lacks: refused as the tool refuses.
	ODP, ImplicitODP, Prefetch, Timestamps, DeviceMemory, NewSend bool

	// Timeout bounds each wait (0: wait forever, as the tools do).
	Timeout time.Duration
	JSON    bool
	Stats   bool
	// Counters are the port counters read before and after a --stats or
	// --json run, to say which error counters rose; nil reads none.
	Counters counters.Source
}

// wait is the bound of one wait: forever when no --timeout was given.
func (o *Options) wait() time.Duration {
	if o.Timeout <= 0 {
		return -1
	}
	return o.Timeout
}

// Usage is the tool's usage text as it prints it, naming itself argv0.
func (k Kind) Usage(argv0 string) string {
	s := "Usage:\n" +
		fmt.Sprintf("  %s            start a server and wait for connection\n", argv0) +
		fmt.Sprintf("  %s <host>     connect to server at <host>\n", argv0) +
		"\nOptions:\n" +
		"  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n" +
		"  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n" +
		"  -i, --ib-port=<port>   use port <port> of IB device (default 1)\n"
	switch k {
	case UD:
		s += "  -s, --size=<size>      size of message to exchange (default 2048)\n" +
			"  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n" +
			"  -n, --iters=<iters>    number of exchanges (default 1000)\n" +
			"  -l, --sl=<SL>          send messages with service level <SL> (default 0)\n" +
			"  -e, --events           sleep on CQ events (default poll)\n" +
			"  -g, --gid-idx=<gid index> local port gid index\n" +
			"  -c, --chk              validate received buffer\n"
		return s
	case SRQ:
		s += "  -s, --size=<size>      size of message to exchange (default 4096)\n" +
			"  -m, --mtu=<size>       path MTU (default 1024)\n" +
			"  -q, --num-qp=<num>     number of QPs to use (default 16)\n" +
			"  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n" +
			"  -n, --iters=<iters>    number of exchanges per QP(default 1000)\n"
	default:
		s += "  -s, --size=<size>      size of message to exchange (default 4096)\n" +
			"  -m, --mtu=<size>       path MTU (default 1024)\n" +
			"  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n" +
			"  -n, --iters=<iters>    number of exchanges (default 1000)\n"
	}
	s += "  -l, --sl=<sl>          service level value\n" +
		"  -e, --events           sleep on CQ events (default poll)\n" +
		"  -g, --gid-idx=<gid index> local port gid index\n"
	switch k {
	case RC:
		s += "  -o, --odp\t\t    use on demand paging\n" +
			"  -O, --iodp\t\t    use implicit on demand paging\n" +
			"  -P, --prefetch\t    prefetch an ODP MR\n" +
			"  -t, --ts\t            get CQE with timestamp\n" +
			"  -c, --chk\t            validate received buffer\n" +
			"  -j, --dm\t            use device memory\n" +
			"  -N, --new_send            use new post send WR API\n"
	case UC:
		s += "  -c, --chk              validate received buffer\n"
	case SRQ:
		s += "  -o, --odp\t\t    use on demand paging\n" +
			"  -c, --chk              validate received buffer\n"
	}
	return s
}

// Flags lists the short flags each tool has (its getopt string's letters).
func (k Kind) Flags() string {
	switch k {
	case RC:
		return "pdismrnlegoOPtcjN"
	case UC:
		return "pdismrnlegc"
	case UD:
		return "pdisrnlegc"
	}
	return "pdismqrnlegoc"
}

// mtuEnum is pp_mtu_to_enum: 0 for a size that is not an IB MTU.
func mtuEnum(bytes int) rdma.MTU {
	switch bytes {
	case 256:
		return 1
	case 512:
		return 2
	case 1024:
		return 3
	case 2048:
		return 4
	case 4096:
		return 5
	}
	return 0
}
