package cgoverbs

/*
#cgo LDFLAGS: -lrt
#include <stdlib.h>
#include "pingpong.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

var _ rdma.PingPonger = cmCQ{}

// cancelAgain is how often a done context's pp_cancel is repeated until
// a loop that sleeps is out: it can miss one signal. A polling loop sees
// the flag of the first.
const cancelAgain = 10 * time.Millisecond

// PingPong runs the tools' loop in C, the whole run in one cgo call; a
// done ctx reaches it as a flag it looks at between polls, and a signal
// that wakes it from its sleep on the channel.
func (cq cmCQ) PingPong(ctx context.Context, p *rdma.PingPong, idle time.Duration) error {
	if p.Events && cq.ch == nil {
		return errors.New("CQ has no completion channel")
	}
	qps := make([]*C.struct_ibv_qp, len(p.QPs))
	for i, q := range p.QPs {
		qp, ok := q.(cmQP)
		if !ok {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		qps[i] = qp.qp
	}
	pending := make([]uint64, len(qps))
	r := (*C.struct_pp_run)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_pp_run{}))))
	if r == nil {
		return rdma.Errorf("ping-pong loop", syscall.ENOMEM)
	}
	defer C.free(unsafe.Pointer(r))
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&qps[0])
	pin.Pin(&pending[0])
	r.cq, r.st, r.nqp = cq.cq, cq.st, C.int(len(qps))
	r.qps = &qps[0]
	r.pending = (*C.uint64_t)(unsafe.Pointer(&pending[0]))
	if p.Events {
		r.ch = cq.ch.ch
	}
	if p.SRQ != nil {
		s, ok := p.SRQ.(*SRQ)
		if !ok {
			return rdma.Errorf("ibv_post_srq_recv", syscall.EINVAL)
		}
		r.srq = s.srq
	}
	if p.UD != nil {
		ah, ok := p.UD.AH.(*AH)
		if !ok || ah.ah == nil {
			return rdma.Errorf("ibv_post_send", syscall.EINVAL)
		}
		r.ah, r.rqpn, r.rqkey = ah.ah, C.uint32_t(p.UD.QPN), C.uint32_t(p.UD.QKey)
	}
	if p.Stamps != nil {
		pin.Pin(&p.Stamps[0])
		r.stamps = (*C.int64_t)(unsafe.Pointer(&p.Stamps[0]))
	}
	r.send_addr, r.send_len, r.send_lkey = C.uint64_t(p.Send.Addr), C.uint32_t(p.Send.Len), C.uint32_t(p.Send.LKey)
	r.recv_addr, r.recv_len, r.recv_lkey = C.uint64_t(p.Recv.Addr), C.uint32_t(p.Recv.Len), C.uint32_t(p.Recv.LKey)
	r.inline_send = cBool(p.Inline)
	r.send_id, r.recv_id = C.uint64_t(p.SendID), C.uint64_t(p.RecvID)
	r.iters, r.rx_depth, r.client = C.int(p.Iters), C.int(p.RxDepth), cBool(p.Client)
	r.signal_every = C.int(p.SignalEvery)
	r.yield_after = C.long(p.YieldAfter)
	r.outstanding = C.int(p.Outstanding)
	r.idle_ms = timeoutMillis(idle)

	out, cancelled := make(chan struct{}), make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(cancelled)
		C.pp_cancel(r)
		if !p.Events {
			return
		}
		again := time.NewTicker(cancelAgain)
		defer again.Stop()
		for {
			select {
			case <-out:
				return
			case <-again.C:
				C.pp_cancel(r)
			}
		}
	})
	err := runLoop(C.pp_loop_off, unsafe.Pointer(r))
	close(out)
	if !stop() {
		<-cancelled // r stays allocated until pp_cancel is out
	}
	if err != nil {
		return err
	}
	rc := r.rc
	p.Sent, p.Received, p.Outstanding = int(r.sent), int(r.received), int(r.outstanding)
	p.Posted = int(r.posted)
	p.Began, p.Ended = int64(r.began), int64(r.ended)
	if rc < 0 {
		if p.Events {
			return callErr("ibv_get_cq_event", rc)
		}
		return callErr("ibv_poll_cq", rc)
	}
	p.Stop = rdma.PingPongStop(r.stop)
	p.Polled = int(r.polled)
	w := r.wc
	p.WC = rdma.WC{WRID: uint64(w.wr_id), Status: rdma.WCStatus(w.status), Opcode: rdma.WCOpcode(w.opcode),
		VendorErr: uint32(w.vendor_err), ByteLen: uint32(w.byte_len), QPNum: uint32(w.qp_num)}
	return nil
}
