package rdma

import (
	"errors"
	"fmt"
	"time"
)

// WCError is a work completion that came back with an error status, as the
// batched data paths report it.
type WCError struct {
	Status    WCStatus
	VendorErr uint32
}

func (e *WCError) Error() string {
	return fmt.Sprintf("completion with error: %s (status %d, vendor error 0x%x)", e.Status, uint32(e.Status), e.VendorErr)
}

// Perf is what an open Device may offer perftest's tests (rdmactl perf),
// found by type assertion: RC, UC or UD
// QPs sharing a send and a receive CQ and one registered buffer, and the
// data paths as one call each.
type Perf interface {
	// NewPerfEndpoint makes the endpoint's resources and moves its QPs to
	// INIT on c.Port; failures are rdma.Errors naming the verb.
	NewPerfEndpoint(c PerfConfig) (PerfEndpoint, error)
}

// PerfConfig sizes one perf endpoint.
type PerfConfig struct {
	Port uint8
	// Type is the QPs' transport: QPTypeRC (also for 0), QPTypeUC or
	// QPTypeUD.
	Type QPType
	// QKey is the UD QPs' Q_Key, which their sends carry too.
	QKey    uint32
	QPs     int // 0 means 1; at most MaxPerfQPs
	BufSize int // the whole registered buffer, shared by the QPs
	TxDepth int
	RxDepth int
	// Events gives both CQs a completion channel, so that CQ.Await,
	// Stream and Receive can sleep (latency tests without --busy-poll,
	// bandwidth tests with -e).
	Events bool
	// MaxInline is the QPs' max_inline_data: sends of up to this many
	// bytes may carry their payload in the request (perftest -I).
	MaxInline int
	// HugePages backs the buffer with huge pages (perftest
	// --use_hugepages); MmapFile with a shared mapping of that file from
	// MmapOffset (--mmap). Either failing is ErrPerfBuffer.
	HugePages  bool
	MmapFile   string
	MmapOffset int64
	// SRQ gives the QPs one shared receive queue of RxDepth receives
	// (perftest --use-srq): PostRecvs and the receiving loops post there,
	// each receive still naming the QP whose share of the buffer it uses.
	SRQ bool
	// MRPerQP registers each QP's share of the buffer (BufSize/QPs bytes,
	// in QP order) as a memory region of its own, with its own keys
	// (perftest --mr_per_qp); otherwise one region covers it all.
	MRPerQP bool
}

// ErrPerfBuffer is a perf endpoint's buffer that could not be had: no
// huge pages, a file that would not map.
var ErrPerfBuffer = errors.New("no buffer")

// MaxPostList bounds Stream.PostList.
const MaxPostList = 64

// MaxPerfQPs bounds PerfConfig.QPs.
const MaxPerfQPs = 16

// PerfEndpoint is RC, UC or UD QPs, their CQs and a registered buffer (access:
// local write, remote write and read). The QPs are in INIT; the caller
// brings each to RTS with its peer's values. The single-message verbs
// (PostSend, SendPingPong) use QP 0.
type PerfEndpoint interface {
	// QPN is the number of QP qp (0 … QPs-1).
	QPN(qp int) uint32
	// Buffer is the registered memory, valid until Close; Addr is where
	// it starts, LKey and RKey are the keys of QP qp's share of it (the
	// same for every QP unless PerfConfig.MRPerQP).
	Buffer() []byte
	Addr() uint64
	LKey(qp int) uint32
	RKey(qp int) uint32
	// ToRTR readies QP qp to receive; a UD QP also takes a's address
	// and DestQPN as the peer its sends go to (an address handle).
	ToRTR(qp int, a RTRAttr) error
	ToRTS(qp int, a RTSAttr) error
	SendCQ() CQ
	RecvCQ() CQ
	// MaxInline is the max_inline_data the device gave the QPs: at least
	// PerfConfig.MaxInline, or less where the device holds less.
	MaxInline() int
	PostSend(wr SendWR) error
	// PostRecvs posts n receives of sge on QP qp (on the shared receive
	// queue with PerfConfig.SRQ), several per call; their work request ID
	// is qp, so that a receive's completion names its QP.
	PostRecvs(qp, n int, sge SGE) error
	// Stream is a bandwidth test's active side in one call: see Stream.
	Stream(s Stream) (StreamResult, error)
	// Receive is send_bw's receiving side of one size in one call: see
	// Receive.
	Receive(r Receive) (ReceiveResult, error)
	// SendPingPong is send_lat's loop with busy polling in one call: see
	// SendPingPong.
	SendPingPong(p SendPingPong) error
	// RequestPingPong is read_lat's and atomic_lat's loop with busy
	// polling in one call: see RequestPingPong.
	RequestPingPong(p RequestPingPong) error
	// WritePingPong is write_lat's loop with busy polling in one call:
	// see WritePingPong.
	WritePingPong(p WritePingPong) error
	// WaitByte waits until Buffer()[off] reads want (a peer's RDMA write
	// landing) for at most timeout; yield gives the CPU away between looks.
	// ErrTimeout when it did not.
	WaitByte(off int, want byte, timeout time.Duration, yield bool) error
	Close() error
}

