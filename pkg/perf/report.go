package perf

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/latency"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The lines of perftest's result tables, byte for byte, so that scripts
// that parse ib_*_bw and ib_*_lat output parse rdmactl's too.
const (
	resultLine  = "---------------------------------------------------------------------------------------\n"
	bwHeaderMB  = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
	bwHeaderGb  = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
	latHeader   = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
	latDurHeadr = " #bytes        #iterations       t_avg[usec]    tps average\n"
)

// HeaderInfo is what perftest's test information block shows.
type HeaderInfo struct {
	Test     Test
	Client   bool
	Device   string
	QPs      int
	Conn     rdma.QPType // RC for 0
	TxDepth  int
	RxDepth  int
	CQMod    int
	MTUBytes int
	Ethernet bool
	GIDIndex int // -1: none
	Inline   int
	Duplex   bool // -b
	TOS      *int // -T, named after the exchange method with -R
	OutReads int
	RDMACM   bool
	// CommRDMACM is -z: the exchange runs over rdma_cm, as with -R.
	CommRDMACM bool
	Events     bool   // -e
	Atomic     string // the atomic tests' -A
	PostList   int    // -l
	// RecvPostList is --recv_post_list.
	RecvPostList int
	SRQ          bool // --use-srq
}

// WriteHeader prints the test information block (ctx_print_test_info).
func WriteHeader(w io.Writer, h HeaderInfo) {
	var b strings.Builder
	b.WriteString(resultLine)
	kind := "BW "
	if h.PostList > 1 {
		kind = "Post List BW "
	}
	if h.Duplex {
		kind = "Bidirectional " + kind
	}
	if h.Test.Latency() {
		kind = "Latency "
	}
	verb := h.Test.Verb()
	if h.Test.IsAtomic() {
		verb += " " + h.Atomic
	}
	fmt.Fprintf(&b, "                    %s %sTest\n", verb, kind)
	if h.Events {
		fmt.Fprintf(&b, " Test with events. Using %s_comp0\n", h.Device)
	}
	fmt.Fprintf(&b, " Dual-port       : OFF\t\tDevice         : %s\n", h.Device)
	fmt.Fprintf(&b, " Number of qps   : %d\t\tTransport type : IB\n", h.QPs)
	conn := h.Conn
	if conn == 0 {
		conn = rdma.QPTypeRC
	}
	fmt.Fprintf(&b, " Connection type : %s\t\tUsing SRQ      : %s\n", conn, onOff(h.SRQ))
	fmt.Fprintf(&b, " PCIe relax order: %s\n", relaxedOrdering(h.Test))
	b.WriteString(" ibv_wr* API     : OFF\n")
	if h.Client || h.Duplex {
		fmt.Fprintf(&b, " TX depth        : %d\n", h.TxDepth)
	}
	if h.PostList > 1 {
		fmt.Fprintf(&b, " Post List       : %d\n", h.PostList)
	}
	if h.RecvPostList > 1 {
		fmt.Fprintf(&b, " Recv Post List  : %d\n", h.RecvPostList)
	}
	if h.Test.IsSend() && (!h.Client || h.Duplex) {
		fmt.Fprintf(&b, " RX depth        : %d\n", h.RxDepth)
	}
	if !h.Test.Latency() {
		fmt.Fprintf(&b, " CQ Moderation   : %d\n", h.CQMod)
	}
	fmt.Fprintf(&b, " Mtu             : %d[B]\n", h.MTUBytes)
	fmt.Fprintf(&b, " Link type       : %s\n", linkType(h.Ethernet))
	if h.GIDIndex >= 0 {
		fmt.Fprintf(&b, " GID index       : %d\n", h.GIDIndex)
	}
	if h.Test.fetches() {
		fmt.Fprintf(&b, " Outstand reads  : %d\n", h.OutReads)
	} else {
		fmt.Fprintf(&b, " Max inline data : %d[B]\n", h.Inline)
	}
	onOff, method := exchangeMethod(h)
	fmt.Fprintf(&b, " rdma_cm QPs\t : %s\n", onOff)
	fmt.Fprintf(&b, " Data ex. method : %s", method)
	if h.RDMACM && h.TOS != nil {
		fmt.Fprintf(&b, " \tTOS    : %d", *h.TOS)
	}
	b.WriteString("\n")
	if h.RDMACM && !h.Client {
		b.WriteString(resultLine)
		b.WriteString(" Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP\n")
	}
	b.WriteString(resultLine)
	io.WriteString(w, b.String())
}

