package perf

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOutJSONFile: --out_json writes perftest's key: value block with
// the last row's numbers, on the sides that print a row; a file that
// cannot be written is said on stderr and the run goes on, as perftest.
func TestOutJSONFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name       string
		o          Options
		srv, cli   string // the test_info lines past the common ones; "" for no file
		resultKeys string
	}{
		{"write_bw", Options{Test: WriteBW, Iters: 20},
			"CQ_Moderation: 1,\n", "TX_depth : 20,\nCQ_Moderation: 1,\n", "MsgSize: 65536,\nn_iterations: 20,\nBW_peak: N,\nBW_average: N,\nMsgRate: N,\n"},
		{"send_lat", Options{Test: SendLat, Iters: 20},
			"RX_depth: 20,\n", "TX_depth : 1,\n", "MsgSize: 2,\nn_iterations: 20,\nt_min: N,\nt_max: N,\nt_typical: N,\nt_avg: N,\nt_stdev: N,\npercentile_99: N,\npercentile_99.9: N,\n"},
		{"write_bw bandwidth", Options{Test: WriteBW, Iters: 20, Output: "bandwidth"},
			"CQ_Moderation: 1,\n", "TX_depth : 20,\nCQ_Moderation: 1,\n", "bw_avg: N,\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.GIDIndex, o.IBPort, o.OutJSON = 1, 1, true
			srvFile, cliFile := filepath.Join(dir, c.name+"-server"), filepath.Join(dir, c.name+"-client")
			so := o
			so.OutJSONFile, o.OutJSONFile = srvFile, cliFile
			var serr, cerr bytes.Buffer
			_, cliOut, se, ce := runSides(t, newFabric(), so, o, &serr, &cerr)
			if se != nil || ce != nil {
				t.Fatalf("server %v, client %v", se, ce)
			}
			numbers := regexp.MustCompile(`(?m)^(BW_peak|BW_average|MsgRate|bw_avg|t_min|t_max|t_typical|t_avg|t_stdev|percentile_99|percentile_99\.9): [0-9.]+,$`)
			for side, want := range map[string]string{srvFile: c.srv, cliFile: c.cli} {
				b, err := os.ReadFile(side)
				if err != nil {
					t.Fatal(err)
				}
				test := "RDMA_Write_BW_Test"
				if o.Test == SendLat {
					test = "Send_Latency_Test"
				}
				head := "{\ntest_info: {\ntest: " + test + ",\nDual_port: OFF,\nDevice: \"rxe0\",\nNumber_of_qps: 1,\nTransport_type: IB,\nConnection_type: RC,\nUsing_SRQ: OFF,\nPCIe_relax_order: ON,\nibv_wr_API: OFF,\n" +
					want + "Mtu: 1024,\nLink_type: Ethernet,\nGID_index: 1,\nMax_inline_data: 0,\nrdma_cm_QPs: OFF,\nData_ex_method: Ethernet,\n},\nresults: {\n"
				got := numbers.ReplaceAllString(string(b), "$1: N,")
				if got != head+c.resultKeys+"},\n}\n" {
					t.Errorf("%s:\n%s\nwant:\n%s", side, got, head+c.resultKeys+"},\n}\n")
				}
			}
			if o.Output == "" && !strings.Contains(cliOut, "#bytes") {
				t.Errorf("no row:\n%s", cliOut)
			}
		})
	}
	o := Options{Test: WriteBW, Iters: 20, GIDIndex: 1, IBPort: 1, OutJSON: true, OutJSONFile: dir}
	var serr, cerr bytes.Buffer
	_, _, se, ce := runPairOut(t, newFabric(), o, &serr, &cerr)
	if se != nil || ce != nil || !strings.HasPrefix(cerr.String(), "failed to open "+dir+": ") {
		t.Errorf("a directory for the file: server %v, client %v, stderr %q", se, ce, cerr.String())
	}
}

// TestFineGbitsRow: in Gb/sec an average below 0.1 is printed with six
// decimals in perftest's REPORT_FMT_EXT, in the row and in the file.
func TestFineGbitsRow(t *testing.T) {
	r := BWReport{Size: 8, Iters: 1000, BWPeak: 0.0025, BWAvg: 0.0024, MsgRate: 0.0375}
	var b bytes.Buffer
	WriteBWRow(&b, r, true, "\n")
	if want := " 8          1000           0.002500            0.002400            0.037500\n"; b.String() != want {
		t.Errorf("row %q, want %q", b.String(), want)
	}
	b.Reset()
	WriteBWRow(&b, r, false, "\n")
	if want := " 8          1000             0.00               0.00   \t\t   0.037500\n"; b.String() != want {
		t.Errorf("MB/sec row %q, want %q", b.String(), want)
	}
	if got := outJSONBW(r, true, "", nil); !strings.Contains(got, "BW_peak: 0.002500,\nBW_average: 0.002400,\n") {
		t.Errorf("file %q", got)
	}
}
