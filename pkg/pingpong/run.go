package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/latency"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The work request ids the tools use; pending holds them as bits.
const (
	recvWRID = 1
	sendWRID = 2
)

// Run runs one side of the test. The tool's own failures print its
// lines on stderr and end with its status (cli.SilentExit(1)); rdmactl's
// own (--timeout, the RoCE hint) are errors main prints.
func Run(ctx context.Context, o *Options) error {
	r := &run{o: o, out: o.IO.Out, errOut: o.IO.ErrOut, rawWaits: pollwait.AvailableCPUs() == 1}
	if o.JSON {
		r.out = io.Discard
	}
	watch := counters.Begin(o.Counters)
	err := r.run(ctx)
	defer r.close()
	r.rose = watch.End()
	if l := counters.Line(r.rose, err == nil && len(r.invalid) == 0); l != "" {
		fmt.Fprintf(r.errOut, "note: %s\n", l)
	}
	if err == nil && len(r.invalid) > 0 && (o.Stats || o.JSON) {
		err = cli.Failf("the data that came back was wrong in %d of the pages sent (%v)", len(r.invalid), r.invalid)
	}
	if o.JSON {
		if werr := cli.WriteJSON(o.IO.Out, r.document(err)); werr != nil && err == nil {
			err = werr
		}
	}
	var te *toolError
	if errors.As(err, &te) {
		for _, l := range te.lines {
			fmt.Fprintln(r.errOut, l)
		}
		return cli.SilentExit(cli.ExitFailed)
	}
	return err
}

// run is one side's state.
type run struct {
	o      *Options
	out    io.Writer
	errOut io.Writer
	// rose are the error counters that rose during the run (nil: not read).
	rose []counters.Rise

	dev        rdma.Device
	deviceName string
	ch         rdma.CompChannel
	pd         rdma.PD
	mr         rdma.MR
	cq         rdma.CQ
	// rawWaits: -e sleeps in raw polls (one CPU, one waiting goroutine).
	rawWaits bool
	raw      pollwait.RawWaiter
	srq      rdma.SRQ
	qps      []rdma.QP
	ah       rdma.AH
	conn     net.Conn
	port     rdma.PortAttr
	gidx     int
	inline   bool
	mine     []Dest
	theirs   []Dest
	res      *result
	invalid  []int
	// answered is what an AnySizeAndCount server answered.
	answered *answered
	// stopped is how far a run that ctx ended got.
	stopped *progress
}

// progress is how far a run got: its completed receives, in elapsed.
type progress struct {
	receives int
	elapsed  time.Duration
}

// result is the closing lines' numbers and the extras' measurements.
type result struct {
	usec    float32 // as the tools compute it
	elapsed time.Duration
	hist    *latency.Histogram
	cpu     latency.CPU
}

func (r *run) numQP() int {
	if r.o.Kind == SRQ {
		return r.o.NumQP
	}
	return 1
}

// sendsPerSignal is how many sends of a single QP the loop makes per
// signaled one (rdma.PingPong's SignalEvery): the tools signal each, and
// each completion costs the kernel a completion queue entry and the loop
// a poll, on every round trip.
const sendsPerSignal = 16

// signalEvery is the run's SignalEvery, and the depth of its send queues:
// with several QPs (srq) each send is signaled, one in flight per QP as
// in the tools.
func (r *run) signalEvery() int {
	if r.numQP() > 1 {
		return 1
	}
	return sendsPerSignal
}

// bufferSize is the bytes the messages share: -s, or for a server that
// does not know it the most it answers.
func (r *run) bufferSize() int {
	if r.o.AnySizeAndCount {
		return MaxAnswerSize
	}
	return r.o.Size
}

// sizeAndIters are the run's message size and count: the options', or
// what an AnySizeAndCount server answered (the largest message).
func (r *run) sizeAndIters() (size, iters int) {
	if a := r.answered; a != nil {
		return a.largest, a.messages
	}
	return r.o.Size, r.o.Iters
}

// offset is where a message starts in the buffer: ud receives the 40
// bytes of the GRH in front of it.
func (r *run) offset() uint64 {
	if r.o.Kind == UD {
		return rdma.GRHSize
	}
	return 0
}

