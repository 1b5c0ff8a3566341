package perf

import (
	"fmt"
	"io"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Options are a perf run's settings, with perftest's meanings.
type Options struct {
	// IO is where Run prints (ServeConn and Measure print nowhere).
	IO *cli.IOStreams
	// Verbs is the stack the test runs on (the factory's rdma.Stack); -R
	// needs it to be an rdma.CM too.
	Verbs    rdma.Verbs
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
	// CommRDMACM is -z: the exchange runs over an rdma_cm connection, as
	// with -R, but the test's QPs are connected with the records it
	// carries, as without.
	CommRDMACM bool
	// Conn is -c: the QPs' transport, RC (also for 0), UC or UD.
	Conn     rdma.QPType
	BusyPoll bool
	JSON     bool
	Timeout  time.Duration // how long to wait for the peer at each step
	// Margin is -f: with -D, the time left out at each end; nil for
	// perftest's choice, a quarter of -D.
	Margin       *time.Duration
	CQModeration int  // -Q; 0 = perftest's choice
	SkipPeak     bool // -N
	QPTimeout    *int // -u; nil = perftest's 14
	SL           int  // -S: the QPs' service level
	Events       bool // -e: sleep on CQ events (the latency tests' default without --busy-poll)
	Output       string
	Histogram    bool   // -H
	Unsorted     bool   // -U
	AtomicType   string // -A: FetchAndAdd ("") or CmpAndSwap
	PostList     int    // -l; 0 means 1
	// Reversed is --reversed: the side that connects runs the test's
	// server part and the one that listens its client part (both sides
	// give it).
	Reversed bool
	// RecvPostList is --recv_post_list: send_bw's server posts its
	// receives in lists of this many; 0 means 1.
	RecvPostList int
	// InlineSize is -I: messages of up to this many bytes travel in the
	// work request (IBV_SEND_INLINE); 0 sends none inline.
	InlineSize int
	// WarmUp is --perform_warm_up: write_bw, read_bw and atomic_bw post a
	// round of requests per QP, and wait for it, before each measured run.
	WarmUp bool
	// RunInfinitely is --run_infinitely: a bandwidth test runs without
	// end, printing a row for each period of -D seconds (default 5),
	// until the process is stopped or the peer leaves.
	RunInfinitely bool
	// CPUUtil is --cpu_util: with -D, each row ends with the host's CPU
	// use in the sample window, as perftest's CPU_Util[%].
	CPUUtil bool
	// OutReads is -o: the read and atomic tests' requests in flight per
	// QP; 0 (or above the device's max_qp_rd_atom) is that max.
	OutReads int
	// LimitBW and LimitMsgRate are -w and -y: the bandwidth (in the
	// report's unit) and message rate (Mpps) a bandwidth test's result
	// must reach, or the run fails after its report; nil checks nothing.
	LimitBW, LimitMsgRate *float64
	// TOS is -T with -R: the rdma_cm connections' type of service; nil
	// sets none.
	TOS *int
	// TrafficClass is --tclass: the GRH's traffic class of the QPs
	// connected without rdma_cm.
	TrafficClass int
	// ReportCounters is -W's list of port counters, comma-separated
	// (hw_counters/NAME or counters/NAME), whose change is printed after
	// each result row; "" reports none.
	ReportCounters string
	// Cycles is -C: latency rows in CPU cycles (but with -D, which perftest
	// reports in microseconds still).
	Cycles bool
	// Bidirectional is -b: both sides of a bandwidth test move data
	// at once and print the sum; ReportBoth (--report-both) adds each
	// side's own row.
	Bidirectional bool
	ReportBoth    bool
	// HugePages is --use_hugepages: the buffer is huge pages; MmapFile
	// and MmapOffset are --mmap and --mmap-offset: it is a shared mapping
	// of that file.
	HugePages  bool
	MmapFile   string
	MmapOffset int64
	// DualPort and ODP are -O and --odp, which perftest fails on devices
	// without a second port or on-demand paging, and rdmactl refuses on
	// the others.
	DualPort, ODP bool
	// SRQ is --use-srq: where perftest makes one (send_lat, send_bw's
	// server), the QPs share a receive queue.
	SRQ bool
	// MRPerQP is --mr_per_qp: each QP's share of the buffer is a memory
	// region of its own, with its own keys.
	MRPerQP bool
	// OutJSON is --out_json: each result row also replaces the file
	// OutJSONFile (--out_json_file) with perftest's key: value block.
	OutJSON     bool
	OutJSONFile string
	// PlotFile is --plot: at the end of the run, this side's result
	// drawn as an SVG chart (plot.go); "" draws none.
	PlotFile string
	// RateLimit is perftest's rate limiter (--rate_limit and its
	// companions); nil limits nothing.
	RateLimit *RateLimit
	// Counters are the port counters read before and after the run, to
	// say which error counters rose; nil reads none.
	Counters counters.Source
}

// The atomic tests' operations (-A), in perftest's spelling.
const (
	FetchAndAdd = "FETCH_AND_ADD"
	CmpAndSwap  = "CMP_AND_SWAP"
)

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
	atomicSize      = 8
	// defInfinitePeriod is perftest's DEF_DURATION, --run_infinitely's
	// period without -D.
	defInfinitePeriod = 5 * time.Second
	maxInline         = 912 // Debian's perftest 4.5+0.17; newer ones take 1024
	maxTOS            = 255
	ucMaxRx           = 16000 // perftest's UC_MAX_RX
	udGRH             = 40    // perftest's UD_ADDITION
	udQKey            = 0x11111111
	maxInlineUD       = 884 // perftest's MAX_INLINE_UD
)

