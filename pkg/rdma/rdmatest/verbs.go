package rdmatest

import (
	"sync"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

type verbsContext struct{ dev *Device }

func (c *verbsContext) verb(name string) error { return c.dev.verb(name) }

func (c *verbsContext) AllocPD() (rdma.PD, error) {
	if err := c.verb("ibv_alloc_pd"); err != nil {
		return nil, err
	}
	return &pd{dev: c.dev}, nil
}

type compChannel struct{}

func (compChannel) Close() error { return nil }

func (c *verbsContext) CreateCompChannel() (rdma.CompChannel, error) {
	if err := c.verb("ibv_create_comp_channel"); err != nil {
		return nil, err
	}
	return compChannel{}, nil
}

// CreateCQ makes a CQ; it can be waited on whether or not ch is given.
func (c *verbsContext) CreateCQ(cqe int, ch rdma.CompChannel) (rdma.CQ, error) {
	if err := c.verb("ibv_create_cq"); err != nil {
		return nil, err
	}
	if cqe < 1 {
		return nil, rdma.Errorf("ibv_create_cq", syscall.EINVAL)
	}
	return &CQ{fabric: c.dev.fabric, dev: c.dev, ready: make(chan struct{}, 1)}, nil
}

type pd struct{ dev *Device }

func (p *pd) fabric() *Fabric { return p.dev.fabric }

// MR is registered Go memory at a made-up address.
type MR struct {
	fabric *Fabric
	buf    []byte
	addr   uint64
	key    uint32
	access rdma.Access
}

func (p *pd) RegMR(size int, access rdma.Access) (rdma.MR, error) {
	f := p.fabric()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callOn(p.dev, rdma.OpMalloc); err != nil {
		return nil, err
	}
	if err := f.callOn(p.dev, "ibv_reg_mr"); err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, rdma.Errorf("ibv_reg_mr", syscall.EINVAL)
	}
	m := &MR{fabric: f, buf: make([]byte, size), addr: f.nextAddr, key: f.nextKey, access: access}
	f.nextAddr += (uint64(size) + 4095) &^ 4095
	f.nextKey++
	f.mrs[m.key] = m
	return m, nil
}

// share registers n bytes of m from offset off as a region of their own,
// with its own key, as ibv_reg_mr of a part of a buffer does.
func (m *MR) share(off, n int) (*MR, error) {
	f := m.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ibv_reg_mr"); err != nil {
		return nil, err
	}
	if off < 0 || n <= 0 || off+n > len(m.buf) {
		return nil, rdma.Errorf("ibv_reg_mr", syscall.EINVAL)
	}
	s := &MR{fabric: f, buf: m.buf[off : off+n : off+n], addr: m.addr + uint64(off), key: f.nextKey, access: m.access}
	f.nextKey++
	f.mrs[s.key] = s
	return s, nil
}

func (m *MR) Bytes() []byte { return m.buf }
func (m *MR) Addr() uint64  { return m.addr }
func (m *MR) LKey() uint32  { return m.key }
func (m *MR) RKey() uint32  { return m.key }

func (m *MR) Close() error {
	m.fabric.mu.Lock()
	defer m.fabric.mu.Unlock()
	if err := m.fabric.call("ibv_dereg_mr"); err != nil {
		return err
	}
	delete(m.fabric.mrs, m.key)
	return nil
}

// span is the memory [addr, addr+n) of the region with key, if it lies
// inside one and allows need; f.mu held.
func (f *Fabric) span(key uint32, addr uint64, n uint32, need rdma.Access) ([]byte, bool) {
	m, ok := f.mrs[key]
	if !ok || addr < m.addr || addr+uint64(n) > m.addr+uint64(len(m.buf)) || m.access&need != need {
		return nil, false
	}
	off := addr - m.addr
	return m.buf[off : off+uint64(n)], true
}

func (p *pd) CreateRCQP(send, recv rdma.CQ, cap rdma.QPCap) (rdma.QP, error) {
	return p.CreateQP(rdma.QPInitAttr{Type: rdma.QPTypeRC, SendCQ: send, RecvCQ: recv, Cap: cap})
}

