package stat

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/host"
)

// rxeNames is rdma_rxe's counter order, as the kernel sends it.
var rxeNames = []string{"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
	"send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err", "retry_rnr_exceeded_err",
	"completer_retry_err", "send_err", "link_downed", "rdma_sends", "rdma_recvs"}

func rxePort(dev string, values map[string]uint64) host.PortCounters {
	p := host.PortCounters{Device: dev, Port: 1}
	for _, n := range rxeNames {
		p.HW = append(p.HW, host.Counter{Name: n, Value: values[n]})
	}
	return p
}

// seqSource answers its reads in turn, then repeats the last.
type seqSource struct {
	reads [][]host.PortCounters
	n     int
	err   error
}

func (s *seqSource) PortCounters() ([]host.PortCounters, error) {
	if s.err != nil {
		return nil, s.err
	}
	r := s.reads[min(s.n, len(s.reads)-1)]
	s.n++
	return r, nil
}

func twoDevices(sent uint64) []host.PortCounters {
	return []host.PortCounters{
		rxePort("rxe0", map[string]uint64{"sent_pkts": sent, "rcvd_pkts": sent}),
		rxePort("rxe1", nil),
	}
}

func run(t *testing.T, opts Options) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	opts.IO = cli.Test(nil, &out, &errOut)
	err := Run(context.Background(), &opts)
	return out.String(), errOut.String(), err
}

// The line iproute2 6.1 printed for rxe0 in the lab (rdma statistic show).
const labLine = "link rxe0/1 sent_pkts 0 rcvd_pkts 0 duplicate_request 0 out_of_seq_request 0 rcvd_rnr_err 0 send_rnr_err 0 rcvd_seq_err 0 ack_deferred 0 retry_exceeded_err 0 retry_rnr_exceeded_err 0 completer_retry_err 0 send_err 0 link_downed 0 rdma_sends 0 rdma_recvs 0 \n"

func TestShowAsRdmaStatistic(t *testing.T) {
	src := &seqSource{reads: [][]host.PortCounters{twoDevices(0)}}
	out, _, err := run(t, Options{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if want := labLine + strings.Replace(labLine, "rxe0", "rxe1", 1); out != want {
		t.Errorf("stat:\n%q\nwant\n%q", out, want)
	}
	out, _, err = run(t, Options{Source: src, Device: "rxe0", Port: "1"})
	if err != nil || out != labLine {
		t.Errorf("stat -d rxe0 -i 1: %q, %v", out, err)
	}
	out, _, err = run(t, Options{Source: src, Port: "1"})
	if err != nil || strings.Count(out, "\n") != 2 {
		t.Errorf("stat -i 1: %q, %v", out, err)
	}
}

func TestShowWrongDeviceAsRdma(t *testing.T) {
	src := &seqSource{reads: [][]host.PortCounters{twoDevices(0)}}
	for _, o := range []Options{{Device: "mlx5_0"}, {Device: "rxe0", Port: "2"}, {Port: "3"}} {
		o.Source = src
		out, errOut, err := run(t, o)
		if out != "" || errOut != "Wrong device name\n" || cli.ExitCode(err) != 1 || !cli.IsSilent(err) {
			t.Errorf("%+v: out %q err %q %v (want iproute2's words, exit 1)", o, out, errOut, err)
		}
		o.JSON = true
		_, _, err = run(t, o)
		if cli.ExitCode(err) != 1 || cli.IsSilent(err) || !strings.Contains(err.Error(), "no ") {
			t.Errorf("%+v --json: %v, want a failure for the error document", o, err)
		}
	}
	if _, _, err := run(t, Options{Source: src, Port: "x"}); cli.ExitCode(err) != 2 {
		t.Errorf("-i x: %v, want a usage error", err)
	}
	_, _, err := run(t, Options{Source: &seqSource{err: &os.PathError{Op: "open", Path: "/sys/class/infiniband", Err: os.ErrNotExist}}})
	if cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "no RDMA core") {
		t.Errorf("no RDMA core: %v", err)
	}
}

func TestShowJSONKeepsKernelOrder(t *testing.T) {
	ports := twoDevices(7)
	ports[0].PMA = []host.Counter{{Name: "port_xmit_data", Value: 10}}
	out, _, err := run(t, Options{Source: &seqSource{reads: [][]host.PortCounters{ports}}, JSON: true, Device: "rxe0"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, `{"schema_version":2,"ports":[{"device":"rxe0","port":1,"hw_counters":{"sent_pkts":7,"rcvd_pkts":7,"duplicate_request":0,`) ||
		!strings.HasSuffix(out, `"rdma_recvs":0},"counters":{"port_xmit_data":10}}]}`+"\n") {
		t.Errorf("json %s", out)
	}
	if err := schema.Validate("stat", []byte(out)); err != nil {
		t.Errorf("against its schema: %v", err)
	}
}

func at(sec float64, ports []host.PortCounters) counters.Snapshot {
	return counters.Snapshot{Time: time.Date(2026, 11, 25, 21, 30, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second))), Ports: ports}
}

func retrying(sent, dup, retry uint64) []host.PortCounters {
	return []host.PortCounters{rxePort("rxe0", map[string]uint64{"sent_pkts": sent, "duplicate_request": dup, "completer_retry_err": retry}), rxePort("rxe1", nil)}
}

