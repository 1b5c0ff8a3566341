// Package rdmatest is an in-memory RDMA stack for tests, as net/http/httptest
// is an in-memory server: devices on one Fabric reach each other's queue
// pairs, and work requests really move bytes between their memory
// regions (SEND and RECV with immediate, RDMA WRITE and READ, the atomics,
// UD sends through an address handle, multicast groups, shared receive
// queues), its devices make perftest's endpoints (rdma.Perf, perf.go),
// and its connection manager raises the events rdma_cm raises (cm.go). A test can make any verb or rdma_cm call fail, any send
// complete with an error status, and a connection end as when the
// process at one end dies.
//
// Work completes when it is posted: a SEND on an RC QP whose peer has no
// receive posted waits, as the real one would retry, until one is; on UC
// and UD it is dropped, as on the wire.
package rdmatest

import (
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Fabric is one network of devices.
type Fabric struct {
	mu       sync.Mutex
	devices  []*Device
	qps      map[uint32]*QP
	mrs      map[uint32]*MR
	nextQPN  uint32
	nextKey  uint32
	nextAddr uint64
	failVerb map[string][]error
	failWC   []rdma.WCStatus
	corrupt  int
	drop     int
	opens    int

	corruptWrites int
	posts         map[rdma.WROpcode]int
	// recvBatches is how many receives each PostRecvs call of a perf
	// endpoint posted, in order.
	recvBatches []int
	endOp       rdma.WROpcode
	endAfter    int
	// lostDREQs queues the resend delays of the disconnect requests to
	// lose (LoseNextDisconnectRequest).
	lostDREQs []time.Duration

	bound    []*CMID // ids with a local address, listeners among them
	nextPort uint16
	groups   map[rdma.GID][]*QP

	made     []*QP // every QP made, closed ones too
	inlined  int
	signaled int
	params   []rdma.ConnParam
	tos      []uint8
	// connectTOS is the type of service of each id that connected, in
	// the order of the connects (0: none set).
	connectTOS []uint8
	wire       time.Duration
	// sleepingRuns counts the perf data paths that slept (SleepingRuns).
	sleepingRuns int
	// connectDelays[k] is how long the k-th next rdma_connect waits
	// before it starts (DelayConnect).
	connectDelays []time.Duration
}

// NewFabric is an empty network.
func NewFabric() *Fabric {
	return &Fabric{
		qps: map[uint32]*QP{}, mrs: map[uint32]*MR{}, failVerb: map[string][]error{}, posts: map[rdma.WROpcode]int{},
		nextQPN: 0x11, nextKey: 0x100, nextAddr: 0x7f0000000000,
	}
}

// FailNext makes the next call of verb (its libibverbs name, e.g.
// "ibv_post_send", "ibv_modify_qp", "ibv_create_ah", or rdma.OpMalloc for
// the memory RegMR allocates) on any device return err; calls queue in
// order.
func (f *Fabric) FailNext(verb string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failVerb[verb] = append(f.failVerb[verb], err)
}

// FailNextCompletion makes the next send work request posted on the
// fabric move nothing and complete with status instead.
func (f *Fabric) FailNextCompletion(status rdma.WCStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failWC = append(f.failWC, status)
}

// DelayConnect makes the n-th next rdma_connect (1: the next) wait d
// before it starts, as a connect the kernel is slow to take; the fabric
// goes on meanwhile.
func (f *Fabric) DelayConnect(n int, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.connectDelays) < n {
		f.connectDelays = append(f.connectDelays, 0)
	}
	f.connectDelays[n-1] = d
}

// connectDelay takes the delay of this rdma_connect; f.mu not held.
func (f *Fabric) connectDelay() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.connectDelays) == 0 {
		return 0
	}
	d := f.connectDelays[0]
	f.connectDelays = f.connectDelays[1:]
	return d
}

// CorruptNextSends makes the next n SENDs arrive with their first byte
// inverted, as a path that damages data would.
func (f *Fabric) CorruptNextSends(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corrupt += n
}

// DropNextSends makes the next n SENDs vanish on the wire: no receive
// takes them, and an RC sender sees no completion, as when packets never
// get through (a real one gives up only after its retries).
func (f *Fabric) DropNextSends(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drop += n
}

// CorruptNextWrites makes the next n RDMA WRITEs land with their first
// byte inverted.
func (f *Fabric) CorruptNextWrites(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corruptWrites += n
}

// DisconnectAfter ends the connection of the QP that posts the n-th next
// work request of op, once that request has done its work, as when the
// process at one end dies: both QPs go to the error state and both ids
// see DISCONNECTED.
func (f *Fabric) DisconnectAfter(op rdma.WROpcode, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endOp, f.endAfter = op, n
}

