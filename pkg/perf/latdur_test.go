package perf

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestWriteForLeavesThePeersLastWriteAcknowledged: write_lat -D against a
// peer that behaves as ib_write_lat up to perftest 4.5+0.17 (Debian 12's):
// it ends 30 ms later, answers each write 1 ms late, and waits for its own
// write's completion without looking at its clock; this side is the
// server, then the client. The peer must never post a write into a closed
// endpoint (on rxe such a write never completes and the old ib_write_lat
// spins forever; on rdmatest it fails).
func TestWriteForLeavesThePeersLastWriteAcknowledged(t *testing.T) {
	for _, client := range []bool{false, true} {
		t.Run(fmt.Sprintf("client=%v", client), func(t *testing.T) {
			ours, peer := connectedPerfPair(t)
			begin := time.Now()
			peerDone := make(chan error, 1)
			go func() {
				// The peer is the server when this side is the client.
				peerDone <- oldWriteLat(peer, ours, client, begin.Add(time.Second+30*time.Millisecond))
			}()
			g := newPinger(ours, stepClock(), false)
			p := PingPong{Test: WriteLat, Client: client, Size: 2, LocalOff: 64, RemoteAddr: peer.Addr() + 64, RKey: peer.RKey(0), Timeout: 5 * time.Second}
			if _, err := g.runFor(p, time.Second, 0); err != nil {
				t.Fatal(err)
			}
			ours.Close() // as the session does next
			if err := <-peerDone; err != nil {
				t.Error(err)
			}
		})
	}
}

// connectedPerfPair is two endpoints of 128 bytes on rdmatest, one QP
// each, connected to each other.
func connectedPerfPair(t *testing.T) (a, b rdma.PerfEndpoint) {
	t.Helper()
	dev, err := newFabric().Open("rxe0")
	if err != nil {
		t.Fatal(err)
	}
	var eps [2]rdma.PerfEndpoint
	for i := range eps {
		if eps[i], err = dev.(rdma.Perf).NewPerfEndpoint(rdma.PerfConfig{Port: 1, BufSize: 128, TxDepth: 1, Events: true}); err != nil {
			t.Fatal(err)
		}
	}
	for i, ep := range eps {
		a := rdma.RTRAttr{PathMTU: rdma.MTU1024, DestQPN: eps[1-i].QPN(0), Port: 1, GRH: &rdma.GRH{DGID: loopbackGID, SGIDIndex: 1}}
		if err := ep.ToRTR(0, a); err != nil {
			t.Fatal(err)
		}
		if err := ep.ToRTS(0, rdma.RTSAttr{}); err != nil {
			t.Fatal(err)
		}
	}
	return eps[0], eps[1]
}

// oldWriteLat is ib_write_lat's loop in perftest 4.5+0.17 with -D, until
// end: its wait for the peer's write gives up at the end, its wait for its
// own write's completion does not (here: 2 s past the end, and an error).
func oldWriteLat(ep, peer rdma.PerfEndpoint, server bool, end time.Time) error {
	wr := rdma.SendWR{Op: rdma.WRRDMAWrite, Local: sgeAt(ep, 0, 0, 2), RemoteAddr: peer.Addr() + 64, RKey: peer.RKey(0), Signaled: true}
	var wc [1]rdma.WC
	for scnt, rcnt := 0, 0; ; {
		if !(scnt < 1 && server) {
			rcnt++
			_ = ep.WaitByte(64+1, byte(rcnt), max(time.Until(end), 0), true)
		}
		time.Sleep(time.Millisecond)
		scnt++
		ep.Buffer()[1] = byte(scnt)
		if err := ep.PostSend(wr); err != nil {
			return err
		}
		if time.Now().After(end) {
			return nil
		}
		for giveUp := end.Add(2 * time.Second); ; runtime.Gosched() {
			if n, _ := ep.SendCQ().Poll(wc[:]); n == 1 {
				if wc[0].Status != rdma.WCSuccess {
					return fmt.Errorf("the peer's write %d failed (%v): it went into a closed endpoint", scnt, wc[0].Status)
				}
				break
			}
			if time.Now().After(giveUp) {
				return fmt.Errorf("the peer's write %d never completed: the old ib_write_lat spins here forever", scnt)
			}
		}
	}
}