func TestSampleLineAndTable(t *testing.T) {
	first, prev, cur := at(0, retrying(100, 0, 0)), at(1, retrying(1100, 0, 0)), at(2, retrying(3100, 41, 28))
	s := sampleOf(first, prev, cur)
	want := "21:30:02 rxe0/1 sent_pkts 2000/s +3000, duplicate_request[retry] 41/s +41, completer_retry_err[retry] 28/s +28\n"
	if got := line(s); got != want {
		t.Errorf("line\n got %q\nwant %q", got, want)
	}
	if got := line(sampleOf(first, first, at(1, retrying(100, 0, 0)))); got != "21:30:01 no counter moved\n" {
		t.Errorf("quiet line %q", got)
	}
	var b strings.Builder
	writeTable(&b, s, time.Second, cli.Test(nil, io.Discard, io.Discard).Palette())
	table := b.String()
	for _, w := range []string{
		"rdmactl stat: every 1s, 2s since start (Ctrl-C ends)\n",
		"LINK    COUNTER              RATE/s  SINCE START  VALUE\n",
		"rxe0/1  sent_pkts              2000        +3000   3100\n",
		"rxe0/1  completer_retry_err      28          +28     28\n",
	} {
		if !strings.Contains(table, w) {
			t.Errorf("table lacks %q:\n%s", w, table)
		}
	}
	doc := watchDocumentOf(s)
	if len(doc.Counters) != 3 || doc.Counters[0] != (counterJSON{"rxe0", 1, "sent_pkts", "traffic", 3100, 2000, 2000, 3000}) ||
		doc.Counters[2].Kind != "retry" || doc.ElapsedSeconds != 2 || doc.IntervalSeconds != 1 {
		t.Errorf("document %+v", doc)
	}
}

func TestWatchJSONLinesEndsAfterCount(t *testing.T) {
	src := &seqSource{reads: [][]host.PortCounters{retrying(0, 0, 0), retrying(10, 0, 0), retrying(30, 2, 1), retrying(60, 2, 1)}}
	dir := t.TempDir()
	prom, plot := filepath.Join(dir, "rdma.prom"), filepath.Join(dir, "rates.svg")
	out, _, err := run(t, Options{Source: src, Watch: true, Interval: time.Millisecond, Count: 3, JSON: true, PromFile: prom, PlotFile: plot})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if err := schema.Validate("stat-line", []byte(l)); err != nil {
			t.Errorf("against its schema: %v\n%s", err, l)
		}
	}
	var last watchDocument
	if err := json.Unmarshal([]byte(lines[2]), &last); err != nil {
		t.Fatal(err)
	}
	if len(last.Counters) != 3 || last.Counters[0].Counter != "sent_pkts" || last.Counters[0].SinceStart != 60 || last.Counters[0].Delta != 30 {
		t.Errorf("last document %+v", last)
	}
	checkProm(t, prom)
	checkSVG(t, plot)
}

func TestWatchEndsCleanlyOnCancel(t *testing.T) {
	src := &seqSource{reads: [][]host.PortCounters{retrying(0, 0, 0)}}
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error)
	go func() {
		done <- Run(ctx, &Options{IO: cli.Test(nil, &out, io.Discard), Source: src, Watch: true, Interval: 5 * time.Millisecond})
	}()
	time.Sleep(30 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("cancelled watch: %v, want a clean end", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not end on cancel")
	}
	if !strings.Contains(out.String(), "no counter moved\n") {
		t.Errorf("output %q", out.String())
	}
}

func checkProm(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("prom file does not parse: %v\n%s", err, b)
	}
	sent := fams["node_infiniband_port_packets_transmitted_total"]
	if sent == nil || sent.GetHelp() == "" || sent.GetType().String() != "COUNTER" || len(sent.Metric) != 2 {
		t.Fatalf("sent_pkts family %v", sent)
	}
	m := sent.Metric[0]
	if m.GetCounter().GetValue() != 60 || m.Label[0].GetName() != "device" || m.Label[0].GetValue() != "rxe0" || m.Label[1].GetName() != "port" || m.Label[1].GetValue() != "1" {
		t.Errorf("sent_pkts sample %v", m)
	}
	for _, name := range []string{"node_infiniband_duplicate_requests_packets_total", "node_infiniband_local_ack_timeout_errors_total", "node_infiniband_link_downed_total", "node_infiniband_send_rnr_err_total"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	lines := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != 3 || !strings.Contains(string(b), "retries and errors") || !strings.Contains(string(b), "rxe0/1 completer_retry_err") {
		t.Errorf("SVG with %d lines:\n%s", lines, b)
	}
}

func TestPromWordsToBytesAndIBWins(t *testing.T) {
	ports := []host.PortCounters{{Device: "mlx5_0", Port: 1,
		HW:  []host.Counter{{Name: "out_of_buffer", Value: 3}},
		PMA: []host.Counter{{Name: "port_xmit_data", Value: 10}, {Name: "port_xmit_packets", Value: 5}, {Name: "VL15_dropped", Value: 1}}},
		{Device: "rxe0", Port: 1, HW: []host.Counter{{Name: "sent_pkts", Value: 9}}},
	}
	ports[0].HW = append(ports[0].HW, host.Counter{Name: "sent_pkts", Value: 99})
	var b bytes.Buffer
	if err := WriteProm(&b, ports); err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatal(err)
	}
	if v := fams["node_infiniband_port_data_transmitted_bytes_total"].Metric[0].GetCounter().GetValue(); v != 40 {
		t.Errorf("port_xmit_data 10 words exported as %v bytes, want 40", v)
	}
	sent := fams["node_infiniband_port_packets_transmitted_total"].Metric
	if len(sent) != 2 || sent[0].GetCounter().GetValue() != 5 || sent[1].GetCounter().GetValue() != 9 {
		t.Errorf("packets transmitted %v (mlx5_0's counters/ wins over its sent_pkts)", sent)
	}
	if fams["node_infiniband_vl15_dropped_total"] == nil || fams["node_infiniband_out_of_buffer_drops_total"] == nil {
		t.Errorf("families %v", fams)
	}
}
