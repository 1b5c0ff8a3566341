package perf

import (
	"bytes"
	"encoding/binary"
	"math"
	"net"
	"strings"
	"testing"
	"time"
)

// recordingConn keeps what one side wrote.
type recordingConn struct {
	net.Conn
	wrote bytes.Buffer
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.wrote.Write(b)
	return c.Conn.Write(b)
}

// acceptOne listens on a loopback port and accepts one connection in the
// background (nil when accepting failed); the listener closes with the
// test.
func acceptOne(t *testing.T) (*net.TCPAddr, <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	return ln.Addr().(*net.TCPAddr), accepted
}

// tcpPair is a connected pair of loopback TCP sockets: the exchange
// relies on the kernel's buffering as perftest does (both sides write
// "done" at once), which net.Pipe does not have.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	addr, accepted := acceptOne(t)
	client, err := net.Dial("tcp4", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// pair runs the client's and the server's steps at once over a pipe.
func pair(t *testing.T, client, server func(*OOB) error) *recordingConn {
	t.Helper()
	a, b := tcpPair(t)
	rec := &recordingConn{Conn: a}
	done := make(chan error, 1)
	go func() { done <- server(NewOOB(b, false, true, 5*time.Second)) }()
	if err := client(NewOOB(rec, true, true, 5*time.Second)); err != nil {
		t.Fatalf("client: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	return rec
}

// TestOOBOpening checks the bytes of the exchange's opening against
// perftest's: a 16-byte version string, the page and cache line sizes as
// big-endian ints, and the MTU as two bytes of text.
func TestOOBOpening(t *testing.T) {
	var gotMTU, srvMTU int
	rec := pair(t, func(o *OOB) error {
		if err := o.Versions(); err != nil {
			return err
		}
		if o.PeerVersion != Version {
			t.Errorf("peer version %q", o.PeerVersion)
		}
		if _, _, err := o.SysData(4096, 64); err != nil {
			return err
		}
		var err error
		gotMTU, err = o.MTU(3)
		return err
	}, func(o *OOB) error {
		if err := o.Versions(); err != nil {
			return err
		}
		cb, cl, err := o.SysData(8192, 64)
		if err != nil {
			return err
		}
		if cb != 8192 || cl != 64 {
			t.Errorf("server SysData = %d, %d; want the larger of each", cb, cl)
		}
		srvMTU, err = o.MTU(5)
		return err
	})
	want := append([]byte("6.06"), make([]byte, 12)...)
	want = append(want, 0, 0, 0x10, 0, 0, 0, 0, 0x40, '3', 0)
	if !bytes.Equal(rec.wrote.Bytes(), want) {
		t.Fatalf("client wrote\n%q\nwant\n%q", rec.wrote.Bytes(), want)
	}
	if gotMTU != 3 || srvMTU != 3 {
		t.Fatalf("MTUs agreed %d and %d, want the smaller, 3", gotMTU, srvMTU)
	}
}

func TestOOBRefusesOldPerftest(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		peer := make([]byte, 16)
		copy(peer, "5.60")
		b.Read(make([]byte, 16))
		b.Write(peer)
	}()
	err := NewOOB(a, true, false, time.Second).Versions()
	if err == nil {
		t.Fatal("a 5.60 peer was accepted")
	}
}

func TestOOBHandshakeAndReports(t *testing.T) {
	mine := Dest{QPN: 0x11, PSN: 0x1234, RKey: 9, VAddr: 0x1000}
	theirs := Dest{QPN: 0x12, PSN: 0x5678, RKey: 10, VAddr: 0x2000}
	rep := BWReport{Size: 65536, Iters: 5000, BWPeak: 43.35, BWAvg: 27.82, MsgRate: 0.000445}
	var got BWReport
	rec := pair(t, func(o *OOB) error {
		d, err := o.Handshake(mine)
		if err != nil {
			return err
		}
		if d != theirs {
			t.Errorf("client got %+v", d)
		}
		if _, err := o.Reports(rep); err != nil {
			return err
		}
		return o.Close(mine)
	}, func(o *OOB) error {
		d, err := o.Handshake(theirs)
		if err != nil {
			return err
		}
		if d != mine {
			t.Errorf("server got %+v", d)
		}
		if got, err = o.Reports(BWReport{}); err != nil {
			return err
		}
		return o.Close(theirs)
	})
	if got != rep {
		t.Fatalf("server got report %+v, want %+v", got, rep)
	}
	// The report travels as five big-endian 8-byte fields after the record.
	w := rec.wrote.Bytes()[108:]
	if binary.BigEndian.Uint64(w[0:]) != 65536 || binary.BigEndian.Uint64(w[8:]) != 5000 ||
		math.Float64frombits(binary.BigEndian.Uint64(w[16:])) != 43.35 {
		t.Fatalf("report bytes %x", w[:40])
	}
	if tail := w[40:]; !bytes.HasSuffix(tail, []byte("done\x00")) || len(tail) != 108+5 {
		t.Fatalf("closing: %q", tail)
	}
}

func TestLeadingFloat(t *testing.T) {
	for s, want := range map[string]float64{"6.06": 6.06, "5.70": 5.7, "6.06-rc": 6.06, "": 0, "x": 0, "5.33.1": 5.33} {
		if got := leadingFloat(s); got != want {
			t.Errorf("leadingFloat(%q) = %v, want %v", s, got, want)
		}
	}
}

// A peer's report is input: NaN, infinities, negative rates, a size no
// perftest sends and an iteration count beyond 2^53 are refused.
func TestBWReportCheck(t *testing.T) {
	good := BWReport{Size: 65536, Iters: 1000, BWPeak: 171.3, BWAvg: 171.3, MsgRate: 0.0027}
	if err := good.Check(); err != nil {
		t.Fatalf("a real report: %v", err)
	}
	for name, bad := range map[string]func(*BWReport){
		"NaN average":     func(r *BWReport) { r.BWAvg = math.NaN() },
		"+Inf peak":       func(r *BWReport) { r.BWPeak = math.Inf(1) },
		"negative rate":   func(r *BWReport) { r.MsgRate = -1 },
		"size 0":          func(r *BWReport) { r.Size = 0 },
		"size 2^64-1":     func(r *BWReport) { r.Size = math.MaxUint64 },
		"2^64-1 iterates": func(r *BWReport) { r.Iters = math.MaxUint64 },
	} {
		r := good
		bad(&r)
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), "the peer reported") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Linger waits for the peer to end the connection, as ib_write_lat does
// when it exits, and no longer.
func TestLingerWaitsForThePeersClose(t *testing.T) {
	a, b := tcpPair(t)
	time.AfterFunc(200*time.Millisecond, func() { b.Close() })
	begin := time.Now()
	NewOOB(a, true, false, time.Second).Linger(10 * time.Second)
	if took := time.Since(begin); took < 150*time.Millisecond || took > 5*time.Second {
		t.Errorf("Linger returned after %v; the peer closed after 200ms", took)
	}
}

// Two rdmactl sides lingering part at once: each half-close ends the
// other's wait.
func TestLingerOnBothSidesPartsAtOnce(t *testing.T) {
	a, b := tcpPair(t)
	begin := time.Now()
	done := make(chan struct{})
	go func() {
		NewOOB(b, false, false, time.Second).Linger(10 * time.Second)
		close(done)
	}()
	NewOOB(a, true, false, time.Second).Linger(10 * time.Second)
	<-done
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("both sides lingered %v", took)
	}
}

// A peer that stays silent and never closes holds this side until the
// bound, and one that keeps sending no longer either.
func TestLingerIsBounded(t *testing.T) {
	a, _ := tcpPair(t)
	begin := time.Now()
	NewOOB(a, true, false, time.Second).Linger(300 * time.Millisecond)
	if took := time.Since(begin); took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("Linger returned after %v against a silent peer; bound 300ms", took)
	}

	a, b := tcpPair(t)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		junk := make([]byte, 1024)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := b.Write(junk); err != nil {
				return
			}
		}
	}()
	begin = time.Now()
	NewOOB(a, true, false, time.Second).Linger(10 * time.Second)
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("Linger held on for %v against a peer that keeps sending", took)
	}
}
