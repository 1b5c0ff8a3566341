package perf

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestResolveRDMACM(t *testing.T) {
	for _, tst := range []Test{SendBW, WriteBW, ReadBW, SendLat, WriteLat, ReadLat} {
		if _, err := (Options{Test: tst, RDMACM: true}).Resolve(); err != nil {
			t.Errorf("%s -R: %v", tst, err)
		}
	}
}

// Every test runs over rdma_cm: both sides print their tables, and the
// data connections of a READ test ask for the device's outstanding reads
// both ways (the control connection, a SEND exchange, never does).
func TestFlowsPairUpRDMACM(t *testing.T) {
	for _, c := range []struct {
		test Test
		qps  int
	}{{SendBW, 1}, {SendBW, 2}, {WriteBW, 2}, {ReadBW, 1}, {ReadBW, 2}, {SendLat, 1}, {WriteLat, 1}, {ReadLat, 1}} {
		t.Run(fmt.Sprintf("%s/q%d", c.test, c.qps), func(t *testing.T) {
			v := newFabric()
			srv, cli, serr, cerr := runPair(t, v, Options{Test: c.test, GIDIndex: 1, IBPort: 1, Iters: 50, QPs: c.qps, RDMACM: true})
			if cerr != nil || serr != nil {
				t.Fatalf("client: %v\nserver: %v", cerr, serr)
			}
			if !strings.Contains(srv, "Waiting for client rdma_cm QP to connect") {
				t.Errorf("server header lacks the rdma_cm lines:\n%s", srv)
			}
			for side, out := range map[string]string{"server": srv, "client": cli} {
				if strings.Count(out, " remote address: LID 0000 QPN 0x") != c.qps || strings.Contains(out, "RKey") {
					t.Errorf("%s: want %d remote addresses in the SEND form:\n%s", side, c.qps, out)
				}
				if !strings.HasSuffix(out, resultLine) {
					t.Errorf("%s does not end with the result line:\n%s", side, out)
				}
				// A bandwidth row counts the iterations of all QPs.
				if iters := 50 * c.qps; (c.test != ReadLat || side == "client") && !strings.Contains(out, fmt.Sprintf(" %d ", iters)) {
					t.Errorf("%s printed no row of %d iterations:\n%s", side, iters, out)
				}
			}
			var reads uint8
			if c.test.IsRead() {
				reads = 128 // rdmatest's max_qp_rd_atom
			}
			params := v.ConnParams()
			if len(params) != 2+2*c.qps {
				t.Fatalf("%d connect and accept calls, want %d: %+v", len(params), 2+2*c.qps, params)
			}
			for i, p := range params {
				want := rdma.ConnParam{RetryCount: 7, RNRRetryCount: 7}
				if i >= 2 {
					want.ResponderResources, want.InitiatorDepth, want.QPNum = reads, reads, p.QPNum
				}
				if p != want {
					t.Errorf("connection parameters %d: %+v, want %+v", i, p, want)
				}
			}
			// Every data QP, on both sides, tells a sender without a
			// posted receive to retry after 0.64 ms, not rdma_cm's 655.
			var timers []uint8
			for _, r := range perfQPs(v) {
				timers = append(timers, r.RTR.MinRNRTimer)
			}
			if len(timers) != 2*c.qps || slices.ContainsFunc(timers, func(t uint8) bool { return t != minRNRTimer }) {
				t.Errorf("RNR timers of the data QPs %v, want %d × %d", timers, 2*c.qps, minRNRTimer)
			}
		})
	}
}

// perftest's server prints where the client must connect after the
// header's last field (ctx_print_test_info with rdma_cm).
func TestHeaderRDMACMServer(t *testing.T) {
	var b strings.Builder
	WriteHeader(&b, HeaderInfo{Test: WriteBW, Device: "rxe0", QPs: 1, MTUBytes: 1024, Ethernet: true, GIDIndex: -1, RDMACM: true})
	want := " rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n" + resultLine +
		" Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP\n" + resultLine
	if !strings.HasSuffix(b.String(), want) {
		t.Fatalf("header ends\n%q\nwant\n%q", b.String(), want)
	}
}

// chanMessenger is one end of an in-memory message pair.
type chanMessenger struct {
	in, out chan []byte
	sent    [][]byte
}

func (m *chanMessenger) exchange(mine []byte, client bool) ([]byte, error) {
	m.sent = append(m.sent, mine)
	if client {
		m.out <- mine
		return (<-m.in)[:len(mine)], nil
	}
	theirs := <-m.in
	m.out <- mine
	return theirs[:len(mine)], nil
}

// Over rdma_cm the handshake carries binary records and the close is the
// handshake alone (no "done").
func TestOOBOverMessenger(t *testing.T) {
	a2b, b2a := make(chan []byte, 1), make(chan []byte, 1)
	cm := &chanMessenger{in: b2a, out: a2b}
	sm := &chanMessenger{in: a2b, out: b2a}
	client := &OOB{client: true, msg: cm, gidIndex: 1}
	server := &OOB{msg: sm, gidIndex: 1}
	cd, sd := Dest{QPN: 0x11, PSN: 7, RKey: 9, VAddr: 1 << 33}, Dest{QPN: 0x12, PSN: 8}
	got := make(chan Dest, 1)
	go func() {
		d, err := server.Handshake(sd)
		if err != nil {
			t.Error(err)
		}
		server.Close(sd)
		got <- d
	}()
	d, err := client.Handshake(cd)
	if err != nil || d != sd {
		t.Fatalf("client got %+v, %v; want %+v", d, err, sd)
	}
	if err := client.Close(cd); err != nil {
		t.Fatal(err)
	}
	if d := <-got; d != cd {
		t.Fatalf("server got %+v, want %+v", d, cd)
	}
	if len(cm.sent) != 2 || len(cm.sent[0]) != destBinLen || len(cm.sent[1]) != destBinLen {
		t.Fatalf("client sent %d messages: %q", len(cm.sent), cm.sent)
	}
}
