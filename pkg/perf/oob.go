package perf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/oob"
)

// Version is the perftest version rdmactl speaks: the one Debian ships
// (perftest 4.5+0.17 prints "Version: 6.06"). Peers compare it with
// atof(), so only the leading number matters.
const Version = "6.06"

// versionLen is the size of perftest's version field (MAX_VERSION).
const versionLen = 16

// VersionSize is the version field's size, the client's opening.
const VersionSize = versionLen

// busyVersion is what a responder that runs another session answers in
// place of its version: no perftest takes it for one (it starts with no
// digit), and rdmactl's client says what it means.
const busyVersion = "busy"

// AnswerBusy tells a client whose version was already read that the
// server is busy, within timeout.
func AnswerBusy(conn net.Conn, timeout time.Duration) error {
	conn.SetWriteDeadline(time.Now().Add(timeout))
	b := make([]byte, versionLen)
	copy(b, busyVersion)
	_, err := conn.Write(b)
	return err
}

// OOB is the out-of-band TCP channel of a perftest run. Every exchange is
// symmetric: the client writes its part and then reads the server's, the
// server reads first and then writes, so neither side ever blocks the
// other's write.
type OOB struct {
	conn    net.Conn
	client  bool
	withGID bool
	timeout time.Duration
	// msg, when set, carries the exchange instead of conn: rdma_cm's
	// control connection (-R), whose QP records are binary.
	msg      messenger
	gidIndex int // the binary record's last field
	// PeerVersion is the peer's version string, set by Versions.
	PeerVersion string
}

// NewOOB wraps an established connection. withGID selects the GID form of
// the QP record; both sides use it when they run with -x.
func NewOOB(conn net.Conn, client, withGID bool, timeout time.Duration) *OOB {
	return &OOB{conn: conn, client: client, withGID: withGID, timeout: timeout}
}

// ErrPeerClosed means the peer closed the TCP connection mid-exchange.
var ErrPeerClosed = errors.New("the peer closed the connection")

// exchange sends mine and returns the peer's record of the same size.
func (o *OOB) exchange(mine []byte) ([]byte, error) {
	if o.msg != nil {
		return o.msg.exchange(mine, o.client)
	}
	theirs := make([]byte, len(mine))
	var deadline time.Time // none: the last exchange's must not linger
	if o.timeout > 0 {
		deadline = time.Now().Add(o.timeout)
	}
	o.conn.SetDeadline(deadline)
	write := func() error { _, err := o.conn.Write(mine); return err }
	read := func() error {
		_, err := io.ReadFull(o.conn, theirs)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return ErrPeerClosed
		}
		return err
	}
	first, second := read, write
	if o.client {
		first, second = write, read
	}
	err := first()
	if err == nil {
		err = second()
	}
	if o.timeout > 0 && oob.IsTimeout(err) {
		return nil, &cli.TimeoutError{After: o.timeout, Doing: "waiting for the peer"}
	}
	if err != nil {
		return nil, err
	}
	return theirs, nil
}

