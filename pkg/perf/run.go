// Package perf is `rdmactl perf`: perftest's bandwidth and latency tests
// (ib_send_bw, ib_write_bw, ib_read_bw, ib_send_lat, ib_write_lat,
// ib_read_lat), speaking their out-of-band TCP exchange so that either
// side may be the real perftest, and printing their result tables.
package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/oob"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// session is one run's shared state.
type session struct {
	ctx     context.Context // ends the wait for the peer
	r       Resolved
	out     io.Writer // perftest's stdout; io.Discard under --json or --output
	numOut  io.Writer // where --output's one number goes
	errOut  io.Writer
	dev     perfDevice
	devName string
	ep      rdma.PerfEndpoint
	oob     *OOB
	port    Port
	header  HeaderInfo // what the header block says, and --out_json's file
	gidIdx  int
	mtu     int
	local   Dest // QP 0's records, which the sync points carry
	remote  Dest
	locals  []Dest // every QP's, in order
	remotes []Dest
	withGID bool
	// sleeps is Resolved.sleeps, decided once where the endpoint is made
	// (its completion channels exist only then)
	sleeps bool
	// outReads is how many RDMA reads or atomics each QP keeps in flight
	// (setOutReads).
	outReads int
	result   *Result
	clock    func() int64 // the data paths' time stamps, in ns
	pinger   *pinger      // the latency loops, made at the first size
	// -R: the rdma_cm stack, the control and data connections, and
	// where they go (cm.go)
	cm       rdma.CM
	cmCtl    *cmControl
	cmData   *cmData
	cmPort   uint16
	cmServer netip.AddrPort
	// -W's counters, nil without it
	repCounters *reportCounters
	// -C: the CPU's clock rate, read at the first row
	cpuMHz float64
	// --cpu_util with -D, else nil
	cpu *cpuWindow
	// -w and -y: a row reached the limit (counted)
	bwLimitPassed, msgRateLimitPassed bool
	// --plot: the last latency run's post times, for its histogram
	plotStamps []int64
}

// Run runs one side of the test on o.Verbs. Output goes to o.IO's stdout
// as perftest prints it (or as one JSON document with --json); errors are
// returned, with a hint where the cause is a classic one. ctx ending stops
// the wait for the peer's TCP connection.
func Run(ctx context.Context, o *Options) error {
	out, errOut := o.IO.Out, o.IO.ErrOut
	watch := counters.Begin(o.Counters)
	res, err := execute(ctx, *o, nil, out, errOut)
	rose := watch.End()
	if l := counters.Line(rose, err == nil); l != "" {
		fmt.Fprintf(errOut, "note: %s\n", l)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		res.PortCounters = counters.Summarize(rose)
		return res.write(out)
	}
	return nil
}

