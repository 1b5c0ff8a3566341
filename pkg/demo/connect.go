package demo

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The steps both roles take: the original's resources_create and
// connect_qp, the CQ polling and the one-byte syncs.

func (r *runner) printConfig() {
	dev := r.opts.Device
	if dev == "" {
		dev = "(null)" // what printf makes of the original's NULL name
	}
	r.printf(" ------------------------------------------------\n")
	r.printf(" Device name : \"%s\"\n", dev)
	r.printf(" IB port : %d\n", r.opts.IBPort)
	if r.client() {
		r.printf(" IP : %s\n", r.opts.Server)
	}
	r.printf(" TCP port : %d\n", r.opts.TCPPort)
	switch {
	case r.opts.GIDAuto:
		r.printf(" GID index : auto\n")
	case r.opts.GRH:
		r.printf(" GID index : %d\n", r.opts.GIDIndex)
	}
	r.printf(" ------------------------------------------------\n\n")
}

func (r *runner) connectTCP() bool {
	if r.conn != nil {
		return true // accepted by the caller (ServeConn)
	}
	if r.client() {
		return r.dialServer()
	}
	return r.acceptClient()
}

func (r *runner) createResources() bool {
	if !r.connectTCP() {
		return false
	}
	r.printf("TCP connection was established\n")
	r.printf("searching for IB devices in host\n")
	list, err := r.opts.RDMA.DeviceList()
	if err != nil {
		r.fail("failed to get IB devices list")
		return false
	}
	if len(list) == 0 {
		r.fail("found 0 device(s)")
		return false
	}
	r.printf("found %d device(s)\n", len(list))
	if r.opts.Device == "" {
		r.opts.Device = list[0].Name
		r.printf("device not specified, using first one found: %s\n", r.opts.Device)
	}
	found := false
	for _, d := range list {
		found = found || d.Name == r.opts.Device
	}
	if !found {
		r.fail("IB device %s wasn't found", r.opts.Device)
		return false
	}
	if r.dev, err = r.opts.RDMA.Open(r.opts.Device); err != nil {
		r.fail("failed to open device %s", r.opts.Device)
		return false
	}
	if r.port, err = r.dev.QueryPort(uint8(r.opts.IBPort)); err != nil {
		r.fail("ibv_query_port on port %d failed", r.opts.IBPort)
		return false
	}
	// The seed's server was built with the port block (and the IP line
	// below) added; its client was the plain example.
	if !r.client() {
		r.printPort()
	}
	if !r.allocate() {
		return false
	}
	if !r.client() {
		putCString(r.res.mr.Bytes(), r.opts.message())
	}
	r.printf("MR was registered with addr=0x%x, lkey=0x%x, rkey=0x%x, flags=0x%x\n",
		r.res.mr.Addr(), r.res.mr.LKey(), r.res.mr.RKey(), mrFlags)
	if err := r.res.createQP(); err != nil {
		r.fail("failed to create QP")
		return false
	}
	r.printf("QP was created, QP number=0x%x\n", r.res.qp.Num())
	return true
}

// connectQP is the original's connect_qp: swap records, then INIT, RTR,
// RTS and the "Q" sync.
func (r *runner) connectQP() bool {
	if r.opts.GIDAuto && !r.chooseGID() {
		return false
	}
	if r.opts.GRH {
		g, err := queryGID(r.dev, r.opts.IBPort, r.opts.GIDIndex)
		if err != nil {
			r.fail("could not get gid for port %d, index %d", r.opts.IBPort, r.opts.GIDIndex)
			return false
		}
		r.gid = g
		if !r.client() {
			r.printf("The IP address is: %s\n", printedIPv4(g))
		}
	}
	local := Record{Addr: r.res.mr.Addr(), RKey: r.res.mr.RKey(), QPNum: r.res.qp.Num(), LID: r.port.LID, GID: r.gid}
	if r.opts.AdvertiseRKey != nil {
		local.RKey = *r.opts.AdvertiseRKey
	}
	r.sum.Local = r.recordJSON(local)
	r.printf("\nLocal LID = 0x%x\n", r.port.LID)
	remote, err := r.exchangeRecords(local)
	if err != nil {
		r.fail("failed to exchange connection data between sides")
		r.hint(fmt.Sprintf("the peer did not send its %d-byte connection record (%v): is it an RC demo (rdmactl demo or RDMA_RC_example) on the same TCP port?", RecordSize, err))
		return false
	}
	if err := remote.Check(); err != nil {
		raw, _ := remote.MarshalBinary()
		r.fail("failed to exchange connection data between sides")
		r.hint(fmt.Sprintf("the peer's %d bytes are no RC demo connection record (%v; they begin %q): something other than rdmactl demo or RDMA_RC_example connected to TCP port %d", RecordSize, err, raw[:16], r.opts.TCPPort))
		return false
	}
	r.remote = remote
	r.sum.Remote = r.recordJSON(remote)
	r.printf("Remote address = 0x%x\n", remote.Addr)
	r.printf("Remote rkey = 0x%x\n", remote.RKey)
	r.printf("Remote QP number = 0x%x\n", remote.QPNum)
	r.printf("Remote LID = 0x%x\n", remote.LID)
	if r.opts.GRH {
		r.printf("Remote GID = %s\n", remote.GID.Colons())
	}
	if err := r.res.qp.ToInit(rdma.InitAttr{Port: uint8(r.opts.IBPort), Access: accessAllRights}); err != nil {
		r.fail("failed to modify QP state to INIT")
		r.fail("change QP state to INIT failed")
		return false
	}
	if r.client() && !r.postReceive() {
		return false
	}
	rtr := rdma.RTRAttr{
		PathMTU: pathMTU, DestQPN: remote.QPNum, RQPSN: startPSN, MaxDestRdAtomic: maxRdAtomic,
		MinRNRTimer: minRNRTimer, DLID: remote.LID, Port: uint8(r.opts.IBPort),
	}
	if r.opts.GRH {
		rtr.GRH = &rdma.GRH{DGID: remote.GID, SGIDIndex: uint8(r.opts.GIDIndex), HopLimit: hopLimit}
	}
	if err := r.res.qp.ToRTR(rtr); err != nil {
		r.fail("failed to modify QP state to RTR")
		r.fail("failed to modify QP state to RTR")
		r.hint(r.gidAdvice("RTR was refused"))
		return false
	}
	fmt.Fprintf(r.errOut, "Modified QP state to RTR\n") // stderr in the original
	err = r.res.qp.ToRTS(rdma.RTSAttr{Timeout: ackTimeout, RetryCnt: retryCount, RNRRetry: rnrRetry, SQPSN: startPSN, MaxRdAtomic: maxRdAtomic})
	if err != nil {
		r.fail("failed to modify QP state to RTS")
		r.fail("failed to modify QP state to RTR") // sic: the original's words
		return false
	}
	r.printf("QP state was change to RTS\n")
	if err := r.syncByte('Q'); err != nil {
		r.fail("sync error after QPs are were moved to RTS")
		return false
	}
	return true
}