// PeerLeft says, without waiting, whether the peer closed the
// connection: what a side that expects nothing more from the peer can
// look at. The rdma_cm exchange cannot tell (false).
func (o *OOB) PeerLeft() bool {
	if o.msg != nil {
		return false
	}
	o.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	defer o.conn.SetReadDeadline(time.Time{})
	var b [1]byte
	_, err := o.conn.Read(b[:])
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// Versions swaps version strings and refuses peers older than 5.70, the
// oldest perftest whose exchange this one speaks.
func (o *OOB) Versions() error {
	mine := make([]byte, versionLen)
	copy(mine, Version)
	theirs, err := o.exchange(mine)
	if err != nil {
		return fmt.Errorf("exchanging versions: %w", err)
	}
	o.PeerVersion = cString(theirs)
	if o.PeerVersion == busyVersion {
		return cli.WithHint(errors.New("the server is busy: rdmactl serve runs one perftest session at a time"),
			"retry when the other client is done")
	}
	if v := leadingFloat(o.PeerVersion); v < 5.70 {
		return fmt.Errorf("peer's perftest version %q is older than 5.70, which this exchange needs", o.PeerVersion)
	}
	return nil
}

// SysData swaps the cycle buffer (page) size and cache line size; each
// side then uses the larger of the two.
func (o *OOB) SysData(cycleBuffer, cacheLine int) (int, int, error) {
	var vals [2]int
	for i, mine := range []int{cycleBuffer, cacheLine} {
		b := binary.BigEndian.AppendUint32(nil, uint32(mine))
		theirs, err := o.exchange(b)
		if err != nil {
			return 0, 0, fmt.Errorf("exchanging page and cache line sizes: %w", err)
		}
		vals[i] = max(mine, int(int32(binary.BigEndian.Uint32(theirs))))
	}
	return vals[0], vals[1], nil
}

// MTU swaps the MTUs (enum ibv_mtu, 1..5) the two sides would use and
// returns the smaller; a value the peer sends that is no MTU is ignored,
// as perftest does.
func (o *OOB) MTU(mine int) (int, error) {
	// perftest sends sprintf("%d") truncated to two bytes: "3\0".
	b := make([]byte, 2)
	copy(b, strconv.Itoa(mine))
	theirs, err := o.exchange(b)
	if err != nil {
		return 0, fmt.Errorf("exchanging MTUs: %w", err)
	}
	rem, _ := strconv.Atoi(cString(theirs))
	if rem >= 1 && rem <= 5 && rem < mine {
		return rem, nil
	}
	return mine, nil
}

// Handshake swaps QP records. perftest also uses it as a barrier: both
// sides call it at the same points of the test.
func (o *OOB) Handshake(mine Dest) (Dest, error) {
	if o.msg != nil {
		theirs, err := o.exchange(mine.EncodeBinary(o.gidIndex))
		if err != nil {
			return Dest{}, err
		}
		return DecodeDestBinary(theirs)
	}
	theirs, err := o.exchange(mine.Encode(o.withGID))
	if err != nil {
		return Dest{}, err
	}
	return DecodeDest(theirs, o.withGID)
}

// BWReport is the bandwidth result the client hands the server at the end
// of a one-way bandwidth test (struct bw_report_data's exchanged part).
type BWReport struct {
	Size    uint64
	Iters   uint64
	BWPeak  float64
	BWAvg   float64
	MsgRate float64
}

// Reports swaps bandwidth reports field by field in network order, as
// perftest does for peers at version 5.33 or later.
func (o *OOB) Reports(mine BWReport) (BWReport, error) {
	var r BWReport
	u64 := func(v uint64) ([]byte, error) { return o.exchange(binary.BigEndian.AppendUint64(nil, v)) }
	fields := []struct {
		mine uint64
		dst  func(uint64)
	}{
		{mine.Size, func(v uint64) { r.Size = v }},
		{mine.Iters, func(v uint64) { r.Iters = v }},
		{math.Float64bits(mine.BWPeak), func(v uint64) { r.BWPeak = math.Float64frombits(v) }},
		{math.Float64bits(mine.BWAvg), func(v uint64) { r.BWAvg = math.Float64frombits(v) }},
		{math.Float64bits(mine.MsgRate), func(v uint64) { r.MsgRate = math.Float64frombits(v) }},
	}
	for _, f := range fields {
		b, err := u64(f.mine)
		if err != nil {
			return BWReport{}, fmt.Errorf("exchanging results: %w", err)
		}
		f.dst(binary.BigEndian.Uint64(b))
	}
	return r, nil
}

// maxReportedSize bounds a reported message size: perftest's -s takes up
// to 2^31. maxReportedIters is 2^53, more than any run makes and the
// largest integer a JSON reader keeps exact.
const (
	maxReportedSize  = 1 << 31
	maxReportedIters = 1 << 53
)

// Check refuses a report no perftest run produces: the numbers come from
// the peer, and NaN, infinities or negative rates cannot be printed as a
// result (nor encoded as JSON).
// plus is a bidirectional run's result: both sides' rates added, as
// perftest sums them, with this side's size and iterations.
func (r BWReport) plus(o BWReport) BWReport {
	r.BWPeak += o.BWPeak
	r.BWAvg += o.BWAvg
	r.MsgRate += o.MsgRate
	return r
}

func (r BWReport) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"a peak bandwidth", r.BWPeak}, {"an average bandwidth", r.BWAvg}, {"a message rate", r.MsgRate}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("the peer reported %s of %v", f.name, f.v)
		}
	}
	if r.Size < 1 || r.Size > maxReportedSize {
		return fmt.Errorf("the peer reported a message size of %d bytes", r.Size)
	}
	if r.Iters > maxReportedIters {
		return fmt.Errorf("the peer reported %d iterations", r.Iters)
	}
	return nil
}

// Close ends the run as perftest does: a last handshake, then "done" (which
// nobody reads), then the socket closes.
func (o *OOB) Close(mine Dest) error {
	_, err := o.Handshake(mine)
	if o.msg != nil {
		// Over rdma_cm the handshake is all; the connection goes with
		// the resources.
		return err
	}
	if err == nil {
		if o.timeout > 0 {
			o.conn.SetDeadline(time.Now().Add(o.timeout))
		}
		_, err = o.conn.Write([]byte("done\x00"))
		// Take the peer's "done" before closing: closing with it unread
		// would reset the connection under the peer's own write.
		o.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		io.ReadFull(o.conn, make([]byte, 5))
	}
	o.conn.Close()
	return err
}

// Linger ends a run that has no closing handshake (write_lat) without
// cutting the peer's last write short: it half-closes this side, then
// waits at most d for the peer to end its own, and only then closes. The
// QP lives as long: ib_write_lat exits, closing its socket, only once its
// last write completed, which needs this side's QP; another rdmactl
// half-closes as this side does, so two of them part at once.
func (o *OOB) Linger(d time.Duration) {
	if hc, ok := o.conn.(interface{ CloseWrite() error }); ok {
		hc.CloseWrite()
	}
	o.conn.SetReadDeadline(time.Now().Add(d))
	// What a peer still sends is not read: it is not perftest's.
	io.Copy(io.Discard, io.LimitReader(o.conn, lingerDrain))
	o.conn.Close()
}

// lingerDrain bounds what Linger reads from a peer that keeps sending.
const lingerDrain = 64 << 10

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// leadingFloat is atof: the longest numeric prefix, 0 when there is none.
func leadingFloat(s string) float64 {
	end := 0
	dot := false
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' && !dot) {
		dot = dot || s[end] == '.'
		end++
	}
	v, _ := strconv.ParseFloat(s[:end], 64)
	return v
}