func (p *pd) CreateQP(a rdma.QPInitAttr) (rdma.QP, error) {
	f := p.fabric()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callOn(p.dev, "ibv_create_qp"); err != nil {
		return nil, err
	}
	send, ok1 := a.SendCQ.(*CQ)
	recv, ok2 := a.RecvCQ.(*CQ)
	var s *SRQ
	if a.SRQ != nil {
		s, _ = a.SRQ.(*SRQ)
	}
	if !ok1 || !ok2 || (a.SRQ != nil && s == nil) || a.Cap.MaxSendWR == 0 && a.Cap.MaxRecvWR == 0 ||
		(a.Type != rdma.QPTypeRC && a.Type != rdma.QPTypeUC && a.Type != rdma.QPTypeUD) {
		return nil, rdma.Errorf("ibv_create_qp", syscall.EINVAL)
	}
	q := &QP{fabric: f, dev: p.dev, num: f.nextQPN, typ: a.Type, send: send, recv: recv, srq: s, cap: a.Cap}
	f.nextQPN++
	f.qps[q.num] = q
	f.made = append(f.made, q)
	if s != nil {
		s.qps = append(s.qps, q)
	}
	return q, nil
}

// AH is an address handle; the fabric routes UD sends by QP number alone.
type AH struct {
	Attr rdma.AHAttr
}

func (*AH) Close() error { return nil }

func (p *pd) CreateAH(a rdma.AHAttr) (rdma.AH, error) {
	f := p.fabric()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callOn(p.dev, "ibv_create_ah"); err != nil {
		return nil, err
	}
	if err := p.dev.checkPath(a.Port, a.GRH); err != nil {
		return nil, rdma.Errorf("ibv_create_ah", syscall.EINVAL)
	}
	return &AH{Attr: a}, nil
}

// checkPath refuses what the device would: a port it has not, no GID on
// an Ethernet port, a source GID index it has not.
func (d *Device) checkPath(port uint8, grh *rdma.GRH) error {
	if port != 1 {
		return syscall.EINVAL
	}
	if grh == nil {
		if d.cfg.LinkLayer == rdma.LinkLayerEthernet {
			return syscall.EINVAL
		}
		return nil
	}
	if _, ok := d.gid(uint32(grh.SGIDIndex)); !ok {
		return syscall.EINVAL
	}
	return nil
}

// checkRoute refuses, beyond checkPath, a connection rxe cannot route:
// from a link-local GID to one that is not, or the other way round.
func (d *Device) checkRoute(port uint8, grh *rdma.GRH) error {
	if err := d.checkPath(port, grh); err != nil {
		return err
	}
	if grh != nil {
		if e, _ := d.gid(uint32(grh.SGIDIndex)); e.GID.IsLinkLocal() != grh.DGID.IsLinkLocal() {
			return syscall.EINVAL
		}
	}
	return nil
}

// SRQ is a shared receive queue.
type SRQ struct {
	fabric *Fabric
	max    uint32
	posted []recvWR
	qps    []*QP
}

func (p *pd) CreateSRQ(a rdma.SRQAttr) (rdma.SRQ, error) {
	f := p.fabric()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callOn(p.dev, "ibv_create_srq"); err != nil {
		return nil, err
	}
	if a.MaxWR == 0 {
		return nil, rdma.Errorf("ibv_create_srq", syscall.EINVAL)
	}
	return &SRQ{fabric: f, max: a.MaxWR}, nil
}

func (s *SRQ) PostRecv(id uint64, sges ...rdma.SGE) error {
	f := s.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ibv_post_srq_recv"); err != nil {
		return err
	}
	if len(sges) == 0 {
		return rdma.Errorf("ibv_post_srq_recv", syscall.EINVAL)
	}
	if uint32(len(s.posted)) >= s.max {
		return rdma.Errorf("ibv_post_srq_recv", syscall.ENOMEM)
	}
	s.posted = append(s.posted, recvWR{id: id, sges: append([]rdma.SGE(nil), sges...)})
	for _, q := range s.qps {
		q.deliverPending()
	}
	return nil
}

func (s *SRQ) Close() error { return nil }