// Stream is one bandwidth run, perftest's run_iter_bw: on each QP of
// Targets (one per QP, in order), Iters requests of Op, at most TxDepth in
// flight per QP, every CQMod-th and the last signalled; the QPs take turns
// posting, one ibv_post_send per request (rxe did best so), and up to 16
// completions are taken per ibv_poll_cq.
//
// With Duration set it runs for that long instead and reports only the
// completions of its sample window, from Margin after the start to Margin
// before the end (perftest's): their count and the stamps of the first
// and the last. Otherwise Posted[k] and
// Completed[k] receive monotonic nanosecond stamps (only differences mean
// anything) of the k-th post and of the completion that brought the
// number completed to k+1, over all QPs; both must hold Iters×QPs
// entries. Idle bounds the wait for any completion.
type Stream struct {
	Op       WROpcode
	Targets  []StreamTarget
	Iters    int
	TxDepth  int
	CQMod    int
	PostList int // requests per ibv_post_send, chained (0 means 1)
	// Inline posts every request with its payload in it (IBV_SEND_INLINE).
	Inline    bool
	Duration  time.Duration
	Margin    time.Duration
	Idle      time.Duration
	Posted    []int64
	Completed []int64
	// Tail is, for a timed run on QPs a previous timed run used, that
	// run's StreamResult.Tail: requests it left in flight unseen.
	Tail []int
	// Continues says that another timed run follows on these QPs
	// (--run_infinitely's next period): this one waits at its end for
	// its signalled requests, so that the next counts from its Tail.
	// Otherwise a timed run ends at its time, as perftest's, without
	// waiting for requests a peer whose own time ended no longer takes.
	Continues bool
	// Pace is perftest's software rate limiter; the zero value posts as
	// fast as the depth allows.
	Pace Pace
	// Events sleeps on the send CQ's completion channel while it is empty
	// and requests are in flight (perftest -e); the endpoint needs
	// PerfConfig.Events. With Receive (whose Events must be the same) it
	// sleeps on both CQs' channels while neither has a completion.
	Events bool
	// Receive is, for send_bw -b, the peer's messages to take meanwhile
	// from the receive CQ, as Endpoint.Receive takes them (perftest's
	// run_iter_bi): the run ends when both are done. With Duration,
	// Receive.Iters bounds nothing, the run ends at its time without
	// waiting for its last requests, and StreamResult.Completed counts
	// the window's sends and receives both, as run_iter_bi does. Nil
	// takes none.
	Receive *Receive
	// AfterFirstMessage posts nothing before the first of Receive's
	// messages came (perftest's server under -b); a Duration runs from
	// that message.
	AfterFirstMessage bool
}

// ErrSleepMismatch refuses a Stream whose Receive does not sleep as it
// does: one loop waits on both CQs' channels or on neither.
var ErrSleepMismatch = errors.New("a stream and the receiving beside it sleep both or neither")