// Resolved are the options after perftest's defaults and dependencies.
type Resolved struct {
	Options
	Sizes   []int
	BufSize int // per half of the buffer: max(largest size, page)
	CQMod   int
	NoPeak  bool
	// sizeGiven says -s was given rather than the test's default size
	sizeGiven bool
	// udInlineCut says -I was above what perftest inlines on UD, and
	// was cut to it
	udInlineCut bool
	// burstIsTxDepth says the SW limiter took the TX depth for its
	// burst size, which perftest says
	burstIsTxDepth bool
}

// Perftest's bounds on the sizes people give.
const (
	maxIters       = 100000000
	maxTxDepth     = 15000
	maxPerftestQPs = 16384
	maxPerftestMsg = 2147483647
	// MaxDurationSecs is the largest -D: perftest keeps it in a C int.
	MaxDurationSecs = 2147483647
)

// Refusal is a value perftest's parser refuses: Text is its own line
// (ib_*_bw prints it and exits 1), Flag and Value what was given.
type Refusal struct {
	Flag, Value, Text string
	// Notice is what perftest's parser writes to stderr before it gets to
	// the refusal (a default it set on the way), or "".
	Notice string
}

func (e *Refusal) Error() string {
	if e.Flag == "" {
		return e.Text
	}
	return e.Flag + " " + e.Value + ": " + e.Text
}

// Perftest's refusals of the atomic options: -A on another test (its
// two lines, joined), and a size other than 8 (or -a) on an atomic test.
const (
	notAtomicTest   = "You are not running the atomic_lat/bw test! To change the atomic action type, you must run one of the atomic tests"
	atomicSizeFixed = "Message size cannot be changed for Atomic tests"
)

func refuse(flag string, v any, text string) error {
	return &Refusal{Flag: flag, Value: fmt.Sprint(v), Text: text}
}

// rangeTexts are perftest's refusals of the sizes whose 0 in Options
// means "the test's default".
var rangeTexts = map[string]string{
	"-s": fmt.Sprintf("Message Size should be between 1 and %d", maxPerftestMsg),
	"-n": fmt.Sprintf("Iteration num should be between 5 and %d", maxIters),
	"-t": fmt.Sprintf("Tx depth should be between 1 and %d", maxTxDepth),
	"-q": fmt.Sprintf("num of Qps should be between 1 and %d", maxPerftestQPs),
	"-r": fmt.Sprintf("Rx depth should be between %d and %d", minRx, maxRx),
}