func (r *run) run(ctx context.Context) error {
	o := r.o
	if err := r.checkOptions(); err != nil {
		return err
	}
	if err := r.open(); err != nil {
		return err
	}
	if err := r.setup(); err != nil {
		return err
	}
	if err := r.postRecvs(o.RxDepth); err != nil {
		return err
	}
	port, err := r.dev.QueryPort(uint8(o.IBPort))
	if err != nil {
		return toolErr("Couldn't get port info")
	}
	r.port = port
	if port.LinkLayer != rdma.LinkLayerEthernet && port.LID == 0 {
		return toolErr("Couldn't get local LID")
	}
	r.gidx = o.GIDIndex
	if !o.GIDAuto && r.gidx < 0 && port.LinkLayer == rdma.LinkLayerEthernet {
		return r.needGIDHint(ctx)
	}
	if o.GIDAuto {
		// The GID is the one of the address the TCP connection uses,
		// known once it is made: the lines print in the same order.
		if r.conn == nil {
			if err := r.connectTCP(ctx); err != nil {
				return err
			}
		}
		if err := r.chooseGID(); err != nil {
			return err
		}
	}
	var gid rdma.GID
	if r.gidx >= 0 {
		e, err := r.dev.QueryGIDEntry(uint8(o.IBPort), uint32(r.gidx))
		switch {
		case errors.Is(err, rdma.ErrNoGID):
		case err != nil && (o.Kind == RC || o.Kind == UC):
			return toolErr(fmt.Sprintf("can't read sgid of index %d", r.gidx))
		case err != nil:
			return toolErr(fmt.Sprintf("Could not get local gid for gid index %d", r.gidx))
		default:
			gid = e.GID
		}
	}
	for _, qp := range r.qps {
		r.mine = append(r.mine, Dest{LID: uint32(port.LID), QPN: qp.Num(), PSN: rand.Uint32() & 0xffffff, GID: gid})
	}
	for _, d := range r.mine {
		r.printAddr("local address: ", d)
	}
	if err := r.exchange(ctx); err != nil {
		return err
	}
	for i := range r.mine {
		r.printAddr("remote address:", r.theirs[i])
		if o.Kind != SRQ {
			break
		}
	}
	if o.Server != "" {
		if err := r.connectQPs(); err != nil {
			return err
		}
	}
	return r.pingpong(ctx)
}

// printAddr prints an address line; ud's local line has a colon before
// the GID where the others have a comma.
func (r *run) printAddr(label string, d Dest) {
	sep := ","
	if r.o.Kind == UD && label == "local address: " {
		sep = ":"
	}
	fmt.Fprintf(r.out, "  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", label, d.LID, d.QPN, d.PSN, sep, d.GID)
}

// checkOptions refuses what the tool refuses before it opens a device.
func (r *run) checkOptions() error {
	o := r.o
	if o.Kind == SRQ {
		if o.NumQP > o.RxDepth {
			return toolErr(fmt.Sprintf("rx_depth %d is too small for %d QPs -- must have at least one receive per QP.", o.RxDepth, o.NumQP))
		}
		if o.NumQP >= maxQP {
			return toolErr(fmt.Sprintf("num_qp %d must be less than %d", o.NumQP, maxQP-1))
		}
	}
	if o.AnySizeAndCount && (o.Kind != RC || o.Server != "") {
		return fmt.Errorf("answering any -s and -n is for rc's server side only")
	}
	if o.Kind == RC {
		if o.ODP && o.DeviceMemory {
			return toolErr("DM memory region can't be on demand")
		}
		if !o.ODP && o.Prefetch {
			return toolErr("prefetch is valid only with on-demand memory region")
		}
	}
	return nil
}

// open finds and opens the device as the tools do.
func (r *run) open() error {
	o := r.o
	list, err := o.Verbs.DeviceList()
	if err != nil {
		return toolErr(perror("Failed to get IB devices list", err))
	}
	name := o.Device
	if name == "" {
		if len(list) == 0 {
			return toolErr("No IB devices found")
		}
		name = list[0].Name
	} else {
		found := false
		for _, d := range list {
			found = found || d.Name == name
		}
		if !found {
			return toolErr(fmt.Sprintf("IB device %s not found", name))
		}
	}
	dev, err := o.Verbs.Open(name)
	if err != nil {
		return toolErr(fmt.Sprintf("Couldn't get context for %s", name))
	}
	r.dev = dev
	r.deviceName = name
	return nil
}