// Pace limits a Stream's rate: bursts of Burst requests over all its QPs,
// a burst begun at most once per Gap.
type Pace struct {
	Burst int
	Gap   time.Duration
}

// StreamTarget is one QP's part of a Stream: its local memory and, for
// reads and writes, the peer's.
type StreamTarget struct {
	Local      SGE
	RemoteAddr uint64
	RKey       uint32
}

// StreamResult is how far a Stream got: Completed requests, and with
// Duration those of the sample window and the stamps of its first and
// last completion.
type StreamResult struct {
	Completed   uint64
	Received    uint64 // of Stream.Receive's messages
	First, Last int64
	// Ended stamps the end of a counted Stream with Receive: the later of
	// its last completion and its last message (perftest's end of
	// run_iter_bi, the time it reports without the peak).
	Ended int64
	// Tail is, per QP, the requests after the last signalled one: they
	// complete unseen, holding send-queue slots until they do.
	Tail []int
}

// SendPingPong is one send_lat run with busy polling, perftest's
// run_iter_lat_send: Iters SENDs of Local, each signalled and its
// completion awaited, alternating with receives into Recv, re-posted while
// more than RxDepth are due; the client sends first. Posted[i] (Iters
// entries) receives the monotonic nanosecond stamp of send i. Idle bounds
// each wait.
type SendPingPong struct {
	Local, Recv SGE
	Iters       int
	RxDepth     int
	Client      bool
	Inline      bool // each SEND carries its payload (IBV_SEND_INLINE)
	Idle        time.Duration
	Posted      []int64
}

// RequestPingPong is one read_lat or atomic_lat run with busy polling,
// perftest's run_iter_lat: Iters requests of Op (an RDMA read or an
// atomic, with perftest's operands) from Local to RemoteAddr on QP 0, each
// signalled and its completion awaited before the next. Posted[i] (Iters
// entries) receives the monotonic nanosecond stamp of request i. Idle
// bounds each wait. A failure names the request: "request 3 of 1000: …".
type RequestPingPong struct {
	Op         WROpcode
	Local      SGE
	RemoteAddr uint64
	RKey       uint32
	Iters      int
	Idle       time.Duration
	Posted     []int64
}

// WritePingPong is one write_lat run with busy polling, perftest's
// run_iter_lat_write on QP 0: each side RDMA-writes Local, whose last
// byte carries its count, to RemoteAddr, waits for that write's
// completion, and spins on Buffer()[PollOff] until the peer's count lands
// there; the server writes first. Posted[i] (Iters entries) receives the
// monotonic nanosecond stamp of write i. Idle bounds each wait. A failure
// names the step: "write 3 of 1000: …" or "waiting for the peer's write
// 3 of 1000: …".
type WritePingPong struct {
	Local      SGE
	RemoteAddr uint64
	RKey       uint32
	PollOff    int
	Iters      int
	Client     bool
	Inline     bool // each write carries its payload (IBV_SEND_INLINE)
	Idle       time.Duration
	Posted     []int64
}

// Receive is send_bw's receiving side of one size, perftest's
// run_iter_bw_server: Iters messages on each QP of SGEs (one per QP, whose
// RxDepth receives the caller posted), taken from the shared receive CQ
// up to 16 per poll, each QP's receives re-posted after a poll while more
// are due there. Idle bounds the wait for any message.
type Receive struct {
	SGEs    []SGE
	Iters   int
	RxDepth int // receives posted on each QP before the call
	// PostList re-posts receives in whole lists of this many (0 or 1:
	// every one as it is used).
	PostList int
	Idle     time.Duration
	// Events sleeps on the receive CQ's completion channel while it is
	// empty (perftest -e); the endpoint needs PerfConfig.Events.
	Events bool
}

// ReceiveResult is how many messages came and monotonic nanosecond
// stamps: First of the poll that took the first, Last of the loop's end
// (perftest's server's, after its last re-post: messages all taken in
// one poll still span some time).
type ReceiveResult struct {
	Completed   uint64
	First, Last int64
}