// RefuseGivenZero is perftest's refusal of a 0 typed for flag (-s, -n,
// -t, -q or -r), which Options cannot carry: there 0 means the default.
func RefuseGivenZero(flag string) error {
	if text, ok := rangeTexts[flag]; ok {
		return refuse(flag, 0, text)
	}
	return nil
}

// DurationOf is -D given in seconds, refused as perftest refuses it, and
// above the C int perftest holds it in.
func DurationOf(secs int64) (time.Duration, error) {
	if secs <= 0 {
		return 0, refuse("-D", secs, "Duration period must be positive")
	}
	if secs > MaxDurationSecs {
		return 0, refuse("-D", secs, fmt.Sprintf("Duration period should be at most %d seconds", MaxDurationSecs))
	}
	return time.Duration(secs) * time.Second, nil
}

// Resolve fills in defaults and checks what perftest checks, before
// anything is allocated: perftest's refusals are *Refusal.
func (o Options) Resolve() (Resolved, error) {
	r := Resolved{Options: o, sizeGiven: o.Size != 0}
	if r.QPs == 0 {
		r.QPs = 1
	}
	if r.QPs < 1 || r.QPs > maxPerftestQPs {
		return r, refuse("-q", r.QPs, rangeTexts["-q"])
	}
	if r.QPs > 1 && o.Test.Latency() {
		return r, refuse("-q", r.QPs, "Multiple QPs only available on bw tests")
	}
	if r.QPs > rdma.MaxPerfQPs {
		return r, fmt.Errorf("-q %d: rdmactl runs 1 to %d QPs", r.QPs, rdma.MaxPerfQPs)
	}
	if r.AtomicType != "" && !o.Test.IsAtomic() {
		return r, refuse("-A", r.AtomicType, notAtomicTest)
	}
	if r.Size == 0 {
		switch {
		case o.Test.IsAtomic():
			r.Size = atomicSize
		case o.Test.Latency():
			r.Size = defSizeLat
		default:
			r.Size = defSizeBW
		}
	}
	if r.Size < 1 || r.Size > maxPerftestMsg {
		return r, refuse("-s", r.Size, rangeTexts["-s"])
	}
	if r.Iters == 0 {
		r.Iters = defIters
		if o.Test == WriteBW {
			r.Iters = defItersWriteBW
		}
	}
	if r.Iters < 5 || r.Iters > maxIters {
		return r, refuse("-n", r.Iters, rangeTexts["-n"])
	}
	if r.Duration < 0 {
		return r, refuse("-D", int64(r.Duration/time.Second), "Duration period must be positive")
	}
	if r.RunInfinitely {
		// perftest's parser lets --run_infinitely replace -a's method,
		// and runs it in duration mode, -D's period or its default.
		r.All = false
		if r.Duration == 0 {
			r.Duration = defInfinitePeriod
		}
	}
	// perftest's parser checks -t and -r as it reads them, before its
	// dependencies: the atomic size, then -D with -a
	if r.TxDepth != 0 && (r.TxDepth < 1 || r.TxDepth > maxTxDepth) {
		return r, refuse("-t", r.TxDepth, rangeTexts["-t"])
	}
	if r.RxDepth != 0 && (r.RxDepth < minRx || r.RxDepth > maxRx) {
		return r, refuse("-r", r.RxDepth, rangeTexts["-r"])
	}
	if r.RxDepth > 1 && !o.Test.IsSend() {
		// perftest 4.5-0.17 (the write tests too; newer ones take -r
		// on the write tests)
		return r, refuse("-r", r.RxDepth, "On RDMA verbs rx depth can be only 1")
	}
	if o.Test.IsAtomic() {
		// -a runs perftest's largest size, which is not 8 either
		if r.All {
			return r, refuse("", "", atomicSizeFixed)
		}
		if r.Size != atomicSize {
			return r, refuse("-s", r.Size, atomicSizeFixed)
		}
		if r.AtomicType == "" {
			r.AtomicType = FetchAndAdd
		}
	}
	if r.Size > maxSize {
		return r, fmt.Errorf("-s %d: rdmactl runs messages of 1 to %d bytes", r.Size, maxSize)
	}
	if o.Duration > 0 && r.Events {
		return r, refuse("", "", "Duration mode doesn't work with events.")
	}
	if r.Duration > 0 && r.All {
		return r, refuse("", "", "Duration mode currently doesn't support running on all sizes.")
	}
	if r.Conn == 0 {
		r.Conn = rdma.QPTypeRC
	}
	if err := checkConn(o.Test, r.Conn.String()); err != nil {
		return r, err
	}
	if r.Conn == rdma.QPTypeUC && r.RDMACM {
		return r, refuse("", "", "UC is not supported in librdmacm")
	}
	if r.Conn == rdma.QPTypeUD && r.RDMACM {
		return r, fmt.Errorf("-c UD with -R: rdmactl connects RC QPs over rdma_cm only; drop -R")
	}
	if r.TOS != nil && (*r.TOS < 0 || *r.TOS > maxTOS) {
		return r, refuse("-T", *r.TOS, fmt.Sprintf("TOS should be between 0 and %d", maxTOS))
	}
	if r.TOS != nil && !r.RDMACM {
		return r, refuse("-T", *r.TOS, "TOS only valid for rdma_cm based QP and RawEth QP")
	}
	if r.TrafficClass < 0 || r.TrafficClass > 255 {
		return r, fmt.Errorf("--tclass %d: the traffic class is 0 to 255", r.TrafficClass)
	}
	if r.TrafficClass != 0 && r.RDMACM {
		return r, fmt.Errorf("--tclass with -R: rdma_cm sets the QPs' traffic class; give -T for it")
	}
	if r.Bidirectional && o.Test.Latency() {
		return r, refuse("-b", "", "Bidirectional is only available in BW test")
	}
	if r.Bidirectional && r.ReportBoth && o.Test == SendBW && o.Duration > 0 {
		return r, fmt.Errorf("--report-both with -b -D: a timed send_bw -b trades no results (perftest prints an unset remote row); drop --report-both, each side prints its own")
	}
	if r.RunInfinitely {
		if err := r.infiniteRefusals(o.Test); err != nil {
			return r, err
		}
	}
	if r.Cycles && !o.Test.Latency() {
		return r, refuse("-C", "", "Available only on Latency tests")
	}
	if r.ReportCounters != "" {
		if _, err := ParseReportCounters(r.ReportCounters); err != nil {
			return r, err
		}
	}
	if r.InlineSize < 0 || r.InlineSize > maxInline {
		return r, refuse("-I", r.InlineSize, fmt.Sprintf("Max inline should be between 0 and %d", maxInline))
	}
	if r.InlineSize > 0 && o.Test.fetches() {
		return r, refuse("-I", r.InlineSize, "Inline feature not available on READ/Atomic verbs")
	}
	if r.Conn == rdma.QPTypeUD && r.InlineSize > maxInlineUD {
		r.InlineSize, r.udInlineCut = maxInlineUD, true
	}
	if r.TxDepth == 0 {
		r.TxDepth = defTxBW
		if o.Test.Latency() {
			r.TxDepth = defTxLat
		}
	}
	if r.Duration == 0 && r.TxDepth > r.Iters {
		r.TxDepth = r.Iters
	}
	if !o.Test.IsSend() {
		r.RxDepth = 1 // the only -r these tests take
	} else {
		if r.RxDepth == 0 {
			r.RxDepth = defRxSend
		}
		if r.Duration == 0 && r.RxDepth > r.Iters {
			r.RxDepth = r.Iters
		}
		if r.Duration == 0 && r.Conn != rdma.QPTypeRC && r.RxDepth == defRxSend {
			// nothing retries a message that finds no receive: post
			// one for every message, as perftest does
			r.RxDepth = min(r.Iters, ucMaxRx)
		}
		if r.RxDepth%2 == 1 && !r.All {
			r.RxDepth++ // perftest's work-around for odd depths
		}
	}
	r.CQMod = defCQMod
	if r.Size > cqModSizeLimit && !r.All && r.Conn != rdma.QPTypeUD {
		r.CQMod = 1
	}
	if o.CQModeration > 0 {
		r.CQMod = o.CQModeration
	}
	if r.PostList > 1 {
		switch {
		case o.Test.Latency():
			return r, refuse("", "", "Post list is supported in BW tests only")
		case r.Duration == 0 && r.Iters%r.PostList != 0:
			return r, refuse("", "", "Number of iterations must be a multiple of post list size")
		case o.CQModeration == 0:
			r.CQMod = r.PostList
		case r.PostList%o.CQModeration != 0:
			return r, refuse("", "", "Post list size must be a multiple of CQ moderation")
		}
		if r.PostList > rdma.MaxPostList {
			return r, fmt.Errorf("-l %d: rdmactl posts lists of at most %d", r.PostList, rdma.MaxPostList)
		}
		if r.PostList > r.TxDepth {
			return r, fmt.Errorf("-l %d: a post list must fit the TX depth (-t %d)", r.PostList, r.TxDepth)
		}
	}
	if r.RecvPostList > 1 {
		switch {
		case o.Test.Latency():
			return r, refuse("", "", "Receive post list is supported in BW tests only")
		case r.Duration == 0 && r.Iters%r.RecvPostList != 0:
			return r, refuse("", "", "Number of iterations must be a multiple of receive post list size")
		}
	}
	if r.CQMod > r.TxDepth {
		r.CQMod = r.TxDepth
	}
	if r.RecvPostList < 1 {
		r.RecvPostList = 1
	}
	if r.PostList < 1 {
		r.PostList = 1
	}
	r.NoPeak = r.Duration > 0 || r.Iters > noPeakIters || o.SkipPeak
	if r.Duration > 0 && !(r.Duration > 2*r.margin()) {
		return r, refuse("", "", "please check that DURATION > 2*MARGIN")
	}
	if r.All {
		for s := 2; s <= maxSize; s <<= 1 {
			r.Sizes = append(r.Sizes, s)
		}
	} else {
		r.Sizes = []int{r.Size}
	}
	largest := r.Sizes[len(r.Sizes)-1]
	r.BufSize = max(largest+r.recvExtra(), cycleBuffer)
	if r.MTU != 0 {
		if _, err := mtuEnum(r.MTU); err != nil {
			return r, err
		}
	}
	if err := r.checkHostOptions(o.Test); err != nil {
		return r, err
	}
	if r.PlotFile != "" {
		if err := r.checkPlot(); err != nil {
			return r, err
		}
	}
	if r.OutJSON && r.OutJSONFile == "" {
		r.OutJSONFile = DefaultOutJSONFile
	}
	if err := r.resolveRateLimit(o.Test); err != nil {
		return r, err
	}
	if r.TCPPort == 0 {
		r.TCPPort = DefaultTCPPort
	}
	if r.Timeout == 0 {
		r.Timeout = 2 * time.Minute
	}
	return r, nil
}

