package perf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestUCFlows: -c UC runs the write and send tests on UC QPs, brought to
// RTR and RTS with the path and PSNs alone, and both headers say UC.
// The send tests' 1000 messages arrive only because the server posts a
// receive for each (perftest's default -r is 512): a UC message finding
// none is lost.
func TestUCFlows(t *testing.T) {
	for _, test := range []Test{WriteBW, SendBW, WriteLat, SendLat} {
		t.Run(test.String(), func(t *testing.T) {
			f := newFakeStack()
			srv, cli, serr, cerr := runPair(t, f, Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 1000, Conn: rdma.QPTypeUC, Timeout: 5 * time.Second})
			if serr != nil || cerr != nil {
				t.Fatalf("server %v, client %v", serr, cerr)
			}
			for side, out := range map[string]string{"server": srv, "client": cli} {
				if !strings.Contains(out, " Connection type : UC\t\tUsing SRQ      : OFF\n") || !strings.HasSuffix(out, resultLine) {
					t.Errorf("%s:\n%s", side, out)
				}
			}
			if test.IsSend() && !strings.Contains(srv, " RX depth        : 1000\n") {
				t.Errorf("the server's RX depth should be the iterations, 1000:\n%s", srv)
			}
			if len(f.qpTypes) != 2 || f.qpTypes[0] != rdma.QPTypeUC || f.qpTypes[1] != rdma.QPTypeUC {
				t.Errorf("endpoints made with QP types %v, want UC twice", f.qpTypes)
			}
			for _, a := range f.rtrs {
				if a.MaxDestRdAtomic != 0 || a.MinRNRTimer != 0 || a.DestQPN == 0 || a.GRH == nil {
					t.Errorf("UC RTR %+v: path only", a)
				}
			}
			for _, a := range f.rtss {
				if a != (rdma.RTSAttr{SQPSN: a.SQPSN}) {
					t.Errorf("UC RTS %+v: the send PSN only", a)
				}
			}
		})
	}
}

// TestResolveUC: perftest's rules of -c UC.
func TestResolveUC(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: ReadBW}, "-c UC: UC connection not possible in READ/ATOMIC verbs"},
		{Options{Test: ReadLat}, "-c UC: UC connection not possible in READ/ATOMIC verbs"},
		{Options{Test: AtomicBW}, "-c UC: UC connection not possible in READ/ATOMIC verbs"},
		{Options{Test: WriteBW, RDMACM: true}, "UC is not supported in librdmacm"},
	} {
		c.o.Conn = rdma.QPTypeUC
		_, err := c.o.Resolve()
		var r *Refusal
		if !errors.As(err, &r) || err.Error() != c.want {
			t.Errorf("%s -c UC (-R %v): %v, want the refusal %q", c.o.Test, c.o.RDMACM, err, c.want)
		}
	}
	for _, c := range []struct {
		o    Options
		want int
	}{
		{Options{Test: SendBW}, 1000},                          // a receive per message
		{Options{Test: SendBW, Iters: 20000}, ucMaxRx},         // up to perftest's UC_MAX_RX
		{Options{Test: SendBW, Iters: 301}, 302},               // the odd-depth work-around follows
		{Options{Test: SendLat, RxDepth: 16}, 16},              // a depth given stays
		{Options{Test: SendBW, RxDepth: 512, Iters: 900}, 900}, // -r 512 is perftest's default
		{Options{Test: SendBW, Duration: 4 * time.Second}, 512},
		{Options{Test: WriteBW}, 1},
	} {
		c.o.Conn = rdma.QPTypeUC
		r, err := c.o.Resolve()
		if err != nil || r.RxDepth != c.want {
			t.Errorf("%s -c UC -n %d -r %d: RX depth %d, %v; want %d", c.o.Test, c.o.Iters, c.o.RxDepth, r.RxDepth, err, c.want)
		}
	}
	if r, err := (Options{Test: SendBW}).Resolve(); err != nil || r.Conn != rdma.QPTypeRC || r.RxDepth != 512 {
		t.Errorf("send_bw: %v, %v, RX depth %d; want RC and 512", err, r.Conn, r.RxDepth)
	}
}
