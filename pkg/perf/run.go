// Package perf is `rdmactl perf`: perftest's bandwidth and latency tests
// (ib_send_bw, ib_write_bw, ib_read_bw, ib_send_lat, ib_write_lat,
// ib_read_lat), speaking their out-of-band TCP exchange so that either
// side may be the real perftest, and printing their result tables.
package perf

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"strconv"
	"syscall"
	"time"
)

// session is one run's shared state.
type session struct {
	r       Resolved
	out     io.Writer // perftest's stdout; io.Discard under --json
	errOut  io.Writer
	dev     Device
	ep      Endpoint
	oob     *OOB
	port    Port
	gidIdx  int
	mtu     int
	local   Dest
	remote  Dest
	withGID bool
	result  *Result
}

// Run runs one side of the test. Output goes to out as perftest prints it
// (or as one JSON document with --json); errors are returned, with a hint
// where the cause is a classic one.
func Run(o Options, v Verbs, out, errOut io.Writer) error {
	r, err := o.Resolve()
	if err != nil {
		return &UsageError{err}
	}
	s := &session{r: r, out: out, errOut: errOut, result: newResult(r)}
	if r.JSON {
		s.out = io.Discard
	}
	defer s.close()
	if err := s.openDevice(v); err != nil {
		return err
	}
	conn, err := s.connectTCP()
	if err != nil {
		return err
	}
	if err := s.prepare(conn); err != nil {
		return err
	}
	switch {
	case r.Test == WriteBW || r.Test == ReadBW:
		err = s.runRDMABW()
	case r.Test == SendBW:
		err = s.runSendBW()
	case r.Test == SendLat:
		err = s.runSendLat()
	case r.Test == WriteLat:
		err = s.runWriteLat()
	default:
		err = s.runReadLat()
	}
	if err != nil {
		return err
	}
	if r.JSON {
		return s.result.write(out)
	}
	return nil
}

// UsageError is a bad option value (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func (s *session) close() {
	if s.ep != nil {
		s.ep.Close()
	}
	if s.dev != nil {
		s.dev.Close()
	}
}

func (s *session) openDevice(v Verbs) error {
	var err error
	if s.dev, err = v.Open(s.r.Device); err != nil {
		return err
	}
	if s.port, err = s.dev.Port(s.r.IBPort); err != nil {
		return fmt.Errorf("%s port %d: %w", s.dev.Name(), s.r.IBPort, err)
	}
	if !s.port.Active {
		return hinted(fmt.Errorf("%s port %d is not active", s.dev.Name(), s.r.IBPort),
			"bring the link up (ip link set DEV up) or pick another port with -i")
	}
	s.mtu = s.port.ActiveMTU
	if s.r.MTU != 0 {
		want, _ := mtuEnum(s.r.MTU)
		if want > s.port.ActiveMTU {
			return hinted(fmt.Errorf("-m %d is above %s port %d's active MTU %d", s.r.MTU, s.dev.Name(), s.r.IBPort, mtuBytes(s.port.ActiveMTU)),
				fmt.Sprintf("use -m %d or less, or raise the network interface's MTU", mtuBytes(s.port.ActiveMTU)))
		}
		s.mtu = want
	}
	s.gidIdx = s.r.GIDIndex
	if s.gidIdx >= 0 {
		gid, err := s.dev.GID(s.r.IBPort, s.gidIdx)
		if err == nil && gid == ([16]byte{}) {
			err = errors.New("the entry is empty")
		}
		if err != nil {
			return hinted(fmt.Errorf("-x %d: GID index %d of %s port %d: %v", s.gidIdx, s.gidIdx, s.dev.Name(), s.r.IBPort, err),
				"list the GIDs with 'rdmactl gids' or use -x auto")
		}
	}
	return nil
}

// connectTCP opens the out-of-band connection: the server accepts one
// client on the TCP port, the client connects to it.
func (s *session) connectTCP() (net.Conn, error) {
	addr := net.JoinHostPort(s.r.Server, strconv.Itoa(s.r.TCPPort))
	if s.r.Server == "" {
		fmt.Fprint(s.out, "\n************************************\n* Waiting for client to connect... *\n************************************\n")
		ln, err := net.Listen("tcp4", addr)
		if err != nil {
			return nil, fmt.Errorf("Couldn't listen to port %d: %w", s.r.TCPPort, err)
		}
		defer ln.Close()
		if tl, ok := ln.(*net.TCPListener); ok && s.r.Timeout > 0 {
			tl.SetDeadline(time.Now().Add(s.r.Timeout))
		}
		conn, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, hinted(fmt.Errorf("no client connected to TCP port %d within %v", s.r.TCPPort, s.r.Timeout),
					"start the client with this host's address, or raise --timeout")
			}
			return nil, err
		}
		return conn, nil
	}
	d := net.Dialer{Timeout: s.r.Timeout}
	conn, err := d.Dial("tcp4", addr)
	if err != nil {
		err = fmt.Errorf("Couldn't connect to %s:%d: %w", s.r.Server, s.r.TCPPort, err)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, hinted(err, "the peer is not started: run the server side (rdmactl perf "+s.r.Test.String()+" or ib_"+s.r.Test.String()+") first")
		}
		return nil, err
	}
	return conn, nil
}