// infiniteRefusals are perftest's refusals of --run_infinitely, and
// rdmactl's where it has no end to give: one JSON document is written at
// the end, and the rdma_cm exchange has no way to notice a peer that left.
func (r Resolved) infiniteRefusals(t Test) error {
	switch {
	case r.Events:
		return refuse("", "", "run_infinitely does not support events feature yet.")
	case t.Latency():
		return refuse("", "", "run_infinitely exists only in BW tests for now.")
	case t.IsSend() && r.Bidirectional:
		return refuse("", "", "run_infinitely mode is not supported in SEND Bidirectional BW test")
	case r.RateLimit.limiter() != "":
		return refuse("", "", "run_infinitely does not support rate limit feature yet")
	case r.JSON:
		return fmt.Errorf("--json with --run_infinitely: the JSON document is written at the end, and this run has none; drop one of them")
	case r.RDMACM || r.CommRDMACM:
		return fmt.Errorf("--run_infinitely with -R or -z: rdmactl runs it over the TCP exchange only; drop -R/-z")
	}
	return nil
}

// margin is the time a -D run leaves out at each end: -f, or perftest's
// quarter of the whole seconds.
func (r Resolved) margin() time.Duration {
	if r.RunInfinitely {
		return 0 // each period counts whole
	}
	if r.Margin != nil {
		return *r.Margin
	}
	return time.Duration(int(r.Duration/time.Second)/4) * time.Second
}