// setup makes the resources in the tool's order and moves the QPs to INIT.
func (r *run) setup() error {
	o := r.o
	if o.Kind == UD {
		p, err := r.dev.QueryPort(uint8(o.IBPort))
		if err != nil {
			return toolErr(fmt.Sprintf("Unable to query port info for port %d", o.IBPort))
		}
		if mtu := 128 << p.ActiveMTU; o.Size > mtu {
			return toolErr(fmt.Sprintf("Requested size larger than port MTU (%d)", mtu))
		}
	}
	vd, ok := r.dev.(rdma.VerbsDevice)
	if !ok {
		return fmt.Errorf("device %s: this RDMA stack makes no QPs of its own", r.deviceName)
	}
	vc := vd.VerbsContext()
	var err error
	if o.Kind == SRQ && o.ODP {
		if err := r.checkFeatures(); err != nil {
			return err
		}
	}
	if o.Events {
		if r.ch, err = vc.CreateCompChannel(); err != nil {
			return toolErr("Couldn't create completion channel")
		}
	}
	if r.pd, err = vc.AllocPD(); err != nil {
		return toolErr("Couldn't allocate PD")
	}
	if o.Kind == RC {
		if err := r.checkFeatures(); err != nil {
			return err
		}
	}
	if r.mr, err = r.pd.RegMR(r.bufferSize()+int(r.offset()), rdma.AccessLocalWrite); err != nil {
		return toolErr("Couldn't register MR")
	}
	for i := range r.mr.Bytes() {
		r.mr.Bytes()[i] = 0x7b
	}
	cqe := o.RxDepth + 1
	if o.Kind == SRQ {
		cqe = o.RxDepth + o.NumQP
	}
	if r.cq, err = vc.CreateCQ(cqe, r.ch); err != nil {
		return toolErr("Couldn't create CQ")
	}
	r.cq.SetSpin(0)
	attr := rdma.QPInitAttr{Type: o.Kind.qpType(), SendCQ: r.cq, RecvCQ: r.cq,
		Cap: rdma.QPCap{MaxSendWR: uint32(r.signalEvery()), MaxRecvWR: uint32(o.RxDepth), MaxSendSGE: 1, MaxRecvSGE: 1}}
	if o.Kind == SRQ {
		if r.srq, err = r.pd.CreateSRQ(rdma.SRQAttr{MaxWR: uint32(o.RxDepth), MaxSGE: 1}); err != nil {
			return toolErr("Couldn't create SRQ")
		}
		attr.SRQ, attr.Cap.MaxRecvWR, attr.Cap.MaxRecvSGE = r.srq, 0, 0
	}
	for i := 0; i < r.numQP(); i++ {
		qp, err := r.pd.CreateQP(attr)
		if err != nil {
			if o.Kind == SRQ {
				return toolErr(fmt.Sprintf("Couldn't create QP[%d]", i))
			}
			return toolErr("Couldn't create QP")
		}
		r.qps = append(r.qps, qp)
		if info, err := qp.Query(); err == nil && int(info.Cap.MaxInlineData) >= r.bufferSize() && !o.DeviceMemory {
			r.inline = true
		}
	}
	for i, qp := range r.qps {
		if err := qp.ToInit(rdma.InitAttr{Port: uint8(o.IBPort), QKey: qkey}); err != nil {
			if o.Kind == SRQ {
				return toolErr(fmt.Sprintf("Failed to modify QP[%d] to INIT", i))
			}
			return toolErr("Failed to modify QP to INIT")
		}
	}
	return nil
}

// checkFeatures refuses rc's -o, -O, -t and -j (srq's -o) as the tool
// does on a device without them; on one with them rdmactl refuses in its
// own words.
func (r *run) checkFeatures() error {
	o := r.o
	if !(o.ODP || o.Timestamps || o.DeviceMemory) {
		return nil
	}
	a, err := r.dev.QueryDevice()
	if err != nil {
		return toolErr("Couldn't query device for its features")
	}
	const odpSupport, odpImplicit = 1, 2
	const odpSend, odpRecv, odpSRQRecv = 1 << 0, 1 << 1, 1 << 5
	if o.Kind == SRQ {
		if a.ODPCaps.GeneralCaps&odpSupport == 0 || a.ODPCaps.RC&(odpSend|odpSRQRecv) != odpSend|odpSRQRecv {
			return toolErr("The device isn't ODP capable or does not support RC send, receive and srq with ODP")
		}
	} else if o.ODP {
		if a.ODPCaps.GeneralCaps&odpSupport == 0 || a.ODPCaps.RC&(odpSend|odpRecv) != odpSend|odpRecv {
			return toolErr("The device isn't ODP capable or does not support RC send and receive with ODP")
		}
		if o.ImplicitODP && a.ODPCaps.GeneralCaps&odpImplicit == 0 {
			return toolErr("The device doesn't support implicit ODP")
		}
	}
	if o.Timestamps && a.CompletionTimestampMask == 0 {
		return toolErr("The device isn't completion timestamp capable")
	}
	if o.DeviceMemory && a.MaxDMSize == 0 {
		return toolErr("Device doesn't support dm allocation")
	}
	return cli.Failf("%s: on-demand paging, completion timestamps and device memory (-o, -O, -P, -t, -j) are not implemented by rdmactl pingpong", r.deviceName)
}