// onOff is a flag in perftest's words.
func onOff(on bool) string {
	if on {
		return "ON"
	}
	return "OFF"
}

// relaxedOrdering is PCIe relaxed ordering as perftest reports it:
// ib_write_lat turns it off, the others leave it on.
func relaxedOrdering(t Test) string {
	if t == WriteLat {
		return "OFF"
	}
	return "ON"
}

// linkType is the port's link layer in perftest's words.
func linkType(ethernet bool) string {
	if ethernet {
		return "Ethernet"
	}
	return "IB"
}

// exchangeMethod is whether the QPs are rdma_cm's, and how the records
// travel.
func exchangeMethod(h HeaderInfo) (rdmaCMQPs, method string) {
	rdmaCMQPs, method = "OFF", "Ethernet"
	if h.RDMACM {
		rdmaCMQPs = "ON"
	}
	if h.RDMACM || h.CommRDMACM {
		method = "rdma_cm"
	}
	return rdmaCMQPs, method
}

// cHex is C's "%#0Nx": zero-padded to width including the "0x", and no
// "0x" at all for zero.
func cHex(v uint64, width int) string {
	if v == 0 {
		return fmt.Sprintf("%0*x", width, 0)
	}
	return fmt.Sprintf("0x%0*x", max(width-2, 0), v)
}

// WriteAddress prints one side's QP record (ctx_print_pingpong_data).
func WriteAddress(w io.Writer, side string, t Test, d Dest, withGID bool) {
	var b strings.Builder
	fmt.Fprintf(&b, " %s address: LID %s QPN %s PSN %s", side, cHex(uint64(d.LID), 4), cHex(uint64(d.QPN), 6), cHex(uint64(d.PSN), 6))
	if t.IsRead() {
		fmt.Fprintf(&b, " OUT %s", cHex(uint64(d.OutReads), 4))
	}
	if !t.IsSend() && !t.IsAtomic() {
		fmt.Fprintf(&b, " RKey %s VAddr %s", cHex(uint64(d.RKey), 8), cHex(d.VAddr, 16))
	}
	b.WriteByte('\n')
	if withGID {
		// perftest prints the GID bytes in decimal.
		b.WriteString(" GID: ")
		for i, g := range d.GID {
			if i > 0 {
				b.WriteByte(':')
			}
			fmt.Fprintf(&b, "%02d", g)
		}
		b.WriteByte('\n')
	}
	io.WriteString(w, b.String())
}

// WriteBWTableHead prints the line and column header before BW results;
// cpuUtil adds --cpu_util's column.
func WriteBWTableHead(w io.Writer, gbits, cpuUtil bool) {
	h := bwHeaderMB
	if gbits {
		h = bwHeaderGb
	}
	io.WriteString(w, resultLine+withCPUColumn(h, cpuUtil))
}

// WriteLatTableHead prints the line and column header before latency
// results; cpuUtil adds --cpu_util's column.
func WriteLatTableHead(w io.Writer, duration, cpuUtil bool) {
	h := latHeader
	if duration {
		h = latDurHeadr
	}
	io.WriteString(w, resultLine+withCPUColumn(h, cpuUtil))
}

// withCPUColumn ends a column header with CPU_Util[%] (RESULT_EXT_CPU_UTIL).
func withCPUColumn(h string, cpuUtil bool) string {
	if !cpuUtil {
		return h
	}
	return strings.TrimSuffix(h, "\n") + "    CPU_Util[%]\n"
}

// WriteResultLine prints the closing line of a table.
func WriteResultLine(w io.Writer) { io.WriteString(w, resultLine) }