// queryGID is ibv_query_gid: zeros for an empty entry.
func queryGID(dev rdma.Device, port, index int) (rdma.GID, error) {
	e, err := dev.QueryGIDEntry(uint8(port), uint32(index))
	if errors.Is(err, rdma.ErrNoGID) {
		return rdma.GID{}, nil
	}
	return e.GID, err
}

// printedIPv4 is the address the original prints for a GID: its last four
// bytes, whatever kind of GID it is (a link-local GID gives a meaningless
// address, as the original shows too).
func printedIPv4(g rdma.GID) netip.Addr { return netip.AddrFrom4([4]byte(g[12:16])) }

// pollCompletion polls for one completion for PollTimeout, as the original.
func (r *runner) pollCompletion(op string) bool { return r.awaitCompletion(op, false) == completed }

type outcome int

const (
	completed outcome = iota
	failed
	peerWentOn // the peer's next sync byte came first: it will never send
)

// awaitCompletion polls the CQ for PollTimeout for the completion of op
// (named in hints). With watchPeer it also notices the server's "R" sync
// arriving first: builds of the example with the SEND commented out (the
// seed's ibv_demo) go straight on, and their client never polls for a
// message.
func (r *runner) awaitCompletion(op string, watchPeer bool) outcome {
	deadline := time.Now().Add(PollTimeout)
	peerMoved := false
	for {
		c, ok, err := r.res.poll()
		switch {
		case err != nil:
			r.fail("poll CQ failed")
			return failed
		case ok:
			r.wc = c
			r.printf("completion was found in CQ with status 0x%x\n", uint32(c.Status))
			if c.Status != rdma.WCSuccess {
				r.fail("got bad completion with status: 0x%x, vendor syndrome: 0x%x", uint32(c.Status), c.VendorErr)
				r.hint(r.completionAdvice(op, c))
				return failed
			}
			return completed
		case peerMoved:
			// The peer's byte came and, looked at again, the CQ is still
			// empty: the message was never sent (a peer that sent it saw
			// its completion, hence ours, before going on).
			return peerWentOn
		case !time.Now().Before(deadline):
			r.fail("completion wasn't found in the CQ after timeout")
			r.hint(r.gidAdvice(fmt.Sprintf("nothing completed in %v, so packets are not getting through", PollTimeout)))
			return failed
		}
		if watchPeer && r.pending == nil {
			peerMoved = r.peekPeerByte()
		}
		// The original spins; a short sleep keeps two peers on a small
		// machine from starving the kernel side that does the work.
		time.Sleep(20 * time.Microsecond)
	}
}

// peekPeerByte waits briefly for the peer's next sync byte and keeps it
// for syncByte.
func (r *runner) peekPeerByte() bool {
	var b [1]byte
	_ = r.conn.SetReadDeadline(time.Now().Add(200 * time.Microsecond))
	n, _ := r.conn.Read(b[:])
	_ = r.conn.SetReadDeadline(time.Time{})
	if n == 1 {
		r.pending = &b[0]
	}
	return n == 1
}

// syncByte is the one-byte sync, using a byte peekPeerByte already took.
func (r *runner) syncByte(marker byte) error {
	if r.pending == nil {
		return syncByte(r.conn, marker, r.opts.timeout())
	}
	r.pending = nil
	if err := r.conn.SetWriteDeadline(time.Now().Add(r.opts.timeout())); err != nil {
		return err
	}
	defer r.conn.SetWriteDeadline(time.Time{})
	_, err := r.conn.Write([]byte{marker})
	return err
}
