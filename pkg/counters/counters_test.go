package counters

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/counters/counterstest"
	"github.com/rdmactl/rdmactl/pkg/host"
)

func rxe(dev string, sent, dup, retry uint64) host.PortCounters {
	return host.PortCounters{Device: dev, Port: 1, HW: []host.Counter{
		{Name: "sent_pkts", Value: sent},
		{Name: "duplicate_request", Value: dup},
		{Name: "completer_retry_err", Value: retry},
		{Name: "link_downed", Value: 0},
	}}
}

func TestDiffInOrderWithResetsAndNewPorts(t *testing.T) {
	before := Snapshot{Ports: []host.PortCounters{rxe("rxe0", 100, 5, 0)}}
	after := Snapshot{Ports: []host.PortCounters{rxe("rxe0", 150, 2, 3), rxe("rxe1", 7, 0, 0)}}
	got := Diff(before, after)
	want := []Change{
		{"rxe0", 1, "sent_pkts", 150, 50},
		{"rxe0", 1, "duplicate_request", 2, 2}, // went down: reset, counted from zero
		{"rxe0", 1, "completer_retry_err", 3, 3},
		{"rxe0", 1, "link_downed", 0, 0},
		{"rxe1", 1, "sent_pkts", 7, 7},
		{"rxe1", 1, "duplicate_request", 0, 0},
		{"rxe1", 1, "completer_retry_err", 0, 0},
		{"rxe1", 1, "link_downed", 0, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Diff\n got %+v\nwant %+v", got, want)
	}
	if m := Moved(got); len(m) != 4 || m[3].Device != "rxe1" {
		t.Errorf("Moved %+v", m)
	}
}

func TestWatchReportsRetriesOfAPassingRun(t *testing.T) {
	src := &counterstest.Replay{Reads: [][]host.PortCounters{
		{rxe("rxe0", 100, 0, 0)},
		{rxe("rxe0", 1300, 41, 28)},
	}}
	w := Begin(src)
	rs := w.End()
	want := []Rise{
		{Device: "rxe0", Port: 1, Counter: "duplicate_request", Delta: 41, Kind: "retry", Meaning: catalog["duplicate_request"].Meaning},
		{Device: "rxe0", Port: 1, Counter: "completer_retry_err", Delta: 28, Kind: "retry", Meaning: catalog["completer_retry_err"].Meaning},
	}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("rises %+v, want %+v (sent_pkts is traffic, not an error)", rs, want)
	}
	s := Line(rs, true)
	if !strings.HasPrefix(s, "passed with retries: rxe0/1 duplicate_request +41 (") || !strings.Contains(s, "; rxe0/1 completer_retry_err +28 (no ACK came in time") {
		t.Errorf("line %q", s)
	}
	if s := Line(rs, false); !strings.HasPrefix(s, "error counters rose during the run: rxe0/1 duplicate_request +41") {
		t.Errorf("failed run's line %q", s)
	}
	if sum := Summarize(rs); !sum.Retries || sum.Errors || len(sum.Rose) != 2 {
		t.Errorf("summary %+v", sum)
	}
}

func TestWatchSaysNothingRoseAndCannotRead(t *testing.T) {
	quiet := &counterstest.Replay{Reads: [][]host.PortCounters{{rxe("rxe0", 100, 0, 0)}, {rxe("rxe0", 900, 0, 0)}}}
	rs := Begin(quiet).End()
	if rs == nil || len(rs) != 0 || Line(rs, true) != "" {
		t.Errorf("quiet run: %#v %q, want an empty non-nil list and no words", rs, Line(rs, true))
	}
	if sum := Summarize(rs); sum == nil || sum.Retries || sum.Errors || sum.Rose == nil {
		t.Errorf("quiet run's summary %+v", sum)
	}
	if Summarize(nil) != nil {
		t.Error("unread counters summarized")
	}
	if rs := Begin(&counterstest.Replay{Err: errors.New("no netlink")}).End(); rs != nil {
		t.Errorf("unreadable counters: %#v, want nil", rs)
	}
	if rs := Begin(nil).End(); rs != nil {
		t.Errorf("no source: %#v, want nil", rs)
	}
}

func TestLineNamesErrorsOverRetries(t *testing.T) {
	rs := Rises([]Change{{Device: "rxe0", Port: 1, Counter: "retry_exceeded_err", Delta: 1}, {Device: "rxe0", Port: 1, Counter: "rcvd_seq_err", Delta: 2}})
	if s := Line(rs, true); !strings.HasPrefix(s, "passed, but error counters rose: rxe0/1 retry_exceeded_err +1 (a QP gave up") {
		t.Errorf("line %q", s)
	}
	if sum := Summarize(rs); !sum.Retries || !sum.Errors {
		t.Errorf("summary %+v", sum)
	}
}

func TestRisingNow(t *testing.T) {
	src := &counterstest.Replay{Reads: [][]host.PortCounters{{rxe("rxe0", 1, 0, 0)}, {rxe("rxe0", 2, 0, 5)}}}
	rs := RisingNow(src, time.Millisecond)
	if len(rs) != 1 || rs[0].Counter != "completer_retry_err" || rs[0].Delta != 5 {
		t.Errorf("rising %+v", rs)
	}
}

func TestLookup(t *testing.T) {
	for name, kind := range map[string]Kind{
		"sent_pkts": Traffic, "duplicate_request": Retry, "link_downed": Error,
		"port_xmit_data": Traffic, "symbol_error": Error,
		"some_new_err_counter": Error, "some_new_pkts": Traffic,
	} {
		if got := Lookup(name).Kind; got != kind {
			t.Errorf("%s: kind %d, want %d", name, got, kind)
		}
	}
	for name, info := range catalog {
		if info.IsError() && info.Meaning == "" {
			t.Errorf("%s: an error counter without a meaning", name)
		}
	}
}

func TestFromHost(t *testing.T) {
	if FromHost(host.System()) == nil {
		t.Error("the system host reads no counters")
	}
}