// LoseNextDisconnectRequest loses the next rdma_disconnect's request on
// the wire, as the kernel's CM meets a lost DREQ: neither end sees
// DISCONNECTED until the CM sends the request again, resendAfter later,
// and only if the disconnecting id still lives then (destroying it
// cancels the resend, and the peer never learns).
func (f *Fabric) LoseNextDisconnectRequest(resendAfter time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lostDREQs = append(f.lostDREQs, resendAfter)
}

// Posts is how many work requests of op were posted on the fabric and
// did their work.
func (f *Fabric) Posts(op rdma.WROpcode) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts[op]
}

// InlinePosts is how many send work requests were posted with their
// payload inline (IBV_SEND_INLINE).
func (f *Fabric) InlinePosts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inlined
}

// SignaledPosts is how many send work requests asked for a completion
// (IBV_SEND_SIGNALED, or a QP that signals all) and did their work.
func (f *Fabric) SignaledPosts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.signaled
}

// SleepingRuns is how many perf Streams and Receives ran sleeping on
// their CQ's completion channel (rdma.Stream.Events, rdma.Receive.Events).
func (f *Fabric) SleepingRuns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sleepingRuns
}

// RecvBatches is how many receives each call of a perf endpoint's
// PostRecvs posted, in order.
func (f *Fabric) RecvBatches() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.recvBatches)
}

// QPRecord is what a QP was made and readied with.
type QPRecord struct {
	Num  uint32
	Type rdma.QPType
	// CM: rdma_cm made the QP (rdma_create_qp) and readied it.
	CM bool
	// SRQ: the QP takes its receives from a shared receive queue.
	SRQ bool
	// Readied: the QP reached RTS, with these attributes (a QP the CM
	// readied has the ones rdma_cm computed).
	Readied bool
	RTR     rdma.RTRAttr
	RTS     rdma.RTSAttr
	// SendCQ and RecvCQ are the QP's CQs, to tell shared ones apart.
	SendCQ, RecvCQ *CQ
}

// QPRecords are the records of every QP made on the fabric, closed ones
// too, in the order they were made.
func (f *Fabric) QPRecords() []QPRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]QPRecord, len(f.made))
	for i, q := range f.made {
		out[i] = QPRecord{Num: q.num, Type: q.typ, CM: q.byCM, SRQ: q.srq != nil, Readied: q.readied, RTR: q.rtr, RTS: q.rts,
			SendCQ: q.send, RecvCQ: q.recv}
	}
	return out
}

// ConnParams are the connection parameters of every connect request a
// listener took and of every accept, in order.
func (f *Fabric) ConnParams() []rdma.ConnParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.params)
}

// TypesOfService are the types of service set on ids, in order.
func (f *Fabric) TypesOfService() []uint8 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tos)
}

// ConnectTypesOfService are the types of service of the ids that
// called rdma_connect, in order; 0 where none was set.
func (f *Fabric) ConnectTypesOfService() []uint8 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.connectTOS)
}

// Opens is how many times a device was opened.
func (f *Fabric) Opens() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opens
}

// injected is the error queued for verb, if any; f.mu held.
func (f *Fabric) injected(verb string) error {
	q := f.failVerb[verb]
	if len(q) == 0 {
		return nil
	}
	f.failVerb[verb] = q[1:]
	return q[0]
}

// call starts a verb: the injected error, if any; f.mu held.
func (f *Fabric) call(verb string) error {
	return f.injected(verb)
}

// callOn starts a verb on device d: d's injected error, else the
// fabric's; f.mu held.
func (f *Fabric) callOn(d *Device, verb string) error {
	if q := d.failVerb[verb]; len(q) > 0 {
		d.failVerb[verb] = q[1:]
		return q[0]
	}
	return f.injected(verb)
}

// DeviceList lists the fabric's devices (rdma.Verbs).
func (f *Fabric) DeviceList() ([]rdma.DeviceEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ibv_get_device_list"); err != nil {
		return nil, err
	}
	out := make([]rdma.DeviceEntry, len(f.devices))
	for i, d := range f.devices {
		out[i] = rdma.DeviceEntry{Name: d.cfg.Name, NodeGUID: rdma.GUID(0x0200_0000_0000_0000 + uint64(i))}
	}
	return out, nil
}

// Open opens the named device (rdma.Verbs); an unknown name is ENODEV.
func (f *Fabric) Open(name string) (rdma.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ibv_open_device"); err != nil {
		return nil, err
	}
	for _, d := range f.devices {
		if d.cfg.Name == name {
			f.opens++
			return d, nil
		}
	}
	return nil, rdma.Errorf("ibv_open_device("+name+")", syscall.ENODEV)
}

var _ rdma.Verbs = (*Fabric)(nil)
