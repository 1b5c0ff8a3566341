package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/gids"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The original's messages and sizes. Every transfer moves msgSize bytes
// (strlen of sendMsg plus its NUL), but the strings copied into the buffer
// are longer: the C program overruns its 16-byte malloc there, and what it
// prints depends on the bytes past the first 16 ("RDMA write operaion ").
// rdmactl keeps a larger buffer so the same bytes are printed.
const (
	sendMsg    = "SEND operation "
	readMsg    = "RDMA read operation "
	writeMsg   = "RDMA write operation"
	msgSize    = uint32(len(sendMsg) + 1)
	bufferSize = 64
	mrFlags    = 0x7 // IBV_ACCESS_LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ

	// PollTimeout is the original's MAX_POLL_CQ_TIMEOUT.
	PollTimeout = 2000 * time.Millisecond
)

// Options are the demo's settings. Without GRH (and without GIDAuto) no
// GID is used, as the original's default gid_idx of -1.
type Options struct {
	Server   string // empty: be the server
	Device   string // empty: the first device
	IBPort   int
	GRH      bool // a GID index was given
	GIDIndex int
	GIDAuto  bool // choose the index from the TCP connection's address
	TCPPort  int
	// Timeout bounds the wait for the peer: accept, connect and each
	// exchange over the TCP connection.
	Timeout time.Duration
	JSON    bool
}

// Run performs the demo, printing as the original does on stdout and
// stderr (or only a JSON summary on stdout with opts.JSON). It returns nil
// on "test result is 0", a silent exit-1 error on "test result is 1", and
// a usage error when it refuses to start.
func Run(opts Options, stdout, stderr io.Writer, v Verbs) error {
	if err := preflight(opts, v); err != nil {
		return err
	}
	r := &runner{opts: opts, out: stdout, errOut: stderr, v: v, start: time.Now()}
	if opts.JSON {
		r.out = io.Discard
	}
	rc := r.run()
	if r.sum.Hint != "" {
		fmt.Fprintf(stderr, "hint: %s\n", r.sum.Hint)
	}
	fmt.Fprintf(r.out, "\ntest result is %d\n", rc)
	if opts.JSON {
		r.sum.Result = rc
		r.sum.ElapsedMS = float64(time.Since(r.start).Microseconds()) / 1000
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r.sum); err != nil {
			return err
		}
	}
	if rc != 0 {
		return cli.SilentExit(cli.ExitFailed)
	}
	return nil
}

// preflight checks, before any TCP wait, what would otherwise surface only
// after a peer connected: the device, the port, the GID index, and RoCE
// without a GID index (where the original would go on and fail at RTR with
// no word about why). A server started with a typo fails at once instead
// of waiting for a client. When the device list itself cannot be read, the
// normal flow reports that in the original's words.
func preflight(opts Options, v Verbs) error {
	names, err := v.DeviceNames()
	if err != nil || len(names) == 0 {
		return nil
	}
	name := opts.Device
	if name == "" {
		name = names[0]
	}
	if !slices.Contains(names, name) {
		return cli.Failf("IB device %s wasn't found (devices: %s)", name, strings.Join(names, ", "))
	}
	dev, err := v.Open(name)
	if err != nil {
		return nil
	}
	defer dev.Close()
	p, err := dev.QueryPort(opts.IBPort)
	if err != nil {
		return cli.Usagef("%s has no port %d (see 'rdmactl devinfo -d %s')", name, opts.IBPort, name)
	}
	if opts.GRH {
		gid, err := dev.QueryGID(opts.IBPort, opts.GIDIndex)
		if err != nil || gid == (GID{}) {
			return cli.Usagef("%s port %d has no GID at index %d: pick one from 'rdmactl gids -d %s', or -g auto", name, opts.IBPort, opts.GIDIndex, name)
		}
	}
	if !opts.GRH && !opts.GIDAuto && p.LinkLayer == LinkLayerEthernet {
		return cli.Usagef("%s port %d is RoCE (link layer Ethernet): the QPs must address each other by GID, so give a GID index: -g auto, or -g N from 'rdmactl gids -d %s'", name, opts.IBPort, name)
	}
	return nil
}

