package perf

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// perftest's --out_json file: a block of "key: value," lines (not JSON,
// whatever its name says) that perftest writes again, whole, with every
// result row it prints, so that the file holds the last one.

// DefaultOutJSONFile is --out_json_file's default, in the working
// directory.
const DefaultOutJSONFile = "perftest_out.json"

// outJSONInfo is the file's test_info block (write_test_info_to_file):
// the header's facts, one a line.
func outJSONInfo(h HeaderInfo) string {
	var b strings.Builder
	b.WriteString("test_info: {\n")
	fmt.Fprintf(&b, "test: %s_", h.Test.Verb())
	if h.Test.IsAtomic() {
		fmt.Fprintf(&b, "%s_", h.Atomic)
	}
	if h.Test.Latency() {
		b.WriteString("Latency_")
	} else {
		if h.Duplex {
			b.WriteString("Bidirectional_")
		}
		if h.PostList > 1 {
			b.WriteString("Post_List_")
		}
		b.WriteString("BW_")
	}
	b.WriteString("Test,\n")
	if h.Events {
		fmt.Fprintf(&b, "Test with events: Using_%s_comp0,\n", h.Device)
	}
	fmt.Fprintf(&b, "Dual_port: OFF,\nDevice: \"%s\",\n", h.Device)
	fmt.Fprintf(&b, "Number_of_qps: %d,\nTransport_type: IB,\n", h.QPs)
	conn := h.Conn
	if conn == 0 {
		conn = rdma.QPTypeRC
	}
	fmt.Fprintf(&b, "Connection_type: %s,\nUsing_SRQ: %s,\n", conn, onOff(h.SRQ))
	fmt.Fprintf(&b, "PCIe_relax_order: %s,\n", relaxedOrdering(h.Test))
	b.WriteString("ibv_wr_API: OFF,\n")
	if h.Client || h.Duplex {
		fmt.Fprintf(&b, "TX_depth : %d,\n", h.TxDepth)
	}
	if h.PostList > 1 {
		fmt.Fprintf(&b, "Post_List: %d,\n", h.PostList)
	}
	if h.RecvPostList > 1 {
		fmt.Fprintf(&b, "Recv_Post_List: %d,\n", h.RecvPostList)
	}
	if h.Test.IsSend() && !h.Client {
		fmt.Fprintf(&b, "RX_depth: %d,\n", h.RxDepth)
	}
	if !h.Test.Latency() {
		fmt.Fprintf(&b, "CQ_Moderation: %d,\n", h.CQMod)
	}
	fmt.Fprintf(&b, "Mtu: %d,\n", h.MTUBytes)
	fmt.Fprintf(&b, "Link_type: %s,\n", linkType(h.Ethernet))
	if h.GIDIndex >= 0 {
		fmt.Fprintf(&b, "GID_index: %d,\n", h.GIDIndex)
	}
	if h.Test.fetches() {
		fmt.Fprintf(&b, "Outstand_reads: %d,\n", h.OutReads)
	} else {
		fmt.Fprintf(&b, "Max_inline_data: %d,\n", h.Inline)
	}
	onOff, method := exchangeMethod(h)
	fmt.Fprintf(&b, "rdma_cm_QPs: %s,\n", onOff)
	fmt.Fprintf(&b, "Data_ex_method: %s,\n", method)
	if h.RDMACM && h.TOS != nil {
		fmt.Fprintf(&b, "TOS: %d,\n", *h.TOS)
	}
	b.WriteString("},\n")
	return b.String()
}

// outJSONBW is a bandwidth row's results block (write_bw_report_to_file).
func outJSONBW(r BWReport, gbits bool, output string, cpu *float32) string {
	var b strings.Builder
	b.WriteString("results: {\n")
	switch output {
	case "bandwidth":
		fmt.Fprintf(&b, "bw_avg: %f,\n", r.BWAvg)
	case "message_rate":
		fmt.Fprintf(&b, "msgRate_avg: %f,\n", r.MsgRate)
	default:
		prec := 2
		if fineGbits(r, gbits) {
			prec = 6
		}
		fmt.Fprintf(&b, "MsgSize: %d,\nn_iterations: %d,\nBW_peak: %.*f,\nBW_average: %.*f,\nMsgRate: %.6f,\n",
			r.Size, r.Iters, prec, r.BWPeak, prec, r.BWAvg, r.MsgRate)
	}
	// perftest adds the CPU line even after --output's one number
	writeOutJSONCPU(&b, cpu)
	b.WriteString("},\n")
	return b.String()
}

// outJSONLat is a latency row's results block (write_report_lat_to_file).
func outJSONLat(r LatReport, output string, cpu *float32) string {
	var b strings.Builder
	b.WriteString("results: {\n")
	if output == "latency" {
		fmt.Fprintf(&b, "avg_lat: %f,\n", r.Avg)
	} else {
		fmt.Fprintf(&b, "MsgSize: %d,\nn_iterations: %d,\nt_min: %.2f,\nt_max: %.2f,\nt_typical: %.2f,\nt_avg: %.2f,\nt_stdev: %.2f,\npercentile_99: %.2f,\npercentile_99.9: %.2f,\n",
			r.Size, r.Iters, r.Min, r.Max, r.Typical, r.Avg, r.Stdev, r.P99, r.P999)
		writeOutJSONCPU(&b, cpu)
	}
	b.WriteString("},\n")
	return b.String()
}

// outJSONLatDur is a -D latency row's results block
// (write_report_lat_duration_to_file).
func outJSONLatDur(r LatDurReport, output string, cpu *float32) string {
	var b strings.Builder
	b.WriteString("results: {\n")
	if output == "latency" {
		fmt.Fprintf(&b, "t_avg: %f\n", r.TAvg)
	} else {
		fmt.Fprintf(&b, "MsgSize: %d,\nn_iterations: %d,\nt_avg: %.2f,\ntps_average: %.2f,\n", r.Size, r.Iters, r.TAvg, r.TPS)
		writeOutJSONCPU(&b, cpu)
	}
	b.WriteString("},\n")
	return b.String()
}

func writeOutJSONCPU(w io.Writer, cpu *float32) {
	if cpu != nil {
		fmt.Fprintf(w, "CPU_util: %.2f,\n", *cpu)
	}
}

// writeOutJSON replaces the --out_json file with this row's results. As
// perftest, a file that cannot be written is reported on stderr and the
// run goes on.
func (s *session) writeOutJSON(results string) {
	if !s.r.OutJSON {
		return
	}
	doc := "{\n" + outJSONInfo(s.header) + results + "}\n"
	if err := cli.WriteFileAtomic(s.r.OutJSONFile, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, doc)
		return err
	}); err != nil {
		fmt.Fprintf(s.errOut, "failed to open %s: %v\n", s.r.OutJSONFile, err)
	}
}

// cpuShare is --cpu_util's share for the row being printed; nil without.
func (s *session) cpuShare() *float32 {
	if s.cpu == nil {
		return nil
	}
	p := s.cpu.percent()
	return &p
}