// execute runs one side of the test; conn, when not nil, is the server's
// already accepted out-of-band connection (see serveconn.go), which its
// caller closes.
func execute(ctx context.Context, o Options, conn net.Conn, out, errOut io.Writer) (*Result, error) {
	r, err := o.Resolve()
	var refused *Refusal
	if errors.As(err, &refused) {
		return nil, err // perftest's parser refuses it with exit 1
	}
	if err != nil {
		return nil, &UsageError{err}
	}
	s := &session{ctx: ctx, r: r, out: out, numOut: out, errOut: errOut, result: newResult(r), clock: sessionClock()}
	if r.JSON || r.Output != "" {
		s.out = io.Discard
	}
	if r.JSON {
		s.numOut = io.Discard
	}
	defer s.close()
	if r.warnLargeCQMod() {
		io.WriteString(s.out, resultLine+"Warning: Large message requested and CQ moderation enabled\nWarning: It can lead to inaccurate results\n")
	}
	if r.PostList > 1 && r.CQModeration == 0 {
		io.WriteString(s.out, resultLine+"Post List requested - CQ moderation will be the size of the post list\n")
	}
	if r.CPUUtil {
		if r.Duration > 0 {
			s.cpu = newCPUWindow(readProcStat)
		} else {
			io.WriteString(s.out, resultLine)
			fmt.Fprint(s.errOut, " CPU Utilization works only with Duration mode.\n")
		}
	}
	if r.burstIsTxDepth {
		io.WriteString(s.errOut, burstNotice(r.TxDepth))
	}
	if r.udInlineCut {
		io.WriteString(s.out, resultLine)
		fmt.Fprintf(s.errOut, "Setting inline size to %d (Max inline size in UD)\n", maxInlineUD)
	}
	if err := s.openDevice(o.Verbs); err != nil {
		return nil, err
	}
	if err := s.checkDeviceOptions(); err != nil {
		return nil, err
	}
	if err := s.setOutReads(); err != nil {
		return nil, err
	}
	switch {
	case conn != nil: // a client serve accepted (ServeConn)
		s.oob = NewOOB(conn, false, false, s.r.Timeout)
	case r.RDMACM || r.CommRDMACM:
		err = s.connectCM(o.Verbs)
	default:
		if err = s.connectTCP(); err == nil {
			defer s.oob.conn.Close() // a failed run must not leave it open (Measure)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	switch {
	case r.Test == WriteBW || r.Test == ReadBW || r.Test == AtomicBW:
		err = s.runRDMABW()
	case r.Test == SendBW:
		err = s.runSendBW()
	case r.Test == SendLat:
		err = s.runSendLat()
	case r.Test == WriteLat:
		err = s.runWriteLat()
	default:
		err = s.runReadLat() // and atomic_lat
	}
	if err != nil {
		return nil, err
	}
	s.result.complete()
	if err := s.writePlot(); err != nil {
		return nil, err
	}
	if err := s.limitsMissed(); err != nil {
		return nil, err
	}
	return s.result, nil
}

// UsageError is a bad option value (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func (s *session) close() {
	if s.cmData != nil {
		s.cmData.close()
	}
	if s.ep != nil {
		s.ep.Close()
	}
	if s.dev != nil {
		s.dev.Close()
	}
	if s.cmCtl != nil {
		s.cmCtl.close()
	}
}

func (s *session) openDevice(v rdma.Verbs) error {
	var err error
	if s.dev, s.devName, err = openDevice(v, s.r.Device); err != nil {
		return err
	}
	if s.port, err = queryPort(s.dev, s.r.IBPort); err != nil {
		return fmt.Errorf("%s port %d: %w", s.devName, s.r.IBPort, err)
	}
	if !s.port.Active {
		return cli.WithHint(fmt.Errorf("%s port %d is not active", s.devName, s.r.IBPort),
			"bring the link up (ip link set DEV up) or pick another port with -i")
	}
	s.mtu = s.port.ActiveMTU
	if s.r.MTU != 0 {
		want, _ := mtuEnum(s.r.MTU)
		if want > s.port.ActiveMTU {
			return cli.WithHint(fmt.Errorf("-m %d is above %s port %d's active MTU %d", s.r.MTU, s.devName, s.r.IBPort, mtuBytes(s.port.ActiveMTU)),
				fmt.Sprintf("use -m %d or less, or raise the network interface's MTU", mtuBytes(s.port.ActiveMTU)))
		}
		s.mtu = want
	}
	s.gidIdx = s.r.GIDIndex
	if s.gidIdx >= 0 {
		gid, err := gidAt(s.dev, s.r.IBPort, s.gidIdx)
		if err == nil && gid == ([16]byte{}) {
			err = errors.New("the entry is empty")
		}
		if err != nil {
			return cli.WithHint(fmt.Errorf("-x %d: GID index %d of %s port %d: %v", s.gidIdx, s.gidIdx, s.devName, s.r.IBPort, err),
				"list the GIDs with 'rdmactl gids' or use -x auto")
		}
	}
	if s.r.ReportCounters != "" {
		names, err := ParseReportCounters(s.r.ReportCounters)
		if err != nil {
			return err
		}
		s.repCounters, err = openReportCounters(s.r.Counters, s.devName, s.r.IBPort, names)
		return err
	}
	return nil
}

// printCounters prints -W's counters after the result row of size bytes.
func (s *session) printCounters(size uint64) error {
	if s.repCounters == nil {
		return nil
	}
	ch, err := s.repCounters.print(s.numOut, size)
	s.result.ReportCounters = append(s.result.ReportCounters, ch...)
	return err
}