// postRecvs posts n receives of the whole buffer; the tools stop at the
// first failure and report how many they posted.
func (r *run) postRecvs(n int) error {
	posted, err := r.postSomeRecvs(n)
	if err != nil || posted < n {
		return toolErr(fmt.Sprintf("Couldn't post receive (%d)", posted))
	}
	return nil
}

func (r *run) postSomeRecvs(n int) (int, error) {
	sge := rdma.SGEOf(r.mr, uint32(r.bufferSize())+uint32(r.offset()))
	for i := 0; i < n; i++ {
		var err error
		if r.srq != nil {
			err = r.srq.PostRecv(recvWRID, sge)
		} else {
			err = r.qps[0].PostRecv(recvWRID, sge)
		}
		if err != nil {
			return i, nil
		}
	}
	return n, nil
}

// exchange swaps the records over TCP; the server connects its QPs
// before it answers, as the tools do.
func (r *run) exchange(ctx context.Context) error {
	o := r.o
	if r.conn == nil {
		if err := r.connectTCP(ctx); err != nil {
			return err
		}
	}
	defer r.conn.Close()
	stop := context.AfterFunc(ctx, func() { r.conn.Close() })
	defer stop()
	var err error
	if o.Server != "" {
		r.theirs, err = clientExchange(r.conn, o.Kind, r.mine, o.wait())
		return r.ctxErr(ctx, err)
	}
	if r.theirs, err = serverReadDests(r.conn, o.Kind, len(r.mine), o.wait()); err != nil {
		return r.ctxErr(ctx, err)
	}
	if err := r.connectQPs(); err != nil {
		var te *toolError
		if errors.As(err, &te) {
			te.lines = append(te.lines, "Couldn't connect to remote QP")
		}
		return err
	}
	return r.ctxErr(ctx, serverReply(r.conn, o.Kind, r.mine, o.wait()))
}

func (r *run) ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (r *run) connectTCP(ctx context.Context) error {
	o := r.o
	var err error
	if o.Server != "" {
		r.conn, err = dial(ctx, o.Lookup, o.Server, o.Port, o.wait())
	} else {
		r.conn, err = listenAccept(ctx, o.Port, o.wait())
	}
	return err
}

// chooseGID is -g auto: the RoCE v2 GID of the address this side's end
// of the TCP connection has, by rdma.ChooseGID as demo and perf choose.
func (r *run) chooseGID() error {
	local := netip.MustParseAddrPort(r.conn.LocalAddr().String()).Addr().Unmap()
	entries, err := rdma.GIDTable(r.dev, uint8(r.o.IBPort))
	if err != nil {
		return fmt.Errorf("-g auto: %w", err)
	}
	e, ok := rdma.ChooseGID(entries, rdma.RoCEv2, local)
	if !ok {
		return cli.WithHint(cli.Failf("-g auto: no GID of %s port %d carries %s, the address of this TCP connection", r.deviceName, r.o.IBPort, local),
			"list the GIDs with 'rdmactl gids' and give -g N, or connect over an address of this port's netdev")
	}
	r.gidx = int(e.Index)
	return nil
}

