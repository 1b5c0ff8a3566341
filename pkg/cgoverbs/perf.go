package cgoverbs

/*
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <infiniband/verbs.h>

// perftest's CTX_POLL_BATCH: completions taken per ibv_poll_cq.
enum { PF_POLL_BATCH = 16 };

static int64_t pf_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// The loops stamp each message with the CPU's counter, as perftest's
// get_cycles does: clock_gettime may be a system call (the lab's qemu
// guest runs on the hpet clocksource: 1.3 us a call against 19 ns for
// rdtsc), and one per message on each side of send_lat added 1.3 us to
// its typical latency. pf_clock_to_ns turns the stamps into
// CLOCK_MONOTONIC nanoseconds, the counter's rate measured over the run
// itself rather than read from /proc/cpuinfo.
static inline int64_t pf_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
	return (int64_t)__rdtsc();
#elif defined(__aarch64__)
	int64_t v;
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return pf_now_ns();
#endif
}

struct pf_clock {
	int64_t ns0, ticks0;
};

static void pf_clock_start(struct pf_clock *c) {
	c->ns0 = pf_now_ns();
	c->ticks0 = pf_ticks();
}

// pf_clock_stop is the counter's rate over the run, in nanoseconds a
// tick, measured over at least a millisecond so that the clock's
// resolution and the cost of reading it do not skew it.
static double pf_clock_stop(const struct pf_clock *c) {
	int64_t ns1, ticks1;
	do {
		ns1 = pf_now_ns();
		ticks1 = pf_ticks();
	} while (ns1 - c->ns0 < 1000000);
	return ticks1 > c->ticks0 ? (double)(ns1 - c->ns0) / (double)(ticks1 - c->ticks0) : 1.0;
}

// pf_clock_to_ns rewrites n pf_ticks stamps as CLOCK_MONOTONIC nanoseconds.
static void pf_clock_to_ns(const struct pf_clock *c, double per_tick, int64_t *s, int64_t n) {
	for (int64_t i = 0; i < n; i++)
		s[i] = c->ns0 + (int64_t)((double)(s[i] - c->ticks0) * per_tick);
}

// pf_post_recvs posts n receives of the same memory, 32 per call, each
// with work request ID wr_id.
static int pf_post_recvs(struct ibv_qp *qp, int n, uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr[32], *bad;
	while (n > 0) {
		int k = n < 32 ? n : 32;
		for (int i = 0; i < k; i++) {
			wr[i].wr_id = wr_id;
			wr[i].sg_list = &sge;
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		int rc = ibv_post_recv(qp, wr, &bad);
		if (rc)
			return rc;
		n -= k;
	}
	return 0;
}

// pf_spin_byte waits until *p == want, for at most timeout_ms (negative:
// forever); with yield it gives the CPU away between looks. 0 or ETIMEDOUT.
static int pf_spin_byte(const volatile uint8_t *p, uint8_t want, int timeout_ms, int yield) {
	int64_t deadline = pf_now_ns() + (int64_t)timeout_ms * 1000000;
	for (unsigned i = 0;; i++) {
		if (*p == want)
			return 0;
		if (timeout_ms >= 0 && (i & 1023) == 1023 && pf_now_ns() > deadline)
			return ETIMEDOUT;
		if (yield)
			sched_yield();
	}
}

// PF_MAX_QPS is rdma.MaxPerfQPs.
enum { PF_MAX_QPS = 16 };

// pf_run describes one bandwidth run (rdma.Stream) and receives its end.
struct pf_run {
	int opcode, nqp;
	struct ibv_qp *qp[PF_MAX_QPS];
	uint64_t laddr[PF_MAX_QPS], raddr[PF_MAX_QPS];
	uint32_t rkey[PF_MAX_QPS];
	uint32_t len, lkey;
	int64_t iters;      // per QP; 0 with duration_ns
	int64_t duration_ns, margin_ns;
	int tx_depth, cq_mod, idle_ms;
	// out
	int64_t done, first, last;
	uint32_t bad_status, bad_vendor;
};

// pf_stream is a whole bandwidth run in one call, so that no scheduler
// sits between a completion and the next post (a Go loop of short cgo
// calls let the runtime hand the thread off and cost half the bandwidth
// under emulation). Per QP: one request per ibv_post_send, at most
// tx_depth in flight, every cq_mod-th and the last signalled; up to
// PF_POLL_BATCH completions per poll of the shared CQ: perftest's
// run_iter_bw. A work request's id is its QP's index in the top 16 bits
// and its number on that QP below. posted and completed hold iters × nqp
// entries each (unused with duration_ns). Returns 0; -1 on a failed
// completion (r->bad_*), -2 when idle_ms passed without a completion, or
// -3 - errno when posting failed.
static int pf_stream_loop(struct ibv_cq *cq, struct pf_run *r, const struct pf_clock *clk, int64_t *posted, int64_t *completed) {
	struct ibv_sge sge[PF_MAX_QPS];
	struct ibv_send_wr wr[PF_MAX_QPS], *bad;
	struct ibv_wc wc[PF_POLL_BATCH];
	int64_t scnt[PF_MAX_QPS] = {0}, ccnt[PF_MAX_QPS] = {0};
	for (int q = 0; q < r->nqp; q++) {
		sge[q] = (struct ibv_sge){.addr = r->laddr[q], .length = r->len, .lkey = r->lkey};
		memset(&wr[q], 0, sizeof wr[q]);
		wr[q].sg_list = &sge[q];
		wr[q].num_sge = 1;
		wr[q].opcode = r->opcode;
		wr[q].wr.rdma.remote_addr = r->raddr[q];
		wr[q].wr.rdma.rkey = r->rkey[q];
	}
	int timed = r->duration_ns > 0;
	int64_t iters = timed ? INT64_MAX : r->iters, tot = timed ? INT64_MAX : r->iters * r->nqp;
	int64_t totscnt = 0, totccnt = 0;
	int64_t end = clk->ns0 + r->duration_ns;
	// With a duration only the sample window counts: completions seen
	// while the last look at the clock fell in it.
	int64_t win_from = clk->ns0 + r->margin_ns, win_to = end - r->margin_ns;
	int in_window = r->margin_ns <= 0;
	int64_t win_done = 0;
	int64_t deadline = clk->ns0 + (int64_t)r->idle_ms * 1000000;
	// With a duration the clock is read after every poll that took
	// completions (a full pipe under emulation keeps every poll full, so
	// counting passes alone let 1024 completions by between reads) and
	// every 64th pass otherwise.
	unsigned spins = 0, passes = 0;
	int stop = 0, progressed = 0, look = 1;
	r->first = clk->ticks0;
	r->last = clk->ticks0;
	for (;;) {
		for (int q = 0; q < r->nqp && !stop; q++) {
			while (scnt[q] < iters && scnt[q] - ccnt[q] < r->tx_depth) {
				wr[q].wr_id = (uint64_t)q << 48 | (uint64_t)scnt[q];
				wr[q].send_flags = (scnt[q] + 1) % r->cq_mod == 0 || scnt[q] + 1 == iters ? IBV_SEND_SIGNALED : 0;
				if (!timed)
					posted[totscnt] = pf_ticks();
				int rc = ibv_post_send(r->qp[q], &wr[q], &bad);
				if (rc)
					return -3 - rc;
				scnt[q]++;
				totscnt++;
			}
		}
		if (timed && !stop && (look || ++passes % 64 == 0)) {
			look = 0;
			int64_t t = pf_now_ns();
			stop = t >= end;
			in_window = t >= win_from && t < win_to;
		}
		if (timed && stop) {
			// Requests after a QP's last signalled one complete unseen.
			int drained = 1;
			for (int q = 0; q < r->nqp; q++)
				drained &= ccnt[q] >= scnt[q] - scnt[q] % r->cq_mod;
			if (drained)
				break;
		} else if (!timed && totccnt >= tot) {
			break;
		}
		int ne = ibv_poll_cq(cq, PF_POLL_BATCH, wc);
		if (ne < 0)
			return -3 - EIO;
		if (ne == 0) {
			if ((++spins & 0xffff) == 0) {
				// idle_ms counts from the first look at the clock
				// after the last completion.
				int64_t now = pf_now_ns();
				if (progressed)
					deadline = now + (int64_t)r->idle_ms * 1000000;
				else if (now > deadline)
					return -2;
				progressed = 0;
			}
			continue;
		}
		progressed = 1;
		look = 1;
		int64_t now = pf_ticks();
		for (int i = 0; i < ne; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				r->bad_status = wc[i].status;
				r->bad_vendor = wc[i].vendor_err;
				r->done = totccnt;
				return -1;
			}
			int q = (int)(wc[i].wr_id >> 48);
			int64_t n = (int64_t)(wc[i].wr_id & 0xffffffffffffULL) + 1;
			if (q >= r->nqp || n <= ccnt[q])
				continue;
			if (timed && in_window) {
				if (win_done == 0)
					r->first = now;
				win_done += n - ccnt[q];
				r->last = now;
			}
			totccnt += n - ccnt[q];
			ccnt[q] = n;
			if (!timed)
				completed[totccnt - 1] = now;
		}
	}
	r->done = timed ? win_done : totccnt;
	return 0;
}

// pf_stream runs pf_stream_loop and turns its stamps into nanoseconds.
static int pf_stream(struct ibv_cq *cq, struct pf_run *r, int64_t *posted, int64_t *completed) {
	struct pf_clock clk;
	pf_clock_start(&clk);
	int rc = pf_stream_loop(cq, r, &clk, posted, completed);
	double per_tick = pf_clock_stop(&clk);
	pf_clock_to_ns(&clk, per_tick, &r->first, 1);
	pf_clock_to_ns(&clk, per_tick, &r->last, 1);
	if (rc == 0 && posted) {
		pf_clock_to_ns(&clk, per_tick, posted, r->done);
		pf_clock_to_ns(&clk, per_tick, completed, r->done);
	}
	return rc;
}

// pf_poll_one spins on cq until one completion comes: 1 (its status and
// vendor error in *st, *vendor), -2 after idle_ms without one, -3 - EIO.
static int pf_poll_one(struct ibv_cq *cq, int idle_ms, uint32_t *st, uint32_t *vendor) {
	struct ibv_wc wc;
	int64_t deadline = 0;
	for (unsigned spins = 1;; spins++) {
		int ne = ibv_poll_cq(cq, 1, &wc);
		if (ne < 0)
			return -3 - EIO;
		if (ne > 0) {
			*st = wc.status;
			*vendor = wc.vendor_err;
			return 1;
		}
		if ((spins & 0xfff) == 0) {
			int64_t now = pf_now_ns();
			if (!deadline)
				deadline = now + (int64_t)idle_ms * 1000000;
			else if (now > deadline)
				return -2;
		}
	}
}

// pf_lat describes one busy-polling send_lat run (rdma.SendPingPong).
struct pf_lat {
	uint64_t saddr, raddr;
	uint32_t slen, rlen, lkey;
	int64_t iters;
	int rx_depth, client, idle_ms;
	// out: the failed step (0 receive, 1 send) and its completion
	int64_t at;
	int step;
	uint32_t bad_status, bad_vendor;
};

// pf_send_lat is perftest's run_iter_lat_send with busy polling, in one
// call: no Go code runs between a completion and the next post. Returns
// 0; -1 on a failed completion; -2 on an idle timeout; -3 - errno.
static int pf_send_lat_loop(struct ibv_qp *qp, struct ibv_cq *scq, struct ibv_cq *rcq, struct pf_lat *l, int64_t *posted) {
	struct ibv_sge ssge = {.addr = l->saddr, .length = l->slen, .lkey = l->lkey};
	struct ibv_sge rsge = {.addr = l->raddr, .length = l->rlen, .lkey = l->lkey};
	struct ibv_send_wr swr = {0}, *sbad;
	struct ibv_recv_wr rwr = {0}, *rbad;
	swr.sg_list = &ssge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	int64_t scnt = 0, rcnt = 0;
	while (scnt < l->iters || rcnt < l->iters) {
		if (rcnt < l->iters && !(scnt < 1 && l->client)) {
			l->step = 0;
			l->at = rcnt;
			int rc = pf_poll_one(rcq, l->idle_ms, &l->bad_status, &l->bad_vendor);
			if (rc < 0)
				return rc;
			if (l->bad_status != IBV_WC_SUCCESS)
				return -1;
			rcnt++;
			if (rcnt + l->rx_depth <= l->iters && (rc = ibv_post_recv(qp, &rwr, &rbad)))
				return -3 - rc;
		}
		if (scnt < l->iters) {
			l->step = 1;
			l->at = scnt;
			posted[scnt++] = pf_ticks();
			int rc = ibv_post_send(qp, &swr, &sbad);
			if (rc)
				return -3 - rc;
			rc = pf_poll_one(scq, l->idle_ms, &l->bad_status, &l->bad_vendor);
			if (rc < 0)
				return rc;
			if (l->bad_status != IBV_WC_SUCCESS)
				return -1;
		}
	}
	return 0;
}

// pf_send_lat runs pf_send_lat_loop and turns its stamps into nanoseconds.
static int pf_send_lat(struct ibv_qp *qp, struct ibv_cq *scq, struct ibv_cq *rcq, struct pf_lat *l, int64_t *posted) {
	struct pf_clock clk;
	pf_clock_start(&clk);
	int rc = pf_send_lat_loop(qp, scq, rcq, l, posted);
	if (rc == 0)
		pf_clock_to_ns(&clk, pf_clock_stop(&clk), posted, l->iters);
	return rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

const perfAccess = rdma.AccessLocalWrite | rdma.AccessRemoteWrite | rdma.AccessRemoteRead

// NewPerfEndpoint makes one perf endpoint on the device: a PD, a send and
// a receive CQ shared by the QPs (as perftest), their completion channels
// with c.Events, the buffer and the QPs in INIT.
func (c *Context) NewPerfEndpoint(cfg rdma.PerfConfig) (rdma.PerfEndpoint, error) {
	e := &perfEndpoint{}
	if err := e.setup(c, cfg); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

type perfEndpoint struct {
	pd             *PD
	sendCh, recvCh *CompChannel
	sendCQ, recvCQ *CQ
	buf            *Buffer
	mr             *MR
	qps            []*QP
	qp             *QP // qps[0]
}

var _ rdma.PerfEndpoint = (*perfEndpoint)(nil)

func (e *perfEndpoint) setup(c *Context, cfg rdma.PerfConfig) error {
	var err error
	if e.pd, err = c.AllocPD(); err != nil {
		return asRDMAError("ibv_alloc_pd", err)
	}
	if cfg.Events {
		if e.sendCh, err = c.CreateCompChannel(); err != nil {
			return asRDMAError("ibv_create_comp_channel", err)
		}
		if e.recvCh, err = c.CreateCompChannel(); err != nil {
			return asRDMAError("ibv_create_comp_channel", err)
		}
	}
	n := max(cfg.QPs, 1)
	if n > rdma.MaxPerfQPs {
		return rdma.Errorf(fmt.Sprintf("%d QPs", n), syscall.EINVAL)
	}
	if e.sendCQ, err = c.CreateCQ(cfg.TxDepth*n+1, e.sendCh); err != nil {
		return asRDMAError("ibv_create_cq", err)
	}
	if e.recvCQ, err = c.CreateCQ(cfg.RxDepth*n+1, e.recvCh); err != nil {
		return asRDMAError("ibv_create_cq", err)
	}
	if e.buf, err = AllocBuffer(cfg.BufSize); err != nil {
		return err
	}
	if e.mr, err = e.pd.RegMR(e.buf, perfAccess); err != nil {
		return asRDMAError("ibv_reg_mr", err)
	}
	for i := 0; i < n; i++ {
		qp, err := e.pd.CreateRCQP(e.sendCQ, e.recvCQ, QPCap{
			MaxSendWR: uint32(cfg.TxDepth), MaxRecvWR: uint32(cfg.RxDepth), MaxSendSGE: 1, MaxRecvSGE: 1,
		})
		if err != nil {
			return asRDMAError("ibv_create_qp", err)
		}
		e.qps = append(e.qps, qp)
		if err := qp.ModifyToInit(cfg.Port, perfAccess); err != nil {
			return asRDMAError("ibv_modify_qp", err)
		}
	}
	e.qp = e.qps[0]
	return nil
}

// qpAt is QP i, or an error naming the bad index.
func (e *perfEndpoint) qpAt(i int) (*QP, error) {
	if i < 0 || i >= len(e.qps) {
		return nil, fmt.Errorf("QP %d of an endpoint of %d", i, len(e.qps))
	}
	return e.qps[i], nil
}

func (e *perfEndpoint) QPN(i int) uint32 {
	if i < 0 || i >= len(e.qps) {
		return 0
	}
	return e.qps[i].Num()
}
func (e *perfEndpoint) Buffer() []byte { return e.buf.Bytes() }
func (e *perfEndpoint) Addr() uint64   { return e.buf.Addr() }
func (e *perfEndpoint) LKey() uint32   { return e.mr.LKey() }
func (e *perfEndpoint) RKey() uint32   { return e.mr.RKey() }
func (e *perfEndpoint) SendCQ() rdma.CQ {
	return cmCQ{e.sendCQ}
}
func (e *perfEndpoint) RecvCQ() rdma.CQ { return cmCQ{e.recvCQ} }

func (e *perfEndpoint) ToRTR(i int, a rdma.RTRAttr) error {
	qp, err := e.qpAt(i)
	if err != nil {
		return err
	}
	return asRDMAError("ibv_modify_qp", qp.ModifyToRTR(a))
}

func (e *perfEndpoint) ToRTS(i int, a rdma.RTSAttr) error {
	qp, err := e.qpAt(i)
	if err != nil {
		return err
	}
	return asRDMAError("ibv_modify_qp", qp.ModifyToRTS(a))
}

func (e *perfEndpoint) PostSend(wr rdma.SendWR) error { return cmQP{e.qp}.PostSend(wr) }

func (e *perfEndpoint) PostRecvs(qp, n int, sge rdma.SGE) error {
	q, err := e.qpAt(qp)
	if err != nil {
		return err
	}
	if rc := C.pf_post_recvs(q.qp, C.int(n), C.uint64_t(qp), C.uint64_t(sge.Addr), C.uint32_t(sge.Len), C.uint32_t(sge.LKey)); rc != 0 {
		return rdma.Errorf("ibv_post_recv", syscall.Errno(rc))
	}
	return nil
}

func (e *perfEndpoint) Stream(s rdma.Stream) (rdma.StreamResult, error) {
	nqp, total := len(s.Targets), s.Iters*len(s.Targets)
	if nqp < 1 || nqp > len(e.qps) || s.TxDepth < 1 || s.CQMod < 1 ||
		(s.Duration <= 0 && (s.Iters < 1 || len(s.Posted) < total || len(s.Completed) < total)) {
		return rdma.StreamResult{}, fmt.Errorf("stream of %d on %d of %d QPs (tx depth %d, cq_mod %d) with %d/%d stamp slots",
			s.Iters, nqp, len(e.qps), s.TxDepth, s.CQMod, len(s.Posted), len(s.Completed))
	}
	r := C.struct_pf_run{
		opcode: C.int(s.Op), nqp: C.int(nqp), len: C.uint32_t(s.Targets[0].Local.Len), lkey: C.uint32_t(s.Targets[0].Local.LKey),
		duration_ns: C.int64_t(s.Duration), margin_ns: C.int64_t(s.Margin), tx_depth: C.int(s.TxDepth), cq_mod: C.int(s.CQMod),
		idle_ms: timeoutMillis(s.Idle),
	}
	for i, t := range s.Targets {
		r.qp[i] = e.qps[i].qp
		r.laddr[i], r.raddr[i], r.rkey[i] = C.uint64_t(t.Local.Addr), C.uint64_t(t.RemoteAddr), C.uint32_t(t.RKey)
	}
	var posted, completed *C.int64_t
	if s.Duration <= 0 {
		r.iters = C.int64_t(s.Iters)
		posted = (*C.int64_t)(unsafe.Pointer(&s.Posted[0]))
		completed = (*C.int64_t)(unsafe.Pointer(&s.Completed[0]))
	}
	rc := C.pf_stream(e.sendCQ.cq, &r, posted, completed)
	res := rdma.StreamResult{Completed: uint64(r.done), First: int64(r.first), Last: int64(r.last)}
	switch {
	case rc == 0:
		return res, nil
	case rc == -1:
		return res, &rdma.WCError{Status: rdma.WCStatus(r.bad_status), VendorErr: uint32(r.bad_vendor)}
	case rc == -2:
		return res, rdma.ErrTimeout
	}
	return res, rdma.Errorf("ibv_post_send", syscall.Errno(-3-rc))
}

func (e *perfEndpoint) SendPingPong(p rdma.SendPingPong) error {
	if p.Iters < 1 || len(p.Posted) < p.Iters {
		return fmt.Errorf("send_lat of %d with %d stamp slots", p.Iters, len(p.Posted))
	}
	l := C.struct_pf_lat{
		saddr: C.uint64_t(p.Local.Addr), raddr: C.uint64_t(p.Recv.Addr), slen: C.uint32_t(p.Local.Len),
		rlen: C.uint32_t(p.Recv.Len), lkey: C.uint32_t(e.mr.LKey()), iters: C.int64_t(p.Iters),
		rx_depth: C.int(p.RxDepth), client: cBool(p.Client), idle_ms: timeoutMillis(p.Idle),
	}
	rc := C.pf_send_lat(e.qp.qp, e.sendCQ.cq, e.recvCQ.cq, &l, (*C.int64_t)(unsafe.Pointer(&p.Posted[0])))
	if rc == 0 {
		return nil
	}
	step := fmt.Sprintf("receive %d of %d", l.at+1, p.Iters)
	if l.step == 1 {
		step = fmt.Sprintf("send %d of %d", l.at+1, p.Iters)
	}
	switch rc {
	case -1:
		return fmt.Errorf("%s: %w", step, &rdma.WCError{Status: rdma.WCStatus(l.bad_status), VendorErr: uint32(l.bad_vendor)})
	case -2:
		return fmt.Errorf("%s: %w", step, rdma.ErrTimeout)
	}
	return fmt.Errorf("%s: %w", step, rdma.Errorf("ibv_post_send", syscall.Errno(-3-rc)))
}

func (e *perfEndpoint) WaitByte(off int, want byte, timeout time.Duration, yield bool) error {
	if off < 0 || off >= len(e.buf.bytes) {
		return fmt.Errorf("wait at %d outside a %d-byte buffer", off, len(e.buf.bytes))
	}
	p := (*C.uint8_t)(unsafe.Add(e.buf.p, off))
	if rc := C.pf_spin_byte(p, C.uint8_t(want), timeoutMillis(timeout), cBool(yield)); rc != 0 {
		return rdma.ErrTimeout
	}
	return nil
}

// Close releases in reverse order; parts never made are skipped.
func (e *perfEndpoint) Close() error {
	var err error
	for _, qp := range e.qps {
		err = errors.Join(err, asRDMAError("ibv_destroy_qp", qp.Close()))
	}
	if e.mr != nil {
		err = errors.Join(err, asRDMAError("ibv_dereg_mr", e.mr.Close()))
	}
	e.buf.Close()
	err = errors.Join(err, asRDMAError("ibv_destroy_cq", e.sendCQ.Close()), asRDMAError("ibv_destroy_cq", e.recvCQ.Close()),
		asRDMAError("ibv_destroy_comp_channel", e.sendCh.Close()), asRDMAError("ibv_destroy_comp_channel", e.recvCh.Close()),
		asRDMAError("ibv_dealloc_pd", e.pd.Close()))
	return err
}