// setOutReads is perftest's ctx_set_out_reads: the read and atomic tests
// keep -o requests in flight, or the device's max_qp_rd_atom when -o is
// not given, not positive, or above it (perftest warns then, and goes on
// with the max); the other tests one.
func (s *session) setOutReads() error {
	s.outReads = 1
	if !s.r.Test.fetches() {
		return nil
	}
	most, err := maxReads(s.dev)
	if err != nil {
		return err
	}
	s.outReads = most
	switch {
	case s.r.OutReads > most:
		io.WriteString(s.out, resultLine)
		fmt.Fprintf(s.errOut, " Number of outstanding reads is above max = %d\n Changing to that max value\n", most)
	case s.r.OutReads > 0:
		s.outReads = s.r.OutReads
	}
	return nil
}

// connectTCP opens the out-of-band connection: the server accepts one
// client on the TCP port, the client connects to it.
func (s *session) connectTCP() error {
	conn, err := s.dialOrAcceptTCP()
	if err != nil {
		return err
	}
	s.oob = NewOOB(conn, s.r.Server != "", false, s.r.Timeout)
	return nil
}

func (s *session) dialOrAcceptTCP() (net.Conn, error) {
	addr := net.JoinHostPort(s.r.Server, strconv.Itoa(s.r.TCPPort))
	if s.r.Server == "" {
		fmt.Fprint(s.out, "\n************************************\n* Waiting for client to connect... *\n************************************\n")
		conn, err := oob.AcceptOne(s.ctx, "tcp4", addr, s.r.Timeout)
		switch {
		case oob.IsTimeout(err):
			return nil, cli.WithHint(fmt.Errorf("no client connected to TCP port %d within %v", s.r.TCPPort, s.r.Timeout),
				"start the client with this host's address, or raise --timeout")
		case err != nil:
			var oe *net.OpError
			if errors.As(err, &oe) && oe.Op == "listen" {
				return nil, fmt.Errorf("Couldn't listen to port %d: %w", s.r.TCPPort, err)
			}
			return nil, err
		}
		return conn, nil
	}
	conn, err := oob.Dial(s.ctx, "tcp4", addr, s.r.Timeout)
	if err != nil {
		err = fmt.Errorf("Couldn't connect to %s:%d: %w", s.r.Server, s.r.TCPPort, err)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, cli.WithHint(err, "the peer is not started: run the server side (rdmactl perf "+s.r.Test.String()+" or ib_"+s.r.Test.String()+") first")
		}
		return nil, err
	}
	return conn, nil
}