// warnLargeCQMod says whether perftest's parser warns that -Q moderates
// the completions of large messages (it drops its own moderation there).
func (r Resolved) warnLargeCQMod() bool {
	return r.CQModeration > 1 && r.Size > cqModSizeLimit && !r.All && !r.Events && r.Conn != rdma.QPTypeUD
}

// qpTimeout is -u, or perftest's default.
func (r Resolved) qpTimeout() uint8 {
	if r.QPTimeout != nil {
		return uint8(*r.QPTimeout)
	}
	return defQPTimeout
}

// recvExtra is what a receive holds beyond the message: a UD message
// comes with the 40 bytes of its GRH before it.
func (r Resolved) recvExtra() int {
	if r.Conn == rdma.QPTypeUD {
		return udGRH
	}
	return 0
}

// fitMTU bounds a UD run's sizes by the path MTU of mtu bytes, as
// perftest does once the peers agreed on it: -s above it is refused, -a
// and the default size are cut to it (and it says so).
func (r *Resolved) fitMTU(mtu int, errOut io.Writer) error {
	if r.Conn != rdma.QPTypeUD || r.Sizes[len(r.Sizes)-1] <= mtu {
		return nil
	}
	if r.sizeGiven && !r.All {
		return refuse("-s", r.Size, "Max message size in UD cannot be greater than MTU")
	}
	fmt.Fprintf(errOut, " Max msg size in UD is MTU %d\n Changing to this MTU\n", mtu)
	if r.All {
		for len(r.Sizes) > 1 && r.Sizes[len(r.Sizes)-1] > mtu {
			r.Sizes = r.Sizes[:len(r.Sizes)-1]
		}
	} else {
		r.Size, r.Sizes = mtu, []int{mtu}
	}
	r.BufSize = max(r.Sizes[len(r.Sizes)-1]+udGRH, cycleBuffer)
	return nil
}