type runner struct {
	opts        Options
	out, errOut io.Writer
	v           Verbs
	start       time.Time

	conn    net.Conn
	dev     Device
	ep      Endpoint
	port    Port
	gid     GID
	remote  Record
	pending *byte // a sync byte already read from the peer
	sum     Summary
}

// Summary is the --json output.
type Summary struct {
	Role      string      `json:"role"`
	Server    string      `json:"server,omitempty"`
	Device    string      `json:"device"`
	IBPort    int         `json:"ib_port"`
	TCPPort   int         `json:"tcp_port"`
	GIDIndex  *int        `json:"gid_index"`
	GIDAuto   bool        `json:"gid_auto"`
	Local     *RecordJSON `json:"local,omitempty"`
	Remote    *RecordJSON `json:"remote,omitempty"`
	Message   *string     `json:"message,omitempty"`       // client: what the SEND carried
	ReadBack  *string     `json:"rdma_read,omitempty"`     // client: the server's buffer
	Buffer    *string     `json:"server_buffer,omitempty"` // server: after the client's write
	Result    int         `json:"result"`
	Error     string      `json:"error,omitempty"`
	Hint      string      `json:"hint,omitempty"`
	ElapsedMS float64     `json:"elapsed_ms"`
}

// RecordJSON is a connection record in the summary.
type RecordJSON struct {
	Addr  string `json:"addr"`
	RKey  uint32 `json:"rkey"`
	QPNum uint32 `json:"qp_num"`
	LID   uint16 `json:"lid"`
	GID   string `json:"gid,omitempty"`
	IP    string `json:"ip,omitempty"`
}

func (r *runner) recordJSON(rec Record) *RecordJSON {
	j := &RecordJSON{Addr: fmt.Sprintf("0x%x", rec.Addr), RKey: rec.RKey, QPNum: rec.QPNum, LID: rec.LID}
	if r.opts.GRH {
		j.GID = GID(rec.GID).String()
		j.IP = GID(rec.GID).IPv4().String()
	}
	return j
}

func (r *runner) printf(format string, args ...any) { fmt.Fprintf(r.out, format, args...) }

// fail prints one of the original's stderr lines; the first is the
// summary's error.
func (r *runner) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.sum.Error == "" {
		r.sum.Error = msg
	}
	fmt.Fprintln(r.errOut, msg)
}

// hint keeps rdmactl's one advice line; Run prints it on stderr after the
// original's failure lines, which stay together and unchanged.
func (r *runner) hint(msg string) {
	if r.sum.Hint == "" {
		r.sum.Hint = msg
	}
}

func (r *runner) client() bool { return r.opts.Server != "" }

func (r *runner) run() int {
	r.sum.Role, r.sum.Server = "server", r.opts.Server
	if r.client() {
		r.sum.Role = "client"
	}
	r.sum.IBPort, r.sum.TCPPort, r.sum.GIDAuto = r.opts.IBPort, r.opts.TCPPort, r.opts.GIDAuto
	r.printConfig()
	rc := 1
	switch {
	case !r.createResources():
		r.fail("failed to create resources")
	case !r.connectQP():
		r.fail("failed to connect QPs")
	case r.transfer():
		rc = 0
	}
	if err := r.destroy(); err != nil {
		r.fail("failed to destroy resources")
		rc = 1
	}
	r.sum.Device = r.opts.Device
	if r.opts.GRH {
		idx := r.opts.GIDIndex
		r.sum.GIDIndex = &idx
	}
	return rc
}

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