func (p *pd) Close() error { return p.dev.verb("ibv_dealloc_pd") }

// CQ is a completion queue.
type CQ struct {
	fabric *Fabric
	dev    *Device
	mu     sync.Mutex
	wcs    []rdma.WC
	ready  chan struct{} // a token while wcs is not empty
	spin   int
}

func (cq *CQ) push(wc rdma.WC) {
	cq.mu.Lock()
	cq.wcs = append(cq.wcs, wc)
	cq.mu.Unlock()
	select {
	case cq.ready <- struct{}{}:
	default:
	}
}

// Poll takes completions without waiting.
func (cq *CQ) Poll(wc []rdma.WC) (int, error) {
	cq.fabric.mu.Lock()
	err := cq.fabric.callOn(cq.dev, "ibv_poll_cq")
	cq.fabric.mu.Unlock()
	if err != nil {
		return 0, err
	}
	cq.mu.Lock()
	defer cq.mu.Unlock()
	n := copy(wc, cq.wcs)
	cq.wcs = cq.wcs[n:]
	if len(cq.wcs) > 0 {
		select {
		case cq.ready <- struct{}{}:
		default:
		}
	}
	return n, nil
}

// Await waits for completions for at most timeout (negative: forever),
// or for an event on also when it is one of this fabric's channels.
func (cq *CQ) Await(wc []rdma.WC, also rdma.EventChannel, timeout time.Duration) (int, bool, error) {
	ch, _ := also.(*EventChannel)
	var events chan struct{}
	if ch != nil {
		events = ch.ready
	}
	expire, stop := expiry(timeout)
	defer stop()
	for {
		n, err := cq.Poll(wc)
		if n > 0 || err != nil {
			return n, ch.pending(), err
		}
		if ch.pending() {
			return 0, true, nil
		}
		if timeout == 0 {
			return 0, false, rdma.ErrTimeout
		}
		select {
		case <-cq.ready:
		case <-events:
		case <-expire:
			return 0, false, rdma.ErrTimeout
		}
	}
}

// PollReply is Poll, and with want an address handle back to the sender
// of the first completion (rdma.ReplyPoller); the fabric routes by QP
// number, so the handle only has to be valid for port.
func (cq *CQ) PollReply(wc []rdma.WC, want bool, pd rdma.PD, grh rdma.MR, port uint8) (int, rdma.AH, error) {
	n, err := cq.Poll(wc)
	if err != nil || n == 0 || !want {
		return n, nil, err
	}
	cq.fabric.mu.Lock()
	defer cq.fabric.mu.Unlock()
	if err := cq.fabric.callOn(cq.dev, "ibv_create_ah_from_wc"); err != nil {
		return 0, nil, err
	}
	if port != 1 {
		return 0, nil, rdma.Errorf("ibv_create_ah_from_wc", syscall.EINVAL)
	}
	return n, &AH{Attr: rdma.AHAttr{Port: port}}, nil
}

var _ rdma.CountPoller = (*CQ)(nil)

// PollCount takes completions until n came, sleeping between polls on the
// CQ's readiness rather than spinning, or until slice passed.
func (cq *CQ) PollCount(n int, slice time.Duration) (int, error) {
	expire, stop := expiry(slice)
	defer stop()
	var wc [8]rdma.WC
	done := 0
	for done < n {
		got, err := cq.Poll(wc[:])
		if err != nil {
			return done, err
		}
		done += got
		if got > 0 {
			continue
		}
		select {
		case <-cq.ready:
		case <-expire:
			return done, nil
		}
	}
	return done, nil
}

func (cq *CQ) SetSpin(polls int) { cq.spin = polls }

func (cq *CQ) Close() error {
	cq.fabric.mu.Lock()
	defer cq.fabric.mu.Unlock()
	return cq.fabric.callOn(cq.dev, "ibv_destroy_cq")
}

// expiry fires once timeout has passed; never when timeout ≤ 0.
func expiry(timeout time.Duration) (expire <-chan time.Time, stop func()) {
	if timeout <= 0 {
		return nil, func() {}
	}
	t := time.NewTimer(timeout)
	return t.C, func() { t.Stop() }
}