// inline says whether messages of size bytes travel in the request.
func (r Resolved) inline(size int) bool { return size <= r.InlineSize }

// sleeps says whether the bandwidth loops sleep on the completion channel
// while they wait: with -e, and by default where the process has one CPU
// and a peer that polls needs it: the send tests' receiver, and both
// sides of -b. A one-way write, read or atomic stream has a passive peer
// and rxe does its work inside the stream's own posts, so it spins there,
// as perftest does: it finds its completions made whenever it looks, and
// the timer that bounds a sleep would only interrupt it. --busy-poll
// always spins. A timed stream (-D, --run_infinitely) spins all the same
// (see session.streamOf).
func (r Resolved) sleeps() bool {
	if r.Events {
		return true
	}
	peerPolls := r.Test.IsSend() || r.Bidirectional
	return peerPolls && !r.BusyPoll && pollwait.AvailableCPUs() < 2
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

// recvsPosted is how many receives send_bw's server posts on each QP
// before the messages come: -r, in whole --recv_post_list lists, as
// perftest's (ctx->rposted).
func (r Resolved) recvsPosted() int {
	perQP := r.RxDepth / r.RecvPostList
	if r.sharesRecvQueue() {
		perQP /= r.QPs // the queue holds -r in all
	}
	return perQP * r.RecvPostList
}

// sharesRecvQueue says whether this side's QPs share a receive queue:
// with --use-srq (send tests only), where perftest makes one: on both
// sides of send_lat and of send_bw -b, on send_bw's server.
func (r Resolved) sharesRecvQueue() bool {
	return r.SRQ && (r.Test.Latency() || !r.active() || r.Bidirectional)
}

// active says whether this side runs the test's client part (perftest's
// machine): the side that connects, unless --reversed swaps the parts.
func (r Resolved) active() bool {
	return (r.Server != "") != r.Reversed
}