// prepare runs the exchange's opening (versions, page and cache line
// sizes, MTU), picks the GID, and creates the QP and its buffer.
func (s *session) prepare() error {
	if s.r.GIDAuto || (s.gidIdx < 0 && s.port.Ethernet) {
		// perftest picks a GID itself on Ethernet; -x auto picks the one
		// of the address this connection uses.
		idx, err := autoGID(s.dev, s.devName, s.r.IBPort, s.oob.localIP())
		if err != nil {
			return cli.WithHint(fmt.Errorf("-x auto: %w", err), "list the GIDs with 'rdmactl gids' and give -x N")
		}
		s.gidIdx = idx
	}
	s.withGID = s.gidIdx >= 0
	s.oob.withGID, s.oob.gidIndex = s.withGID, s.gidIdx
	if err := s.oob.Versions(); err != nil {
		return s.peerErr(err)
	}
	if _, _, err := s.oob.SysData(cycleBuffer, cacheLine); err != nil {
		return s.peerErr(err)
	}
	mtu, err := s.oob.MTU(s.mtu)
	if err != nil {
		return s.peerErr(err)
	}
	s.mtu = mtu
	if err := s.r.fitMTU(mtuBytes(mtu), s.errOut); err != nil {
		return err
	}
	s.sleeps = s.r.sleeps()
	events := s.r.Test.Latency() && !s.r.BusyPoll || s.sleeps
	s.ep, err = s.dev.NewPerfEndpoint(rdma.PerfConfig{
		Port: uint8(s.r.IBPort), Type: s.r.Conn, QKey: udQKey, QPs: s.r.QPs, BufSize: s.r.QPs * qpSpan(s.r), TxDepth: s.r.TxDepth, RxDepth: s.r.RxDepth, Events: events,
		MaxInline: s.r.InlineSize, MRPerQP: s.r.MRPerQP, SRQ: s.r.sharesRecvQueue(), HugePages: s.r.HugePages, MmapFile: s.r.MmapFile, MmapOffset: s.r.MmapOffset,
	})
	if err != nil {
		if errors.Is(err, rdma.ErrPerfBuffer) {
			return s.bufferErr(err)
		}
		if s.r.InlineSize > 0 {
			return cli.WithHint(err, fmt.Sprintf("the device may hold less inline data than -I %d: try a smaller -I", s.r.InlineSize))
		}
		return err
	}
	if s.r.MmapFile != "" {
		fmt.Fprintf(s.out, "allocated mmap buffer of size %d at %#x\n", len(s.ep.Buffer()), s.ep.Addr())
	}
	if got := s.ep.MaxInline(); got < s.r.InlineSize {
		// perftest's words, and it goes on with what the device gave
		fmt.Fprintf(s.out, "  Actual inline-size(%d) < requested inline-size(%d)\n", got, s.r.InlineSize)
		s.r.InlineSize = got
	}
	outReads := s.outReads
	if s.r.RDMACM {
		if err := s.connectDataCM(outReads); err != nil {
			return err
		}
	}
	var gid [16]byte
	if s.withGID {
		if gid, err = gidAt(s.dev, s.r.IBPort, s.gidIdx); err != nil {
			return err
		}
	}
	// Each QP owns qpSpan bytes: what it sends from, then what the
	// peer's QP writes into or reads.
	for i := 0; i < s.r.QPs; i++ {
		s.locals = append(s.locals, Dest{
			LID: s.port.LID, OutReads: uint32(outReads), QPN: s.ep.QPN(i), PSN: rand.Uint32() & 0xffffff,
			RKey: s.ep.RKey(i), VAddr: s.ep.Addr() + uint64(i*qpSpan(s.r)+s.r.BufSize), GID: gid,
		})
	}
	s.local = s.locals[0]
	s.result.setup(s, outReads)
	s.header = HeaderInfo{
		Test: s.r.Test, Client: s.r.active(), Device: s.devName, QPs: s.r.QPs, Conn: s.r.Conn,
		TxDepth: s.r.TxDepth, RxDepth: s.r.RxDepth, CQMod: s.r.CQMod, MTUBytes: mtuBytes(s.mtu),
		Ethernet: s.port.Ethernet, GIDIndex: s.gidIdx, OutReads: outReads, RDMACM: s.r.RDMACM, CommRDMACM: s.r.CommRDMACM, Events: s.r.Events,
		Atomic: s.r.AtomicType, PostList: s.r.PostList, RecvPostList: s.r.RecvPostList, Inline: s.r.InlineSize, TOS: s.r.TOS,
		Duplex: s.r.Bidirectional, SRQ: s.r.SRQ,
	}
	WriteHeader(s.out, s.header)
	return nil
}

