package perf

import (
	"strings"
	"testing"
)

func TestResolveRDMACM(t *testing.T) {
	for _, tst := range []Test{WriteBW, SendLat} {
		if _, err := (Options{Test: tst, RDMACM: true}).Resolve(); err != nil {
			t.Errorf("%s -R: %v", tst, err)
		}
	}
	for _, tst := range []Test{ReadBW, SendBW, WriteLat, ReadLat} {
		_, err := (Options{Test: tst, RDMACM: true}).Resolve()
		if err == nil || !strings.Contains(err.Error(), "-R") {
			t.Errorf("%s -R: %v, want an error naming -R", tst, err)
		}
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
