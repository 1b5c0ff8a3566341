package rdma

import "time"

// The data-path verbs as small interfaces: a Context (an open device)
// makes protection domains, completion channels and CQs; a PD registers
// memory and makes QPs of every type, address handles and shared receive
// queues (qp.go).

// Context is an open device's resource factory (struct ibv_context).
type Context interface {
	AllocPD() (PD, error)
	CreateCompChannel() (CompChannel, error)
	// CreateCQ makes a CQ of at least cqe entries whose events arrive on ch.
	CreateCQ(cqe int, ch CompChannel) (CQ, error)
}

// PD is a protection domain.
type PD interface {
	// RegMR allocates size bytes of zeroed memory the collector never
	// moves and registers them with the given access. An allocation that
	// fails is an *Error with Op OpMalloc.
	RegMR(size int, access Access) (MR, error)
	// CreateRCQP makes an RC QP in RESET state.
	CreateRCQP(send, recv CQ, cap QPCap) (QP, error)
	// CreateQP makes a QP of any type in RESET state.
	CreateQP(a QPInitAttr) (QP, error)
	// CreateAH makes an address handle for UD sends (ibv_create_ah).
	CreateAH(a AHAttr) (AH, error)
	// CreateSRQ makes a shared receive queue (ibv_create_srq).
	CreateSRQ(a SRQAttr) (SRQ, error)
	Close() error
}

// Access is a set of IBV_ACCESS_* flags.
type Access uint32

// The access flags (enum ibv_access_flags).
const (
	AccessLocalWrite   Access = 1
	AccessRemoteWrite  Access = 2
	AccessRemoteRead   Access = 4
	AccessRemoteAtomic Access = 8
)

// OpMalloc is the Op of the *Error of a RegMR whose memory could not be
// allocated, as distinct from a registration the device refused.
const OpMalloc = "malloc"

// MR is registered memory and the memory itself.
type MR interface {
	// Bytes is the memory, valid until Close.
	Bytes() []byte
	Addr() uint64
	LKey() uint32
	RKey() uint32
	// Close deregisters the region and frees its memory.
	Close() error
}

// CompChannel delivers completion events (struct ibv_comp_channel).
type CompChannel interface {
	Close() error
}

// CQ is a completion queue tied to a completion channel.
type CQ interface {
	// Await returns up to len(wc) completions, waiting for at most timeout
	// (negative: forever) on the CQ's channel and on also, which may be
	// nil. alsoReady reports an event pending on also (n may be 0 then);
	// ErrTimeout when nothing came. It polls the CQ Spin times before it
	// sleeps and arms notification itself.
	Await(wc []WC, also EventChannel, timeout time.Duration) (n int, alsoReady bool, err error)
	// SetSpin sets how many polls Await tries before it sleeps.
	SetSpin(polls int)
	// Poll returns up to len(wc) completions without waiting.
	Poll(wc []WC) (int, error)
	Close() error
}

// SendRepeater is a QP that posts one request n times in one call, as the
// C tools' post loops do: cgoverbs's in C, where a call a post would cost
// the runtime a hand-off each time a post is a system call (rxe's doorbell).
// PostSendN stops at the first refusal and says how many went in.
type SendRepeater interface {
	PostSendN(wr SendWR, n int) (posted int, err error)
}

// CountPoller is a CQ that busy-polls in one call until n completions
// came, as the rdma_cm tools' loops do: cgoverbs's spins in C, where a
// call a poll lets the runtime preempt and hand off the spinning thread.
// It returns fewer once slice (negative: never) has passed, and may take
// up to a poll batch more than n, as the tools' loops may; the
// completions are counted, not returned.
type CountPoller interface {
	PollCount(n int, slice time.Duration) (int, error)
}

// WaitFds is implemented by CQs whose wait can be done by polling file
// descriptors: the completion channel's, and also's (-1 when also is nil
// or has none). A caller may then sleep in poll itself: ReadyToSleep
// takes completions or, when there are none (0), arms the CQ so that the
// next one makes the channel readable; Woken, once it is, consumes the
// channel's event and takes completions (0 when an earlier call already
// took them: arm again).
type WaitFds interface {
	WaitFds(also EventChannel) (channel, other int)
	ReadyToSleep(wc []WC) (int, error)
	Woken(wc []WC) (int, error)
}

// QP is a queue pair of any type. The transitions take the values their
// QP type uses and leave the others (see InitAttr, RTRAttr, RTSAttr).
type QP interface {
	Num() uint32
	PostSend(wr SendWR) error
	PostRecv(id uint64, sge SGE) error
	// PostRecvSGL posts one receive scattered over sges.
	PostRecvSGL(id uint64, sges []SGE) error
	ToInit(a InitAttr) error
	ToRTR(a RTRAttr) error
	ToRTS(a RTSAttr) error
	// ToError moves the QP to the error state, flushing its work.
	ToError() error
	// Query is the QP's state and the capabilities the device gave it.
	Query() (QPInfo, error)
	Close() error
}

// SGE is one scatter/gather entry.
type SGE struct {
	Addr uint64
	Len  uint32
	LKey uint32
}

// SGEOf is the entry for the first n bytes of mr.
func SGEOf(mr MR, n uint32) SGE { return SGE{Addr: mr.Addr(), Len: n, LKey: mr.LKey()} }

// WROpcode is a send work request's opcode (enum ibv_wr_opcode).
type WROpcode uint32

const (
	WRRDMAWrite         WROpcode = 0
	WRRDMAWriteWithImm  WROpcode = 1
	WRSend              WROpcode = 2
	WRSendWithImm       WROpcode = 3
	WRRDMARead          WROpcode = 4
	WRAtomicCmpAndSwp   WROpcode = 5
	WRAtomicFetchAndAdd WROpcode = 6
)

// SendWR is a send work request. Its data is Local, or SGL when that is
// not empty (Local is then ignored); none when both are zero. RemoteAddr
// and RKey are for RDMA reads, writes and atomics; Imm (host order) for
// the *WithImm opcodes; CompareAdd (the value to add, or to compare) and
// Swap for the atomics, whose 8-byte result lands in Local. UD is the
// destination of a send on a UD QP. Inline copies the data into the
// request (at most the QP's MaxInlineData bytes).
type SendWR struct {
	ID         uint64
	Op         WROpcode
	Local      SGE
	SGL        []SGE
	RemoteAddr uint64
	RKey       uint32
	Imm        uint32
	CompareAdd uint64
	Swap       uint64
	UD         *UDDest
	Signaled   bool
	Inline     bool
}

// QPCap sizes a queue pair; SigAll makes every send signalled.
type QPCap struct {
	MaxSendWR, MaxRecvWR, MaxSendSGE, MaxRecvSGE, MaxInlineData uint32
	SigAll                                                      bool
}