// steps runs fns in order and stops at the first error: each test opens
// with its own order of perftest's sync points and connection steps.
func steps(fns ...func() error) error {
	for _, fn := range fns {
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}

// connectPeer is the first handshake, one per QP (learn the peer's QP
// records), then the move of each QP to RTS towards its peer. Where the
// tests' sync points fall around it is each test's own (bw.go, lat.go).
func (s *session) connectPeer() error {
	s.remotes = s.remotes[:0]
	for _, l := range s.locals {
		d, err := s.oob.Handshake(l)
		if err != nil {
			return s.peerErr(err)
		}
		// A peer with fewer QPs sends its first QP's record again (its
		// next sync point).
		if !s.r.RDMACM && slices.ContainsFunc(s.remotes, func(r Dest) bool { return r.QPN == d.QPN }) {
			return cli.WithHint(fmt.Errorf("the peer sent QP 0x%x's record again where this side's QP %d of -q %d expected its own: the peer runs fewer QPs", d.QPN, len(s.remotes)+1, s.r.QPs),
				"give both sides the same -q")
		}
		s.remotes = append(s.remotes, d)
	}
	s.remote = s.remotes[0]
	if s.r.RDMACM { // rdma_cm has connected the QPs
		return nil
	}
	if s.withGID && isIPv4GID(s.local.GID) != isIPv4GID(s.remote.GID) {
		return cli.WithHint(errors.New("Found Incompatibility issue with GID types: one side's GID is IPv4-mapped, the other's is not"),
			"give both sides -x of the same IP version (or -x auto)")
	}
	for i := range s.locals {
		if err := connectQP(s.ep, s.r.Conn, i, s.r.IBPort, s.mtu, s.locals[i], s.remotes[i], s.gidIdx, s.r.qpTimeout(), uint8(s.r.TrafficClass), uint8(s.r.SL)); err != nil {
			return fmt.Errorf("Unable to Connect the HCA's through the link: %w", err)
		}
	}
	return s.hwRateLimit()
}

// hwRateLimit is perftest's HW limiter at the QPs' connection. A RoCE
// port takes no static rate: perftest then limits in software, unless HW
// was asked for by name. rdmactl sets no static rate on InfiniBand
// either, and says so rather than run unlimited.
func (s *session) hwRateLimit() error {
	l := s.r.RateLimit
	switch {
	case l.limiter() != limiterHW:
		return nil
	case !s.port.Ethernet:
		return cli.WithHint(errors.New("--rate_limit: rdmactl sets no HW rate limit (static rate) on InfiniBand ports"), "give --rate_limit_type SW")
	case l.Type == limiterHW:
		return cli.WithHint(errors.New("Unable to Connect the HCA's through the link: The QP failed to accept HW rate limit (a RoCE port takes no static rate)"),
			"give --rate_limit_type SW, or leave --rate_limit_type out to fall back to it as perftest does")
	}
	io.WriteString(s.errOut, hwFallbackLine)
	return nil
}

// sync is a barrier handshake.
func (s *session) sync() error {
	d, err := s.oob.Handshake(s.local)
	if err != nil {
		return s.peerErr(err)
	}
	return s.sameQP(d, 0)
}

// sameQP checks that a record the peer sent again is that of this side's
// peer QP i: a peer with more QPs sends another QP's record where this
// side expects a sync point.
func (s *session) sameQP(d Dest, i int) error {
	if s.r.RDMACM || i >= len(s.remotes) || d.QPN == s.remotes[i].QPN {
		return nil
	}
	return cli.WithHint(fmt.Errorf("the peer sent the record of another QP (0x%x) where this side with -q %d expected QP 0x%x's: the peer runs more QPs", d.QPN, s.r.QPs, s.remotes[i].QPN),
		"give both sides the same -q")
}

// printAddresses prints this side's QP records, then for each QP
// handshakes once more and prints the peer's, as perftest does.
func (s *session) printAddresses() error {
	t := s.r.Test
	if s.r.RDMACM || s.r.CommRDMACM {
		// perftest prints with its exchange's settings, and the rdma_cm
		// exchange's verb is SEND: no RKey, VAddr or OUT.
		t = SendLat
	}
	for _, l := range s.locals {
		WriteAddress(s.out, "local", t, l, s.withGID)
	}
	for i, l := range s.locals {
		d, err := s.oob.Handshake(l)
		if err != nil {
			return s.peerErr(err)
		}
		if err := s.sameQP(d, i); err != nil {
			return err
		}
		WriteAddress(s.out, "remote", t, s.remotes[i], s.withGID)
	}
	return nil
}

func (s *session) peerErr(err error) error {
	if errors.Is(err, ErrPeerClosed) {
		return cli.WithHint(fmt.Errorf("exchange with the peer failed: %w", err),
			"the peer ended the exchange: its own output says why")
	}
	if silent := (*cli.TimeoutError)(nil); errors.As(err, &silent) {
		return cli.WithHint(fmt.Errorf("exchange with the peer failed: %w", err),
			"the peer connected but did not answer this step: its own output says where it stopped; raise --timeout if it needs longer")
	}
	return fmt.Errorf("exchange with the peer failed: %w", err)
}

func isIPv4GID(g [16]byte) bool {
	_, ok := rdma.GID(g).IPv4()
	return ok
}
