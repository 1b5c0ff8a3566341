package perf

import (
	"slices"
	"strings"
	"testing"
)

// TestTOSWithRDMACM: -T sets the type of service on the client's data
// QPs' ids once their address is resolved, not on the control connection's
// (perftest's exchange leaves with TOS 0), and both headers name it after
// the exchange method, as perftest's.
func TestTOSWithRDMACM(t *testing.T) {
	v := newFabric()
	tos := 96
	srv, cli, serr, cerr := runPair(t, v, Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, QPs: 2, RDMACM: true, TOS: &tos})
	if serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v", serr, cerr)
	}
	// The control connection connects first; a connect the server
	// rejects (not listening yet) is tried again, so count from the end.
	if tos := v.ConnectTypesOfService(); len(tos) < 3 || tos[0] != 0 || !slices.Equal(tos[len(tos)-2:], []uint8{96, 96}) {
		t.Errorf("TOS of the ids at rdma_connect: %v, want 0 for the control connection, then 96 for the two QPs", tos)
	}
	for side, out := range map[string]string{"server": srv, "client": cli} {
		if !strings.Contains(out, " Data ex. method : rdma_cm \tTOS    : 96\n") {
			t.Errorf("%s header lacks the TOS:\n%s", side, out)
		}
	}
	v = newFabric()
	if _, _, serr, cerr := runPair(t, v, Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, RDMACM: true}); serr != nil || cerr != nil || len(v.TypesOfService()) != 0 {
		t.Errorf("without -T: TOS set %v (server %v, client %v)", v.TypesOfService(), serr, cerr)
	}
}

// TestTrafficClass: --tclass goes into the GRH of both sides' RTR.
func TestTrafficClass(t *testing.T) {
	v := newFabric()
	if _, _, serr, cerr := runPair(t, v, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, TrafficClass: 106}); serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v", serr, cerr)
	}
	var tclasses []uint8
	for _, r := range perfQPs(v) {
		if r.RTR.GRH != nil {
			tclasses = append(tclasses, r.RTR.GRH.TrafficClass)
		}
	}
	if want := []uint8{106, 106}; !slices.Equal(tclasses, want) {
		t.Errorf("RTR traffic classes %v, want %v", tclasses, want)
	}
}

// TestTOSAndTClassRefusals: perftest's bounds and its -R rule for -T;
// rdmactl's own for --tclass.
func TestTOSAndTClassRefusals(t *testing.T) {
	tos, big := 5, 256
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: WriteBW, TOS: &tos}, "-T 5: TOS only valid for rdma_cm based QP and RawEth QP"},
		{Options{Test: WriteBW, TOS: &big, RDMACM: true}, "-T 256: TOS should be between 0 and 255"},
		{Options{Test: WriteBW, TrafficClass: 256}, "--tclass 256: the traffic class is 0 to 255"},
		{Options{Test: WriteBW, TrafficClass: 8, RDMACM: true}, "--tclass with -R: rdma_cm sets the QPs' traffic class; give -T for it"},
	} {
		if _, err := c.o.Resolve(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