func (r *runner) createResources() bool {
	if !r.connectTCP() {
		return false
	}
	r.printf("TCP connection was established\n")
	r.printf("searching for IB devices in host\n")
	names, err := r.v.DeviceNames()
	if err != nil {
		r.fail("failed to get IB devices list")
		return false
	}
	if len(names) == 0 {
		r.fail("found 0 device(s)")
		return false
	}
	r.printf("found %d device(s)\n", len(names))
	if r.opts.Device == "" {
		r.opts.Device = names[0]
		r.printf("device not specified, using first one found: %s\n", r.opts.Device)
	}
	found := false
	for _, n := range names {
		found = found || n == r.opts.Device
	}
	if !found {
		r.fail("IB device %s wasn't found", r.opts.Device)
		return false
	}
	if r.dev, err = r.v.Open(r.opts.Device); err != nil {
		r.fail("failed to open device %s", r.opts.Device)
		return false
	}
	if r.port, err = r.dev.QueryPort(r.opts.IBPort); err != nil {
		r.fail("ibv_query_port on port %d failed", r.opts.IBPort)
		return false
	}
	// The seed's server was built with the port block (and the IP line
	// below) added; its client was the plain example.
	if !r.client() {
		r.printPort()
	}
	r.ep, err = r.dev.Setup(bufferSize)
	var se *SetupError
	if errors.As(err, &se) && se.Step < StepMR {
		r.fail("%s", [...]string{
			StepPD:     "ibv_alloc_pd failed",
			StepCQ:     "failed to create CQ with 1 entries",
			StepBuffer: fmt.Sprintf("failed to malloc %d bytes to memory buffer", msgSize),
		}[se.Step])
		return false
	}
	if !r.client() {
		r.printf("going to send the message: '%s'\n", sendMsg)
	}
	if err != nil {
		r.fail("ibv_reg_mr failed with mr_flags=0x%x", mrFlags)
		return false
	}
	if !r.client() {
		putCString(r.ep.Buffer(), sendMsg)
	}
	r.printf("MR was registered with addr=0x%x, lkey=0x%x, rkey=0x%x, flags=0x%x\n",
		r.ep.Addr(), r.ep.LKey(), r.ep.RKey(), mrFlags)
	if err := r.ep.CreateQP(); err != nil {
		r.fail("failed to create QP")
		return false
	}
	r.printf("QP was created, QP number=0x%x\n", r.ep.QPNum())
	return true
}

// connectTCP is the original's sock_connect with its error lines, bounded
// by the timeout.
func (r *runner) connectTCP() bool {
	if r.conn != nil {
		return true // accepted by the caller (ServeConn)
	}
	var err error
	if r.client() {
		r.conn, err = dial(r.opts.Server, r.opts.TCPPort, r.opts.Timeout)
		if err != nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) {
				msg := "Temporary failure in name resolution"
				if dnsErr.IsNotFound {
					msg = "Name or service not known"
				}
				r.fail("%s for %s:%d", msg, r.opts.Server, r.opts.TCPPort)
			} else {
				r.printf("failed connect \n")
			}
			r.fail("Couldn't connect to %s:%d", r.opts.Server, r.opts.TCPPort)
			r.fail("failed to establish TCP connection to server %s, port %d", r.opts.Server, r.opts.TCPPort)
			return false
		}
		return true
	}
	r.printf("waiting on port %d for TCP connection\n", r.opts.TCPPort)
	r.conn, err = listenAccept(r.opts.TCPPort, r.opts.Timeout)
	if err != nil {
		r.fail("server accept: %s", strerror(err))
		r.fail("accept() failed")
		r.fail("failed to establish TCP connection with client on port %d", r.opts.TCPPort)
		return false
	}
	return true
}