// needGIDHint is the failure rdmactl reports where the tool, without
// -g on a RoCE port, would fail at RTR after the exchange: RoCE needs
// GRH addressing, so a GID index, and which one is the question.
func (r *run) needGIDHint(ctx context.Context) error {
	o := r.o
	err := cli.Failf("%s port %d is RoCE (Ethernet link layer): its QPs need a GID index and none was given (-g)", r.deviceName, o.IBPort)
	entries, _ := rdma.GIDTable(r.dev, uint8(o.IBPort))
	if o.Server != "" {
		if local, ok := routeSource(ctx, o, r.o.Server); ok {
			if e, ok := rdma.ChooseGID(entries, rdma.RoCEv2, local); ok {
				return cli.WithHint(err, fmt.Sprintf("use -g %d (the RoCE v2 GID of %s, the address that reaches %s) or -g auto; 'rdmactl gids' lists them", e.Index, local, o.Server))
			}
		}
		return cli.WithHint(err, "give -g with the index of the RoCE v2 GID of the address that reaches "+o.Server+" ('rdmactl gids' lists them), or -g auto")
	}
	var names []string
	for _, e := range entries {
		if e.Type == rdma.GIDTypeRoCEv2 && !e.GID.IsLinkLocal() {
			names = append(names, fmt.Sprintf("-g %d (%s)", e.Index, e.GID.Addr().Unmap()))
		}
	}
	switch len(names) {
	case 0:
		return cli.WithHint(err, "this port has no RoCE v2 GID of an address: give its netdev an IP address, then -g N ('rdmactl gids' lists them)")
	case 1:
		return cli.WithHint(err, "use "+names[0]+", its RoCE v2 GID, or -g auto")
	}
	hint := "use the RoCE v2 GID of the address clients connect to: "
	for i, n := range names {
		if i > 0 {
			hint += ", "
		}
		hint += n
	}
	return cli.WithHint(err, hint+"; or -g auto")
}