// prepare runs the exchange's opening (versions, page and cache line
// sizes, MTU), picks the GID, and creates the QP and its buffer.
func (s *session) prepare(conn net.Conn) error {
	if s.r.GIDAuto || (s.gidIdx < 0 && s.port.Ethernet) {
		// perftest picks a GID itself on Ethernet; -x auto picks the one
		// of the address this connection uses.
		ip := conn.LocalAddr().(*net.TCPAddr).IP
		idx, err := s.dev.AutoGID(s.r.IBPort, ip)
		if err != nil {
			conn.Close()
			return hinted(fmt.Errorf("-x auto: %w", err), "list the GIDs with 'rdmactl gids' and give -x N")
		}
		s.gidIdx = idx
	}
	s.withGID = s.gidIdx >= 0
	s.oob = NewOOB(conn, s.r.Server != "", s.withGID, s.r.Timeout)
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
	events := s.r.Test.Latency() && !s.r.BusyPoll
	s.ep, err = s.dev.NewEndpoint(EndpointConfig{
		Port: s.r.IBPort, BufSize: 2 * s.r.BufSize, TxDepth: s.r.TxDepth, RxDepth: s.r.RxDepth, Events: events,
	})
	if err != nil {
		return err
	}
	var gid [16]byte
	if s.withGID {
		if gid, err = s.dev.GID(s.r.IBPort, s.gidIdx); err != nil {
			return err
		}
	}
	outReads := 1
	if s.r.Test.IsRead() {
		if outReads, err = s.dev.MaxReads(); err != nil {
			return err
		}
	}
	s.local = Dest{
		LID: s.port.LID, OutReads: uint32(outReads), QPN: s.ep.QPN(), PSN: rand.Uint32() & 0xffffff,
		RKey: s.ep.RKey(), VAddr: s.ep.Addr() + uint64(s.r.BufSize), GID: gid,
	}
	s.result.setup(s, outReads)
	WriteHeader(s.out, HeaderInfo{
		Test: s.r.Test, Client: s.r.Server != "", Device: s.dev.Name(), QPs: s.r.QPs,
		TxDepth: s.r.TxDepth, RxDepth: s.r.RxDepth, CQMod: s.r.CQMod, MTUBytes: mtuBytes(s.mtu),
		Ethernet: s.port.Ethernet, GIDIndex: s.gidIdx, OutReads: outReads,
	})
	return nil
}

// connectPeer is the first handshake (learn the peer's QP record), then
// the move of the QP to RTS towards it. Where the tests' sync points fall
// around it is each test's own (bw.go, lat.go).
func (s *session) connectPeer() error {
	d, err := s.oob.Handshake(s.local)
	if err != nil {
		return s.peerErr(err)
	}
	s.remote = d
	if s.withGID && isV4Mapped(s.local.GID) != isV4Mapped(s.remote.GID) {
		return hinted(errors.New("Found Incompatibility issue with GID types: one side's GID is IPv4-mapped, the other's is not"),
			"give both sides -x of the same IP version (or -x auto)")
	}
	err = s.ep.Connect(Connect{Port: s.r.IBPort, MTU: s.mtu, Local: s.local, Remote: s.remote, GIDIndex: s.gidIdx})
	if err != nil {
		return fmt.Errorf("Unable to Connect the HCA's through the link: %w", err)
	}
	return nil
}

// sync is a barrier handshake.
func (s *session) sync() error {
	if _, err := s.oob.Handshake(s.local); err != nil {
		return s.peerErr(err)
	}
	return nil
}

// printAddresses prints this side's QP record, handshakes once more and
// prints the peer's, as perftest does.
func (s *session) printAddresses() error {
	WriteAddress(s.out, "local", s.r.Test, s.local, s.withGID)
	if err := s.sync(); err != nil {
		return err
	}
	WriteAddress(s.out, "remote", s.r.Test, s.remote, s.withGID)
	return nil
}

func (s *session) peerErr(err error) error {
	if errors.Is(err, ErrPeerClosed) {
		return hinted(fmt.Errorf("exchange with the peer failed: %w", err),
			"the peer gave up: read its error; both sides must run the same test ("+s.r.Test.String()+")")
	}
	return fmt.Errorf("exchange with the peer failed: %w", err)
}

func isV4Mapped(g [16]byte) bool {
	for _, b := range g[:10] {
		if b != 0 {
			return false
		}
	}
	return g[10] == 0xff && g[11] == 0xff
}

// HintedError carries a one-line hint on how to fix a classic failure.
type HintedError struct {
	Err  error
	Hint string
}

func (e *HintedError) Error() string { return e.Err.Error() }
func (e *HintedError) Unwrap() error { return e.Err }

func hinted(err error, hint string) error { return &HintedError{Err: err, Hint: hint} }