func (r *runner) printPort() {
	r.printf("\t\t\tstate:\t\t\t%s (%d)\n", portStateName(r.port.State), r.port.State)
	r.printf("\t\t\tsm_lid:\t\t\t%d\n", r.port.SMLID)
	r.printf("\t\t\tport_lid:\t\t%d\n", r.port.LID)
	r.printf("\t\t\tport_lmc:\t\t0x%02x\n", r.port.LMC)
	r.printf("\t\t\tlink_layer:\t\t%s\n", linkLayerName(r.port.LinkLayer))
}

func portStateName(s int) string {
	switch s {
	case 1:
		return "PORT_DOWN"
	case 2:
		return "PORT_INIT"
	case 3:
		return "PORT_ARMED"
	case 4:
		return "PORT_ACTIVE"
	}
	return "invalid state"
}

func linkLayerName(l int) string {
	switch l {
	case LinkLayerUnspecified:
		return "Unspecified"
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

// connectQP is the original's connect_qp: swap records, then INIT, RTR,
// RTS and the "Q" sync.
func (r *runner) connectQP() bool {
	if r.opts.GIDAuto && !r.chooseGID() {
		return false
	}
	if r.opts.GRH {
		g, err := r.dev.QueryGID(r.opts.IBPort, r.opts.GIDIndex)
		if err != nil {
			r.fail("could not get gid for port %d, index %d", r.opts.IBPort, r.opts.GIDIndex)
			return false
		}
		r.gid = g
		if !r.client() {
			r.printf("The IP address is: %s\n", g.IPv4())
		}
	}
	local := Record{Addr: r.ep.Addr(), RKey: r.ep.RKey(), QPNum: r.ep.QPNum(), LID: r.port.LID, GID: r.gid}
	r.sum.Local = r.recordJSON(local)
	r.printf("\nLocal LID = 0x%x\n", r.port.LID)
	remote, err := exchangeRecords(r.conn, local, r.opts.Timeout)
	if err != nil {
		r.fail("failed to exchange connection data between sides")
		r.hint(fmt.Sprintf("the peer did not send its %d-byte connection record (%v): is it an RC demo (rdmactl demo or RDMA_RC_example) on the same TCP port?", RecordSize, err))
		return false
	}
	r.remote = remote
	r.sum.Remote = r.recordJSON(remote)
	r.printf("Remote address = 0x%x\n", remote.Addr)
	r.printf("Remote rkey = 0x%x\n", remote.RKey)
	r.printf("Remote QP number = 0x%x\n", remote.QPNum)
	r.printf("Remote LID = 0x%x\n", remote.LID)
	if r.opts.GRH {
		r.printf("Remote GID = %s\n", GID(remote.GID).Colons())
	}
	if err := r.ep.ToInit(r.opts.IBPort); err != nil {
		r.fail("failed to modify QP state to INIT")
		r.fail("change QP state to INIT failed")
		return false
	}
	if r.client() {
		if err := r.ep.PostRecv(msgSize); err != nil {
			r.fail("failed to post RR")
			r.fail("failed to post RR")
			return false
		}
		r.printf("Receive Request was posted\n")
	}
	err = r.ep.ToRTR(RTR{
		Port: r.opts.IBPort, DestQPN: remote.QPNum, DestLID: remote.LID,
		GRH: r.opts.GRH, DestGID: remote.GID, SGIDIndex: r.opts.GIDIndex,
	})
	if err != nil {
		r.fail("failed to modify QP state to RTR")
		r.fail("failed to modify QP state to RTR")
		r.hint(r.gidAdvice("RTR was refused"))
		return false
	}
	fmt.Fprintf(r.errOut, "Modified QP state to RTR\n") // stderr in the original
	if err := r.ep.ToRTS(); err != nil {
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

// chooseGID resolves -g auto: the RoCE v2 entry carrying the address of
// this end of the TCP connection, which is the address the peer reaches.
func (r *runner) chooseGID() bool {
	local := netip.Addr{}
	if ta, ok := r.conn.LocalAddr().(*net.TCPAddr); ok {
		local, _ = netip.AddrFromSlice(ta.IP)
		local = local.Unmap()
	}
	table, err := r.dev.GIDTable(r.opts.IBPort)
	var e gids.Entry
	if err == nil {
		entries := make([]gids.Entry, len(table))
		for i, g := range table {
			entries[i] = gids.Entry{Device: r.opts.Device, Port: uint8(r.opts.IBPort), GIDEntry: g}
		}
		e, err = gids.ChooseForIP(entries, local)
	}
	if err != nil || e.Type != rdma.GIDTypeRoCEv2 {
		r.fail("could not choose a GID index: no RoCE v2 GID of %s port %d carries %s, the address of this end of the TCP connection", r.opts.Device, r.opts.IBPort, local)
		r.hint(fmt.Sprintf("the device must sit on the interface that has %s; see 'rdmactl gids' for which device carries it, then pass -d", local))
		return false
	}
	r.opts.GRH, r.opts.GIDIndex = true, int(e.Index)
	r.printf("GID index auto: %d (%s %s, this end of the TCP connection)\n", e.Index, e.Type, local)
	return true
}

// gidType is the type of the local GID entry in use, 0 (IB) when unknown.
func (r *runner) gidType() rdma.GIDType {
	table, _ := r.dev.GIDTable(r.opts.IBPort)
	for _, e := range table {
		if int(e.Index) == r.opts.GIDIndex {
			return e.Type
		}
	}
	return rdma.GIDTypeIB
}

// gidAdvice names the likely reason the peers cannot reach each other.
func (r *runner) gidAdvice(what string) string {
	see := fmt.Sprintf("see 'rdmactl gids -d %s', or use -g auto on both sides", r.opts.Device)
	remote := GID(r.remote.GID)
	switch {
	case !r.opts.GRH:
		return fmt.Sprintf("%s with the peer addressed by LID 0x%x only (no -g): on InfiniBand check the subnet manager and LIDs; on RoCE both sides need a GID index; %s", what, r.remote.LID, see)
	case r.gid.IsLinkLocal():
		return fmt.Sprintf("%s: local GID index %d is the link-local entry %s, which RoCE cannot route to the peer; %s", what, r.opts.GIDIndex, r.gid, see)
	case r.gidType() == rdma.GIDTypeRoCEv1:
		return fmt.Sprintf("%s: local GID index %d is a RoCE v1 entry; use the RoCE v2 one of the same address; %s", what, r.opts.GIDIndex, see)
	case remote.IsZero():
		return fmt.Sprintf("%s: the peer sent no GID (it ran without -g); %s", what, see)
	case remote.IsLinkLocal():
		return fmt.Sprintf("%s: the peer's GID %s is its link-local entry; the peer needs the RoCE v2 GID of its IP address; %s", what, remote, see)
	case remote.IsIPv4() != r.gid.IsIPv4():
		return fmt.Sprintf("%s: the GIDs differ in kind (local %s, peer %s): both must be RoCE v2 GIDs of the same IP family; %s", what, r.gid, remote, see)
	}
	return fmt.Sprintf("%s: check that both sides use RoCE v2 GIDs of the addresses they reach each other on (local %s, peer %s); %s", what, r.gid, remote, see)
}

// transfer is the original's main after connect_qp: the server's SEND,
// the client's RDMA read and write of the server's buffer, the "R" and
// "W" syncs.
func (r *runner) transfer() bool {
	buf := r.ep.Buffer()
	if !r.client() {
		if err := r.ep.PostSend(OpSend, msgSize, 0, 0); err != nil {
			r.fail("failed to post SR")
			r.fail("failed to post sr")
			return false
		}
		r.printf("Send Request was posted\n")
	}
	switch r.awaitCompletion(r.client()) {
	case failed:
		r.fail("poll completion failed")
		return false
	case peerWentOn:
		fmt.Fprintf(r.errOut, "note: the server sent no message and went on (a build of the example without the SEND); continuing as its client does\n")
	}
	if r.client() {
		msg := cString(buf)
		r.sum.Message = &msg
		r.printf("Message is: '%s'\n", msg)
	} else {
		putCString(buf, readMsg)
	}
	if err := r.syncByte('R'); err != nil {
		r.fail("sync error before RDMA ops")
		return false
	}
	if r.client() {
		if err := r.ep.PostSend(OpRDMARead, msgSize, r.remote.Addr, r.remote.RKey); err != nil {
			r.fail("failed to post SR")
			r.fail("failed to post SR 2")
			return false
		}
		r.printf("RDMA Read Request was posted\n")
		if !r.pollCompletion() {
			r.fail("poll completion failed 2")
			return false
		}
		read := cString(buf)
		r.sum.ReadBack = &read
		r.printf("Contents of server's buffer: '%s'\n", read)
		putCString(buf, writeMsg)
		r.printf("Now replacing it with: '%s'\n", cString(buf))
		if err := r.ep.PostSend(OpRDMAWrite, msgSize, r.remote.Addr, r.remote.RKey); err != nil {
			r.fail("failed to post SR")
			r.fail("failed to post SR 3")
			return false
		}
		r.printf("RDMA Write Request was posted\n")
		if !r.pollCompletion() {
			r.fail("poll completion failed 3")
			return false
		}
	}
	if err := r.syncByte('W'); err != nil {
		r.fail("sync error after RDMA ops")
		return false
	}
	if !r.client() {
		final := cString(buf)
		r.sum.Buffer = &final
		r.printf("Contents of server buffer: '%s'\n", final)
	}
	return true
}

// pollCompletion polls for one completion for PollTimeout, as the original.
func (r *runner) pollCompletion() bool { return r.awaitCompletion(false) == completed }

type outcome int

const (
	completed outcome = iota
	failed
	peerWentOn // the peer's next sync byte came first: it will never send
)

// awaitCompletion polls the CQ for PollTimeout. With watchPeer it also
// notices the server's "R" sync arriving first: builds of the example with
// the SEND commented out (the seed's ibv_demo) go straight on, and their
// client never polls for a message.
func (r *runner) awaitCompletion(watchPeer bool) outcome {
	deadline := time.Now().Add(PollTimeout)
	peerMoved := false
	for {
		c, ok, err := r.ep.Poll()
		switch {
		case err != nil:
			r.fail("poll CQ failed")
			return failed
		case ok:
			r.printf("completion was found in CQ with status 0x%x\n", c.Status)
			if c.Status != 0 {
				r.fail("got bad completion with status: 0x%x, vendor syndrome: 0x%x", c.Status, c.VendorErr)
				r.hint(r.gidAdvice(fmt.Sprintf("the operation failed (status 0x%x)", c.Status)))
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
		return syncByte(r.conn, marker, r.opts.Timeout)
	}
	r.pending = nil
	if err := r.conn.SetWriteDeadline(time.Now().Add(r.opts.Timeout)); err != nil {
		return err
	}
	defer r.conn.SetWriteDeadline(time.Time{})
	_, err := r.conn.Write([]byte{marker})
	return err
}

// destroy releases in the original's order: QP and memory, device, socket.
func (r *runner) destroy() error {
	var errs []error
	if r.ep != nil {
		errs = append(errs, r.ep.Close())
	}
	if r.dev != nil {
		errs = append(errs, r.dev.Close())
	}
	if r.conn != nil {
		errs = append(errs, r.conn.Close())
	}
	return errors.Join(errs...)
}

// putCString stores s and its terminating NUL at the start of buf, as
// strcpy does.
func putCString(buf []byte, s string) {
	copy(buf, s)
	buf[len(s)] = 0
}

// cString is what printf("%s") shows of buf: the bytes before the first NUL.
func cString(buf []byte) string {
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		return string(buf[:i])
	}
	return string(buf)
}
