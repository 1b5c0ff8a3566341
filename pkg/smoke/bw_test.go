package smoke

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// bwReport is sampleReport with the write_bw check of smoke --bw.
func bwReport() Report {
	r := sampleReport()
	r.Peers[0].Checks = append(r.Peers[0].Checks, Result{Check: "write_bw", OK: true, Seconds: 1.2,
		Message: "1000 x 65536 bytes", BW: &BW{Bytes: 65536, Iterations: 1000, AvgMBps: 171.5, BytesPerSecond: 171.5 * (1 << 20)}})
	r.Peers[1].Checks = append(r.Peers[1].Checks, Result{Check: "write_bw", Skipped: true, Message: "skipped: route failed"})
	return r
}

func TestWriteTableWithBW(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, bwReport()); err != nil {
		t.Fatal(err)
	}
	want := `PEER       CHECKS                                      RTT p50   RTT p99   BW           VERDICT
(local)    doctor:ok                                   -         -         -            ok
10.9.0.1   route:ok ping:ok write_bw:ok                0.500 ms  1.200 ms  171.50 MB/s  ok
10.9.0.77  route:ok ping:FAIL demo:skip write_bw:skip  -         -         -            FAILED
`
	if !strings.HasPrefix(b.String(), want) {
		t.Fatalf("table:\n%s\nwant it to start with:\n%s", b.String(), want)
	}
}

func TestWritePrometheusBW(t *testing.T) {
	var b bytes.Buffer
	if err := WritePrometheus(&b, bwReport()); err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("textfile does not parse: %v\n%s", err, b.String())
	}
	bw := fams["rdmactl_smoke_write_bw_bytes_per_second"]
	if bw == nil || len(bw.Metric) != 1 || bw.Metric[0].GetLabel()[0].GetValue() != "10.9.0.1" || bw.Metric[0].GetGauge().GetValue() != 171.5*(1<<20) {
		t.Fatalf("rdmactl_smoke_write_bw_bytes_per_second = %v\n%s", bw, b.String())
	}
	var without bytes.Buffer
	WritePrometheus(&without, sampleReport())
	if strings.Contains(without.String(), "write_bw") {
		t.Errorf("without a write_bw check the textfile names it:\n%s", without.String())
	}
}

func TestReportJSONSchemaBW(t *testing.T) {
	var b bytes.Buffer
	if err := cli.WriteJSON(&b, bwReport()); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("smoke", b.Bytes()); err != nil {
		t.Errorf("%s: against its schema: %v", b.String(), err)
	}
	if !strings.Contains(b.String(), `"bw_average_mb_per_sec":171.5`) {
		t.Errorf("no bandwidth member:\n%s", b.String())
	}
}
