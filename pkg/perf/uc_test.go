package perf

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
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
			f := newFabric()
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
			qps := perfQPs(f)
			if len(qps) != 2 || qps[0].Type != rdma.QPTypeUC || qps[1].Type != rdma.QPTypeUC {
				t.Errorf("QPs readied %+v, want UC twice", qps)
			}
			for _, r := range qps {
				if a := r.RTR; a.MaxDestRdAtomic != 0 || a.MinRNRTimer != 0 || a.DestQPN == 0 || a.GRH == nil {
					t.Errorf("UC RTR %+v: path only", a)
				}
				if a := r.RTS; a != (rdma.RTSAttr{SQPSN: a.SQPSN}) {
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

// TestUDFlows: -c UD runs send_bw and send_lat on UD QPs (RTS with the
// send PSN alone), messages bounded by the path MTU (rdmatest's 1024
// bytes: send_bw's default 65536 runs 1024), each received with room for
// the 40-byte GRH before it (rdmatest fails a receive without).
func TestUDFlows(t *testing.T) {
	for _, o := range []Options{{Test: SendBW}, {Test: SendLat}, {Test: SendLat, BusyPoll: true}, {Test: SendBW, QPs: 2, Size: 1024}} {
		t.Run(o.Test.String(), func(t *testing.T) {
			f := newFabric()
			o.GIDIndex, o.IBPort, o.Iters, o.Conn, o.Timeout = 1, 1, 1000, rdma.QPTypeUD, 5*time.Second
			srv, cli, serr, cerr := runPair(t, f, o)
			if serr != nil || cerr != nil {
				t.Fatalf("server %v, client %v", serr, cerr)
			}
			for side, out := range map[string]string{"server": srv, "client": cli} {
				if !strings.Contains(out, " Connection type : UD\t\tUsing SRQ      : OFF\n") || !strings.HasSuffix(out, resultLine) {
					t.Errorf("%s:\n%s", side, out)
				}
			}
			for side, out := range map[string]string{"server": srv, "client": cli} {
				if o.Test == SendBW && !strings.Contains(out, "\n 1024       ") {
					t.Errorf("send_bw -c UD %s should report 1024 bytes, the MTU:\n%s", side, out)
				}
			}
			qps := perfQPs(f)
			if len(qps) != 2*max(o.QPs, 1) {
				t.Errorf("%d QPs readied, want %d", len(qps), 2*max(o.QPs, 1))
			}
			for _, r := range qps {
				if r.Type != rdma.QPTypeUD {
					t.Errorf("QP %#x readied as %v, want UD", r.Num, r.Type)
				}
				if a := r.RTS; a != (rdma.RTSAttr{SQPSN: a.SQPSN}) {
					t.Errorf("UD RTS %+v: the send PSN only", a)
				}
			}
		})
	}
}

// TestResolveUD: perftest's rules of -c UD: send tests only, no
// disabling of CQ moderation for large sizes, buffers with room for the
// GRH, and sizes cut at the MTU once it is known (-a says so).
func TestResolveUD(t *testing.T) {
	for _, test := range []Test{WriteBW, ReadLat, AtomicBW} {
		_, err := Options{Test: test, Conn: rdma.QPTypeUD}.Resolve()
		var r *Refusal
		if !errors.As(err, &r) || err.Error() != "-c UD: UD connection only possible in SEND verb" {
			t.Errorf("%s -c UD: %v", test, err)
		}
	}
	if _, err := (Options{Test: SendBW, Conn: rdma.QPTypeUD, RDMACM: true}).Resolve(); err == nil || !strings.HasPrefix(err.Error(), "-c UD with -R") {
		t.Errorf("send_bw -c UD -R: %v", err)
	}
	r, err := Options{Test: SendBW, Conn: rdma.QPTypeUD}.Resolve()
	if err != nil || r.CQMod != defCQMod || r.BufSize != 65536+udGRH || r.RxDepth != 1000 {
		t.Fatalf("send_bw -c UD: %v, cq_mod %d, buffer %d, rx depth %d", err, r.CQMod, r.BufSize, r.RxDepth)
	}
	if r, err := (Options{Test: SendLat, Conn: rdma.QPTypeUD, InlineSize: 900}).Resolve(); err != nil || r.InlineSize != maxInlineUD || !r.udInlineCut {
		t.Errorf("send_lat -c UD -I 900: %v, inline %d (cut: %v), want %d", err, r.InlineSize, r.udInlineCut, maxInlineUD)
	}
	if r, err := (Options{Test: SendLat, InlineSize: 900}).Resolve(); err != nil || r.InlineSize != 900 || r.udInlineCut {
		t.Errorf("send_lat -I 900: %v, inline %d (cut: %v)", err, r.InlineSize, r.udInlineCut)
	}
	const changing = " Max msg size in UD is MTU %d\n Changing to this MTU\n"
	var msg strings.Builder
	err = r.fitMTU(1024, &msg)
	if err != nil || r.Size != 1024 || len(r.Sizes) != 1 || r.Sizes[0] != 1024 || r.BufSize != cycleBuffer || msg.String() != fmt.Sprintf(changing, 1024) {
		t.Errorf("send_bw -c UD at MTU 1024: %v, size %d, sizes %v, buffer %d, %q", err, r.Size, r.Sizes, r.BufSize, msg.String())
	}
	msg.Reset()
	r, _ = Options{Test: SendLat, Conn: rdma.QPTypeUD, All: true}.Resolve()
	if err := r.fitMTU(4096, &msg); err != nil || len(r.Sizes) != 12 || r.Sizes[11] != 4096 || msg.String() != fmt.Sprintf(changing, 4096) {
		t.Errorf("send_lat -c UD -a at MTU 4096: %v, sizes %v, %q", err, r.Sizes, msg.String())
	}
	msg.Reset()
	r, _ = Options{Test: SendLat, Conn: rdma.QPTypeUD, Size: 8192}.Resolve()
	err = r.fitMTU(1024, &msg)
	var ref *Refusal
	if !errors.As(err, &ref) || err.Error() != "-s 8192: Max message size in UD cannot be greater than MTU" || msg.Len() != 0 {
		t.Errorf("send_lat -c UD -s 8192 at MTU 1024: %v, %q", err, msg.String())
	}
	if err := r.fitMTU(8192, &msg); err != nil || r.Sizes[0] != 8192 {
		t.Errorf("send_lat -c UD -s 8192 at MTU 8192: %v, sizes %v", err, r.Sizes)
	}
}

// TestUDInlineCutSaysSo: -c UD -I above perftest's UD bound runs with
// the bound and says so as perftest does, before anything else.
func TestUDInlineCutSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // the client finds no server, after the warning
	var out, errOut bytes.Buffer
	o := Options{Test: SendLat, Conn: rdma.QPTypeUD, InlineSize: 900, GIDIndex: 1, IBPort: 1, Server: "127.0.0.1", TCPPort: port, Timeout: time.Second}
	if err := runOn(o, newFabric(), &out, &errOut); err == nil {
		t.Fatal("a client without a server ran")
	}
	if !strings.HasPrefix(out.String(), resultLine) || !strings.HasPrefix(errOut.String(), "Setting inline size to 884 (Max inline size in UD)\n") {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}

// TestUDJSON: --json names the connection type, in the schema.
func TestUDJSON(t *testing.T) {
	_, cli := runBoth(t, Options{Test: SendBW, Conn: rdma.QPTypeUD, GIDIndex: 1, IBPort: 1, Iters: 50, JSON: true})
	if !strings.Contains(cli, `"connection":"UD"`) {
		t.Errorf("JSON lacks the connection type:\n%s", cli)
	}
	if err := schema.Validate("perf", []byte(cli)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
}
