package perf

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/host"
)

// risingCounters is rxe0 port 1 whose sent_pkts rises by 100 at every
// read and whose port_xmit_data stays put, with another port beside it.
type risingCounters struct {
	mu    sync.Mutex
	reads uint64
}

func (c *risingCounters) PortCounters() ([]host.PortCounters, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return []host.PortCounters{
		{Device: "rxe1", Port: 1, HW: []host.Counter{{Name: "sent_pkts", Value: 7}}},
		{Device: "rxe0", Port: 1, HW: []host.Counter{{Name: "rcvd_pkts", Value: 1}, {Name: "sent_pkts", Value: 100 * c.reads}},
			PMA: []host.Counter{{Name: "port_xmit_data", Value: 5}}},
	}, nil
}

var counterLines = regexp.MustCompile("\n\thw_counters/sent_pkts=([1-9][0-9]*00)\n\tcounters/port_xmit_data=0\n\n")

// TestReportCountersAsPerftest: -W prints each counter's change after
// every result row, a tab before each and a blank line after, as
// perftest's; --json carries them per row.
func TestReportCountersAsPerftest(t *testing.T) {
	for _, test := range []Test{WriteBW, SendBW, SendLat, WriteLat} {
		o := Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 50, Counters: &risingCounters{},
			ReportCounters: "hw_counters/sent_pkts,counters/port_xmit_data"}
		srv, cli := runBoth(t, o)
		for side, out := range map[string]string{"server": srv, "client": cli} {
			if n := len(counterLines.FindAllString(out, -1)); n != 1 {
				t.Errorf("%s %s: %d counter blocks, want 1 after the row:\n%s", test, side, n, out)
			}
			if i, j := strings.Index(out, "\thw_counters"), strings.LastIndex(out, resultLine); i < 0 || j < i {
				t.Errorf("%s %s: counters not between the row and the last result line:\n%s", test, side, out)
			}
		}
	}
	o := Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, Counters: &risingCounters{}, JSON: true,
		ReportCounters: "hw_counters/sent_pkts"}
	_, cli := runBoth(t, o)
	var doc struct {
		ReportCounters []CounterChange `json:"report_counters"`
	}
	if err := json.Unmarshal([]byte(cli), &doc); err != nil || len(doc.ReportCounters) != 1 ||
		doc.ReportCounters[0].Counter != "hw_counters/sent_pkts" || doc.ReportCounters[0].Bytes != 65536 || doc.ReportCounters[0].Delta == 0 {
		t.Errorf("--json report_counters: %+v (%v)\n%s", doc.ReportCounters, err, cli)
	}
	if err := schema.Validate("perf", []byte(cli)); err != nil {
		t.Errorf("-W --json against its schema: %v", err)
	}
}

// TestReportCountersRefusals: a name that is no counter of the port, no
// counter source, and names outside the port's counter directories.
func TestReportCountersRefusals(t *testing.T) {
	_, _, serr, cerr := runPair(t, newFabric(), Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, Counters: &risingCounters{},
		ReportCounters: "hw_counters/no_such"})
	for _, err := range []error{serr, cerr} {
		if err != nil && !strings.Contains(err.Error(), "-W hw_counters/no_such: Unable to access performance counters (rxe0 port 1 has none of that name)") {
			t.Errorf("unknown counter: %v", err)
		}
	}
	if cerr == nil {
		t.Error("the client ran with an unknown counter")
	}
	_, _, _, cerr = runPair(t, newFabric(), Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 50, ReportCounters: "hw_counters/sent_pkts"})
	if cerr == nil || !strings.Contains(cerr.Error(), "Unable to access performance counters") {
		t.Errorf("no counter source: %v", cerr)
	}
	for _, bad := range []string{"", "sent_pkts", "hw_counters/", "hw_counters/../../../../etc/passwd", "counters/..", "state", "hw_counters/a,,counters/b"} {
		if _, err := ParseReportCounters(bad); err == nil {
			t.Errorf("-W %q was taken", bad)
		}
	}
	if names, err := ParseReportCounters("hw_counters/sent_pkts,counters/port_xmit_data"); err != nil || len(names) != 2 {
		t.Errorf("two counters: %v %v", names, err)
	}
	var b bytes.Buffer
	c := &reportCounters{src: &risingCounters{}, dev: "rxe0", port: 1, names: []string{"hw_counters/sent_pkts"}, last: []uint64{1 << 40}}
	if ch, err := c.print(&b, 2); err != nil || ch[0].Delta != 100 || b.String() != "\thw_counters/sent_pkts=100\n\n" {
		t.Errorf("a counter that went down (reset): %+v %v %q", ch, err, b.String())
	}
}
