package perf

import (
	"bytes"
	"errors"
	"net"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// lockedBuffer is an output both the run and the test read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// infiniteRow is a --run_infinitely row of 64 KiB messages: a count, no
// peak, an average and a message rate.
var infiniteRow = regexp.MustCompile(`(?m)^ 65536 +(\d+) +0\.00 +(\d+\.\d\d) *\t\t +(\d+\.\d{6})$`)

// TestRunInfinitely: the active side prints a row per period until it
// stops (here: its connection breaks, or its sends vanish and it gives
// up), then the server ends with errPeerLeft at once, not after its step
// timeout; send_bw's server prints its own rows meanwhile, and with -b
// both sides print.
func TestRunInfinitely(t *testing.T) {
	for _, c := range []struct {
		test      Test
		bidir     bool
		serverRow bool
		stop      func(*rdmatest.Fabric)
	}{
		{WriteBW, false, false, func(v *rdmatest.Fabric) { v.DisconnectAfter(rdma.WRRDMAWrite, 1) }},
		{ReadBW, false, false, func(v *rdmatest.Fabric) { v.DisconnectAfter(rdma.WRRDMARead, 1) }},
		{SendBW, false, true, func(v *rdmatest.Fabric) { v.DropNextSends(1 << 30) }},
		{WriteBW, true, true, func(v *rdmatest.Fabric) { v.DisconnectAfter(rdma.WRRDMAWrite, 1) }},
	} {
		t.Run(c.test.String(), func(t *testing.T) {
			v := newFabric()
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Test: c.test, GIDIndex: 1, IBPort: 1, RunInfinitely: true, Duration: 150 * time.Millisecond,
				Bidirectional: c.bidir, TCPPort: ln.Addr().(*net.TCPAddr).Port, Timeout: time.Second}
			ln.Close()
			var sout, cout lockedBuffer
			var discard bytes.Buffer
			sdone, cdone := make(chan error, 1), make(chan error, 1)
			go func() { sdone <- runOn(o, v, &sout, &discard) }()
			co := o
			co.Server = "127.0.0.1"
			go func() {
				for {
					err := runOn(co, v, &cout, &discard)
					if !errors.Is(err, syscall.ECONNREFUSED) {
						cdone <- err
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
			for deadline := time.Now().Add(20 * time.Second); len(infiniteRow.FindAllString(cout.String(), -1)) < 3; {
				if time.Now().After(deadline) {
					t.Fatalf("no three rows from the client in 20s:\n%s", cout.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			c.stop(v)
			var cerr, serr error
			select {
			case cerr = <-cdone:
			case <-time.After(10 * time.Second):
				t.Fatalf("the client ran on after its connection broke:\n%s", cout.String())
			}
			began := time.Now()
			select {
			case serr = <-sdone:
			case <-time.After(10 * time.Second):
				t.Fatalf("the server ran on 10s after the client left:\n%s", sout.String())
			}
			if cerr == nil {
				t.Errorf("client: no error after its connection broke")
			}
			if !c.bidir && !errors.Is(serr, errPeerLeft) {
				t.Errorf("server: %v, want %v", serr, errPeerLeft)
			}
			if d := time.Since(began); d > 2*time.Second {
				t.Errorf("the server took %v to see the client leave", d)
			}
			for side, out := range map[string]string{"client": cout.String(), "server": sout.String()} {
				rows := infiniteRow.FindAllStringSubmatch(out, -1)
				if side == "server" && !c.serverRow {
					if len(rows) != 0 {
						t.Errorf("the server printed rows:\n%s", out)
					}
					continue
				}
				if len(rows) < 2 {
					t.Errorf("%s: fewer than 2 rows:\n%s", side, out)
				}
				for _, r := range rows {
					if r[1] == "0" || r[2] == "0.00" {
						t.Errorf("%s: row %q moved nothing", side, strings.TrimSpace(r[0]))
					}
				}
			}
		})
	}
}

// TestRunInfinitelyOptions: the period is -D or perftest's 5 s, the run
// has no margins and no peak, -a gives way, and what has no end refuses.
func TestRunInfinitelyOptions(t *testing.T) {
	r, err := Options{Test: WriteBW, RunInfinitely: true, All: true}.Resolve()
	if err != nil || r.Duration != 5*time.Second || r.margin() != 0 || !r.NoPeak || r.All || len(r.Sizes) != 1 || r.Sizes[0] != defSizeBW {
		t.Errorf("--run_infinitely -a: %+v, %v", r, err)
	}
	if r, err := (Options{Test: SendBW, RunInfinitely: true, Duration: 2 * time.Second}).Resolve(); err != nil || r.Duration != 2*time.Second {
		t.Errorf("--run_infinitely -D 2: %v, %v", r.Duration, err)
	}
	var refused *Refusal
	if _, err := (Options{Test: WriteLat, RunInfinitely: true}).Resolve(); !errors.As(err, &refused) || refused.Text != "run_infinitely exists only in BW tests for now." {
		t.Errorf("write_lat --run_infinitely: %v, want perftest's refusal", err)
	}
	for _, o := range []Options{
		{Test: WriteBW, RunInfinitely: true, JSON: true},
		{Test: WriteBW, RunInfinitely: true, RDMACM: true},
		{Test: SendBW, RunInfinitely: true, CommRDMACM: true},
	} {
		if _, err := o.Resolve(); err == nil || errors.As(err, &refused) || !strings.Contains(err.Error(), "--run_infinitely") {
			t.Errorf("%+v: %v, want rdmactl's refusal naming --run_infinitely", o, err)
		}
	}
}