// WriteBWRow prints one bandwidth result (REPORT_FMT), ended by end:
// "\n", or --cpu_util's column. In Gb/sec an average below 0.1 gets six
// decimals (REPORT_FMT_EXT), as perftest gives it.
func WriteBWRow(w io.Writer, r BWReport, gbits bool, end string) {
	if fineGbits(r, gbits) {
		fmt.Fprintf(w, " %-7d    %d           %-7.6f            %-7.6f            %-7.6f%s", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate, end)
		return
	}
	fmt.Fprintf(w, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f%s", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate, end)
}

// fineGbits is perftest's inc_accuracy: a Gb/sec average too small for
// two decimals.
func fineGbits(r BWReport, gbits bool) bool { return gbits && r.BWAvg < 0.1 }

// BWTiming is what a bandwidth run measured: when each message was posted
// and when the completion covering it was seen, in nanoseconds from any
// origin. Completed[i] is set for every message a completion covered
// last; others are zero.
type BWTiming struct {
	Size      uint64
	Posted    []int64
	Completed []int64
	CQMod     int
	Gbits     bool
	NoPeak    bool
	// Count, when set, is the number of messages of a run that kept only
	// its first post and last completion (duration mode, receivers).
	Count uint64
	// Tail is a timed stream's requests in flight unseen at its end, per
	// QP (rdma.StreamResult.Tail).
	Tail []int
	// Ended, when set, ends the run for the average without the peak
	// (send_bw -b's rdma.StreamResult.Ended): perftest then stops its
	// clock when both directions are done, not at the last completion.
	Ended int64
}

// Report computes perftest's bandwidth numbers (print_report_bw) from the
// timings: the average over the whole run and the peak over the best
// window that starts at a post and ends at a completion.
func (t BWTiming) Report() BWReport {
	n := len(t.Posted)
	r := BWReport{Size: t.Size, Iters: uint64(n)}
	if n == 0 {
		return r
	}
	if t.Count > 0 {
		r.Iters = t.Count
	}
	unit := float64(0x100000)
	if t.Gbits {
		unit = 125e6
	}
	end := t.Completed[n-1]
	if t.NoPeak && t.Ended != 0 {
		end = t.Ended
	}
	total := float64(end - t.Posted[0])
	if total <= 0 {
		total = 1
	}
	r.BWAvg = float64(t.Size) * float64(r.Iters) * 1e9 / (total * unit)
	r.MsgRate = float64(r.Iters) * 1e9 / (total * 1e6)
	if t.NoPeak || t.Count > 0 {
		return r
	}
	cqMod := max(t.CQMod, 1)
	best := t.Completed[0] - t.Posted[0]
	if t.Completed[0] == 0 {
		best = t.Completed[n-1] - t.Posted[0]
	}
	try := func(i, j int) {
		// No completion brought the count to exactly j+1 (several QPs'
		// completions interleave): perftest's unsigned arithmetic skips
		// such a window, so does this.
		if t.Completed[j] == 0 {
			return
		}
		if d := (t.Completed[j] - t.Posted[i]) / int64(j-i+1); d < best {
			best = d
		}
	}
	for i := 0; i < n; i++ {
		for j := roundUp(i+1, cqMod) - 1; j < n; j += cqMod {
			try(i, j)
		}
		if n%cqMod != 0 {
			try(i, n-1)
		}
	}
	if best <= 0 {
		best = 1
	}
	r.BWPeak = float64(t.Size) * 1e9 / (float64(best) * unit)
	return r
}

func roundUp(v, m int) int { return (v + m - 1) / m * m }

// LatReport is perftest's latency result (print_report_lat) in
// microseconds.
type LatReport struct {
	Size    uint64  `json:"bytes"`
	Iters   uint64  `json:"iterations"`
	Min     float64 `json:"t_min_usec"`
	Max     float64 `json:"t_max_usec"`
	Typical float64 `json:"t_typical_usec"`
	Avg     float64 `json:"t_avg_usec"`
	Stdev   float64 `json:"t_stdev_usec"`
	P99     float64 `json:"p99_usec"`
	P999    float64 `json:"p99_9_usec"`
	// Histogram is -H's samples counted in buckets (--json with -H).
	Histogram []HistBucket `json:"histogram,omitempty"`
}

// HistBucket says how many of -H's samples fell in [LowUsec, HighUsec).
type HistBucket struct {
	LowUsec  float64 `json:"low_usec"`
	HighUsec float64 `json:"high_usec"`
	Count    uint64  `json:"count"`
}

// latTail is how many of the largest samples perftest drops (LAT_MEASURE_TAIL).
const latTail = 2

// LatencyReport computes perftest's latency numbers from the post times
// of iters round trips (ns): each sample is the gap between consecutive
// posts, divided by rttFactor (2 for ping-pong tests, 1 for reads).
// It keeps perftest's arithmetic, quirks included: the two largest
// samples are dropped but t_max is the largest kept one's successor, and
// the deviation is summed over whole microseconds.
func LatencyReport(size uint64, posted []int64, rttFactor int) LatReport {
	return latencyReportIn(size, posted, rttFactor, usecUnit)
}

// latencyReportIn is LatencyReport of stamps in unit's terms.
func latencyReportIn(size uint64, posted []int64, rttFactor int, unit latUnit) LatReport {
	r := LatReport{Size: size, Iters: uint64(len(posted))}
	cnt := len(posted) - 1
	if cnt < latTail+1 {
		return r
	}
	delta := sampleGaps(posted)
	slices.Sort(delta)
	q := unit.perUnit * float64(rttFactor)
	us := func(v int64) float64 { return float64(v) / q }
	cnt -= latTail
	var median int64
	if (cnt-1)%2 != 0 {
		median = (delta[cnt/2] + delta[cnt/2-1]) / 2
	} else {
		median = delta[cnt/2]
	}
	sum := 0.0
	for _, d := range delta[:cnt] {
		sum += us(d)
	}
	avg := sum / float64(cnt)
	var dev float64
	for _, d := range delta[:cnt] {
		v := int(avg - us(d))
		dev += float64(v * v)
	}
	r.Min = us(delta[0])
	r.Max = us(delta[cnt])
	r.Typical = us(median)
	r.Avg = avg
	r.Stdev = math.Sqrt(dev / float64(cnt))
	r.P99 = us(delta[int(math.Ceil(float64(cnt)*0.99))])
	r.P999 = us(delta[int(math.Ceil(float64(cnt)*0.999))])
	return r
}

// WriteSamples prints a latency run's samples as perftest's -U (in the
// order measured) and -H (sorted, the two largest left out) do, then the
// table's header again, as perftest does before the row.
func WriteSamples(w io.Writer, posted []int64, rttFactor int, unsorted, histogram bool) {
	writeSamplesIn(w, posted, rttFactor, usecUnit, unsorted, histogram)
}

// writeSamplesIn is WriteSamples of stamps in unit's terms.
func writeSamplesIn(w io.Writer, posted []int64, rttFactor int, unit latUnit, unsorted, histogram bool) {
	if len(posted) < latTail+2 {
		return
	}
	q := unit.perUnit * float64(rttFactor)
	var b strings.Builder
	list := func(ds []int64) {
		b.WriteString("#, " + unit.name + "\n")
		for i, d := range ds {
			b.WriteString(strconv.Itoa(i+1) + ", " + strconv.FormatFloat(float64(d)/q, 'g', 6, 64) + "\n")
		}
	}
	if unsorted {
		list(sampleGaps(posted))
	}
	if histogram {
		list(histogramGaps(posted))
	}
	b.WriteString(resultLine + latHeader)
	io.WriteString(w, b.String())
}

// sampleGaps are a latency run's samples before the round-trip factor
// divides them: the gaps between consecutive posts, in the order measured.
func sampleGaps(posted []int64) []int64 {
	gaps := make([]int64, len(posted)-1)
	for i := range gaps {
		gaps[i] = posted[i+1] - posted[i]
	}
	return gaps
}

// histogramGaps are the samples -H prints (and --plot draws): sorted,
// the latTail largest left out. A run of fewer than latTail+2 posts has
// none.
func histogramGaps(posted []int64) []int64 {
	if len(posted) < latTail+2 {
		return nil
	}
	gaps := sampleGaps(posted)
	slices.Sort(gaps)
	return gaps[:len(gaps)-latTail]
}

// histogramBuckets counts the samples -H prints, in microseconds, in
// pkg/latency's buckets (1/64 of an octave wide); only the buckets that
// hold samples.
func histogramBuckets(posted []int64, rttFactor int) []HistBucket {
	h := latency.New()
	for _, g := range histogramGaps(posted) {
		h.Record(time.Duration(g) / time.Duration(rttFactor))
	}
	var out []HistBucket
	for _, b := range h.Buckets() {
		out = append(out, HistBucket{LowUsec: usec(b.Low), HighUsec: usec(b.High + 1), Count: b.Count})
	}
	return out
}

// WriteLatRow prints one latency result (REPORT_FMT_LAT).
func WriteLatRow(w io.Writer, r LatReport) {
	fmt.Fprintf(w, " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
		r.Size, r.Iters, r.Min, r.Max, r.Typical, r.Avg, r.Stdev, r.P99, r.P999)
}