// routeSource is the local address the kernel would use towards server:
// a UDP socket's connect picks it without sending anything.
func routeSource(ctx context.Context, o *Options, server string) (netip.Addr, bool) {
	host := server
	if o.Lookup != nil {
		a, err := o.Lookup(server)
		if err != nil {
			return netip.Addr{}, false
		}
		host = a.String()
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", net.JoinHostPort(host, fmt.Sprint(o.Port)))
	if err != nil {
		return netip.Addr{}, false
	}
	defer c.Close()
	ap, err := netip.ParseAddrPort(c.LocalAddr().String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// connectQPs moves the QPs to RTR and RTS towards the peer's (ud: makes
// the address handle), with the tools' values.
func (r *run) connectQPs() error {
	o := r.o
	for i, qp := range r.qps {
		d := r.theirs[i]
		var grh *rdma.GRH
		// The tools address by GID when the peer's has an interface id
		// (srq looks at its first record for every QP).
		g := d.GID
		if o.Kind == SRQ {
			g = r.theirs[0].GID
		}
		if [8]byte(g[8:]) != [8]byte{} {
			grh = &rdma.GRH{DGID: g, SGIDIndex: uint8(r.gidx), HopLimit: 1}
		}
		if o.Kind == UD {
			if err := qp.ToRTR(rdma.RTRAttr{}); err != nil {
				return toolErr("Failed to modify QP to RTR")
			}
			if err := qp.ToRTS(rdma.RTSAttr{SQPSN: r.mine[i].PSN}); err != nil {
				return toolErr("Failed to modify QP to RTS")
			}
			ah, err := r.pd.CreateAH(rdma.AHAttr{DLID: uint16(d.LID), SL: uint8(o.SL), Port: uint8(o.IBPort), GRH: grh})
			if err != nil {
				return toolErr("Failed to create AH")
			}
			r.ah = ah
			return nil
		}
		rtr := rdma.RTRAttr{PathMTU: mtuEnum(o.MTU), DestQPN: d.QPN, RQPSN: d.PSN, MaxDestRdAtomic: 1, MinRNRTimer: 12,
			DLID: uint16(d.LID), SL: uint8(o.SL), Port: uint8(o.IBPort), GRH: grh}
		if err := qp.ToRTR(rtr); err != nil {
			if o.Kind == SRQ {
				return toolErr(fmt.Sprintf("Failed to modify QP[%d] to RTR", i))
			}
			return toolErr("Failed to modify QP to RTR")
		}
		if err := qp.ToRTS(rdma.RTSAttr{Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: r.mine[i].PSN, MaxRdAtomic: 1}); err != nil {
			if o.Kind == SRQ {
				return toolErr(fmt.Sprintf("Failed to modify QP[%d] to RTS", i))
			}
			return toolErr("Failed to modify QP to RTS")
		}
	}
	return nil
}

// postSend sends the message of size bytes at the buffer's start on the
// one RC QP of serve's responder (the tools' loop posts its own sends).
func (r *run) postSend(size int) error {
	wr := rdma.SendWR{ID: sendWRID, Op: rdma.WRSend, Signaled: true, Inline: r.inline,
		Local: rdma.SGE{Addr: r.mr.Addr() + r.offset(), Len: uint32(size), LKey: r.mr.LKey()}}
	if err := r.qps[0].PostSend(wr); err != nil {
		return toolErr("Couldn't post send")
	}
	return nil
}

// pageMarks is the tools' -c pattern: the first byte of each page is
// i / page_size % sizeof(char), which is 0.
func (r *run) pageMarks(set bool) {
	buf := r.mr.Bytes()[r.offset():]
	page := syscall.Getpagesize()
	for i := 0; i < r.o.Size; i += page {
		if set {
			buf[i] = 0
		} else if buf[i] != 0 {
			r.invalid = append(r.invalid, i/page)
		}
	}
}

// validates says whether received buffers are checked: -c on the
// client, as the tools, and always under --stats and --json.
func (r *run) validates() bool {
	return r.o.Server != "" && (r.o.Check || r.o.Stats || r.o.JSON)
}

// waitStep is how long one wait sleeps before it looks at ctx: a
// cancelled run (serve shutting down) ends within it.
const waitStep = 100 * time.Millisecond

// wait takes completions: spinning as the tools do, or with -e asleep on
// the completion channel (on one CPU in raw polls, as ping sleeps there:
// a blocking cgo call costs the scheduler several thread switches per
// wait); either way for at most bound (negative: forever), and until ctx
// ends.
func (r *run) wait(ctx context.Context, wcs []rdma.WC, bound time.Duration) (int, error) {
	var end time.Time
	if bound >= 0 {
		end = time.Now().Add(bound)
	}
	for {
		step := waitStep
		if !end.IsZero() {
			step = min(step, time.Until(end))
		}
		n, err := r.waitStep(wcs, max(step, 0))
		if n > 0 || err != nil {
			return n, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if !end.IsZero() && !time.Now().Before(end) {
			return 0, &cli.TimeoutError{After: bound, Doing: "waiting for a completion"}
		}
	}
}

// waitStep waits at most d for completions; none is no error.
func (r *run) waitStep(wcs []rdma.WC, d time.Duration) (int, error) {
	if r.o.Events {
		var n int
		var err error
		if r.rawWaits {
			n, _, err = r.raw.Await(r.cq, nil, wcs, d)
		} else {
			n, _, err = r.cq.Await(wcs, nil, d)
		}
		if errors.Is(err, rdma.ErrTimeout) {
			return 0, nil
		}
		if err != nil {
			return 0, toolErr("Failed to get cq_event")
		}
		return n, nil
	}
	n, _, err := pollwait.PollUntil(d, func() (int, error) { return r.cq.Poll(wcs) })
	if err != nil {
		return 0, toolErr(fmt.Sprintf("poll CQ failed %d", -1))
	}
	return n, nil
}

// report prints the tools' two result lines (and -c's findings).
func (r *run) report() {
	o, res := r.o, r.res
	size, iters := r.sizeAndIters()
	bytes := int64(size) * int64(iters) * 2
	fmt.Fprintf(r.out, "%d bytes in %s seconds = %s Mbit/sec\n", bytes, cfloat(float64(res.usec)/1e6), cfloat(float64(bytes)*8/float64(res.usec)))
	fmt.Fprintf(r.out, "%d iters in %s seconds = %s usec/iter\n", int32(iters), cfloat(float64(res.usec)/1e6), cfloat(float64(res.usec/float32(iters))))
	if r.validates() {
		r.pageMarks(false)
		if o.Check {
			for _, p := range r.invalid {
				fmt.Fprintf(r.out, "invalid data in page %d\n", p)
			}
		}
	}
	if o.Stats && !o.JSON {
		r.printStats()
	}
}

// close releases what was made, QPs first.
func (r *run) close() {
	for _, qp := range r.qps {
		qp.Close()
	}
	if r.srq != nil {
		r.srq.Close()
	}
	if r.cq != nil {
		r.cq.Close()
	}
	if r.mr != nil {
		r.mr.Close()
	}
	if r.ah != nil {
		r.ah.Close()
	}
	if r.pd != nil {
		r.pd.Close()
	}
	if r.ch != nil {
		r.ch.Close()
	}
	if r.dev != nil {
		r.dev.Close()
	}
}
