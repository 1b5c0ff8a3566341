package perf

import (
	"fmt"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Options are a perf run's settings, with perftest's meanings.
type Options struct {
	Test     Test
	Server   string // peer to connect to; "" runs the server side
	Device   string // -d; "" = the first device
	IBPort   int    // -i
	GIDIndex int    // -x; -1 = none (IB: LID routing)
	GIDAuto  bool   // -x auto
	Size     int    // -s; 0 = the test's default
	All      bool   // -a: sizes 2 … 2^23
	Iters    int    // -n; 0 = the test's default
	Duration time.Duration
	TCPPort  int // -p
	QPs      int // -q
	TxDepth  int // -t; 0 = the test's default
	RxDepth  int // -r; 0 = the test's default (receives only the send tests post)
	MTU      int // -m in bytes; 0 = the port's active MTU
	Gbits    bool
	RDMACM   bool
	BusyPoll bool
	JSON     bool
	Timeout  time.Duration // how long to wait for the peer at each step
}

// Perftest's defaults (perftest_parameters.h).
const (
	DefaultTCPPort  = 18515
	defSizeBW       = 65536
	defSizeLat      = 2
	defIters        = 1000
	defItersWriteBW = 5000
	defTxBW         = 128
	defTxLat        = 1
	defRxSend       = 512
	minRx           = 1
	maxRx           = 16384
	defCQMod        = 100
	cqModSizeLimit  = 8192
	maxSize         = 1 << 23
	cycleBuffer     = 4096
	cacheLine       = 64
	noPeakIters     = 20000
)

// Resolved are the options after perftest's defaults and dependencies.
type Resolved struct {
	Options
	Sizes   []int
	BufSize int // per half of the buffer: max(largest size, page)
	CQMod   int
	NoPeak  bool
}

// Resolve fills in defaults and checks what perftest checks.
func (o Options) Resolve() (Resolved, error) {
	r := Resolved{Options: o}
	if r.QPs == 0 {
		r.QPs = 1
	}
	if r.QPs < 1 || r.QPs > rdma.MaxPerfQPs {
		return r, fmt.Errorf("-q %d: the number of QPs must be 1 to %d", r.QPs, rdma.MaxPerfQPs)
	}
	if r.QPs > 1 && o.Test.Latency() {
		return r, fmt.Errorf("-q %d: only the bandwidth tests run several QPs; use -q 1 for %s", r.QPs, o.Test)
	}
	if r.Size == 0 {
		r.Size = defSizeBW
		if o.Test.Latency() {
			r.Size = defSizeLat
		}
	}
	if r.Size < 1 || r.Size > maxSize {
		return r, fmt.Errorf("-s %d: message size must be 1 to %d", r.Size, maxSize)
	}
	if r.Iters == 0 {
		r.Iters = defIters
		if o.Test == WriteBW {
			r.Iters = defItersWriteBW
		}
	}
	if r.Duration > 0 && r.All {
		return r, fmt.Errorf("-D with -a: a duration run measures one size; give -s or drop -D")
	}
	if r.Iters < 5 {
		return r, fmt.Errorf("-n %d: at least 5 iterations", r.Iters)
	}
	if r.TxDepth == 0 {
		r.TxDepth = defTxBW
		if o.Test.Latency() {
			r.TxDepth = defTxLat
		}
	}
	if r.TxDepth < 1 {
		return r, fmt.Errorf("-t %d: the TX depth must be positive", r.TxDepth)
	}
	if r.Duration == 0 && r.TxDepth > r.Iters {
		r.TxDepth = r.Iters
	}
	if r.RxDepth != 0 && (r.RxDepth < minRx || r.RxDepth > maxRx) {
		return r, fmt.Errorf("-r %d: the RX depth must be %d to %d", r.RxDepth, minRx, maxRx)
	}
	if r.RxDepth > 1 && o.Test.IsRead() {
		return r, fmt.Errorf("-r %d: %s posts no receives; on RDMA reads the RX depth can only be 1", r.RxDepth, o.Test)
	}
	if !o.Test.IsSend() {
		r.RxDepth = 1 // as perftest, which takes -r for write tests and ignores it
	} else {
		if r.RxDepth == 0 {
			r.RxDepth = defRxSend
		}
		if r.Duration == 0 && r.RxDepth > r.Iters {
			r.RxDepth = r.Iters
		}
		if r.RxDepth%2 == 1 && !r.All {
			r.RxDepth++ // perftest's work-around for odd depths
		}
	}
	r.CQMod = defCQMod
	if r.Size > cqModSizeLimit && !r.All {
		r.CQMod = 1
	}
	if r.CQMod > r.TxDepth {
		r.CQMod = r.TxDepth
	}
	r.NoPeak = r.Duration > 0 || r.Iters > noPeakIters
	if r.All {
		for s := 2; s <= maxSize; s <<= 1 {
			r.Sizes = append(r.Sizes, s)
		}
	} else {
		r.Sizes = []int{r.Size}
	}
	largest := r.Sizes[len(r.Sizes)-1]
	r.BufSize = max(largest, cycleBuffer)
	if r.MTU != 0 {
		if _, err := mtuEnum(r.MTU); err != nil {
			return r, err
		}
	}
	if r.TCPPort == 0 {
		r.TCPPort = DefaultTCPPort
	}
	if r.Timeout == 0 {
		r.Timeout = 2 * time.Minute
	}
	return r, nil
}

// qpSpan is one QP's share of the registered buffer: BufSize to send
// from, BufSize for the peer's messages.
func qpSpan(r Resolved) int { return 2 * r.BufSize }

// mtuEnum turns an MTU in bytes into enum ibv_mtu.
func mtuEnum(bytes int) (int, error) {
	for e, b := 1, 256; e <= 5; e, b = e+1, b*2 {
		if b == bytes {
			return e, nil
		}
	}
	return 0, fmt.Errorf("-m %d: the MTU must be 256, 512, 1024, 2048 or 4096", bytes)
}

// mtuBytes turns enum ibv_mtu into bytes.
func mtuBytes(e int) int { return 128 << e }
