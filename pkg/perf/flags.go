package perf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// FlagValues is what the command line sets: Options, and the options
// whose text is turned into Options only once every flag is read.
type FlagValues struct {
	Options
	GID          string  // -x: an index, "auto" or "" (cmd reads it)
	DurationSecs int64   // -D
	CPUFreq      bool    // -F: accepted, rdmactl has no cpufreq warning
	Conn         string  // -c
	Output       string  // --output
	Version      bool    // -V
	MarginSecs   int     // -f
	QPTimeout    int     // -u
	TOS          int     // -T
	HopLimit     int     // -L: perftest takes its default for the QPs rdmactl makes
	LimitBW      float64 // -w
	LimitMsgRate float64 // -y
	CounterList  string  // -W
	// the rate limiter's options, as typed (RateLimit is read from them)
	RateLimitText  string // --rate_limit
	RateUnits      string // --rate_units
	RateLimitType  string // --rate_limit_type
	BurstSize      int    // --burst_size
	TypicalPktSize int    // --typical_pkt_size
	// --aes_xts and its files, refused (checkAESXTS)
	AESXTS                               bool
	KEKPath, DEKAppPath, CredentialsPath string
}

// Flag is one option of perftest's command line, as rdmactl takes it.
// The table (Flags) drives parsing, help, the man page and completion.
type Flag struct {
	Long  string
	Short string // "" when perftest has none
	Usage string
	// Value points into v at what the option sets: *bool, *int, *int64,
	// *float64, *string or *time.Duration; its value before parsing is the
	// default.
	Value func(v *FlagValues) any
	// Check refuses what perftest refuses for the test or the value.
	Check func(t Test, v *FlagValues) error
	// Extra marks rdmactl's own options, which perftest does not have.
	Extra bool
}

// Flags are perf's options: perftest's spellings, defaults and refusals.
// Extra ones are rdmactl's.
var Flags = []Flag{
	{Long: "ib-dev", Short: "d", Usage: "RDMA device (default: the first one found)", Value: func(v *FlagValues) any { return &v.Device }},
	{Long: "ib-port", Short: "i", Usage: "port of the RDMA device", Value: func(v *FlagValues) any { return &v.IBPort }},
	{Long: "gid-index", Short: "x", Usage: `GID index, or "auto" (default: none on InfiniBand; on Ethernet perftest's choice)`, Value: func(v *FlagValues) any { return &v.GID }},
	{Long: "size", Short: "s", Usage: "message size in bytes (default 65536 for BW tests, 2 for latency)", Value: func(v *FlagValues) any { return &v.Size }},
	{Long: "all", Short: "a", Usage: "run all message sizes from 2 to 2^23", Value: func(v *FlagValues) any { return &v.All }},
	{Long: "iters", Short: "n", Usage: "iterations, 5 to 100000000 (default 5000 for write_bw, 1000 otherwise)", Value: func(v *FlagValues) any { return &v.Iters }},
	{Long: "duration", Short: "D", Usage: "run for this many seconds instead of -n iterations", Value: func(v *FlagValues) any { return &v.DurationSecs }},
	{Long: "margin", Short: "f", Usage: "with -D, measure only after and before this many seconds (default: a quarter of -D)", Value: func(v *FlagValues) any { return &v.MarginSecs },
		Check: func(t Test, v *FlagValues) error {
			if v.MarginSecs < 0 {
				return refuse("-f", v.MarginSecs, "Margin must be non-negative int")
			}
			return nil
		}},
	{Long: "port", Short: "p", Usage: "TCP port of the out-of-band exchange", Value: func(v *FlagValues) any { return &v.TCPPort }},
	{Long: "qp", Short: "q", Usage: "number of QPs (bandwidth tests: 1 to 16)", Value: func(v *FlagValues) any { return &v.QPs }},
	{Long: "tx-depth", Short: "t", Usage: "send queue depth, 1 to 15000 (default 128 for BW tests, 1 for latency)", Value: func(v *FlagValues) any { return &v.TxDepth }},
	{Long: "rx-depth", Short: "r", Usage: "receive queue depth of the send tests, 1 to 16384 (default 512); the other tests take only 1", Value: func(v *FlagValues) any { return &v.RxDepth }},
	{Long: "mtu", Short: "m", Usage: "path MTU in bytes: 256 … 4096 (default: the port's active MTU)", Value: func(v *FlagValues) any { return &v.MTU }},
	{Long: "cq-mod", Short: "Q", Usage: "bandwidth tests: one completion per this many messages, 1 to 1024 (default 100; 1 above 8192 bytes)", Value: func(v *FlagValues) any { return &v.CQModeration },
		Check: func(t Test, v *FlagValues) error {
			if v.CQModeration < 1 || v.CQModeration > maxCQMod {
				return refuse("-Q", v.CQModeration, fmt.Sprintf("CQ moderation should be between 1 and %d", maxCQMod))
			}
			return nil
		}},
	{Long: "noPeak", Short: "N", Usage: "bandwidth tests: do not compute the peak (BW peak reads 0.00)", Value: func(v *FlagValues) any { return &v.SkipPeak },
		Check: func(t Test, v *FlagValues) error {
			if t.Latency() {
				return refuse("-N", "", "NoPeak only valid for BW tests")
			}
			return nil
		}},
	{Long: "qp-timeout", Short: "u", Usage: "QP timeout: 4 usec * 2^(timeout), 0 to 255", Value: func(v *FlagValues) any { return &v.QPTimeout },
		Check: func(t Test, v *FlagValues) error {
			if v.QPTimeout < 0 || v.QPTimeout > 255 {
				return refuse("-u", v.QPTimeout, "QP Timeout should be between 0 and 255")
			}
			return nil
		}},
	{Long: "sl", Short: "S", Usage: "service level of the QPs' path, 0 to 15 (default 0; with -R rdma_cm's route sets it)", Value: func(v *FlagValues) any { return &v.SL },
		Check: func(t Test, v *FlagValues) error {
			switch {
			case v.SL < 0 || v.SL > 255:
				return refuse("-S", v.SL, "Service Level should be between 0 and 255")
			case v.SL > maxSL:
				return refuse("-S", v.SL, fmt.Sprintf("Only %d Service levels", maxSL))
			}
			return nil
		}},
	{Long: "connection", Short: "c", Usage: "connection type: RC (default), UC (write and send tests) or UD (send tests, messages of at most the MTU)", Value: func(v *FlagValues) any { return &v.Conn },
		Check: func(t Test, v *FlagValues) error { return checkConn(t, v.Conn) }},
	{Long: "events", Short: "e", Usage: "sleep on CQ events (latency tests do by default, and on one CPU the bandwidth loops whose peer polls, but for a timed run's sender; --busy-poll spins)", Value: func(v *FlagValues) any { return &v.Events },
		Check: func(t Test, v *FlagValues) error {
			switch {
			case t.IsWrite():
				return refuse("-e", "", "Events feature not available on WRITE verb")
			case v.BusyPoll:
				return fmt.Errorf("-e with --busy-poll: give one of them")
			}
			return nil
		}},
	{Long: "output", Usage: "print only this number: bandwidth, message_rate or latency", Value: func(v *FlagValues) any { return &v.Output },
		Check: func(t Test, v *FlagValues) error {
			switch {
			case !slices.Contains([]string{"bandwidth", "message_rate", "latency"}, v.Output):
				return refuse("--output", v.Output, "Invalid verbosity level output flag. Please use bandwidth, latency, message_rate")
			case !t.Latency() && v.Output == "latency":
				return refuse("--output", v.Output, "Output verbosity level for BW can be: bandwidth, message_rate")
			case t.Latency() && v.Output != "latency":
				return refuse("--output", v.Output, "Output verbosity level for LAT can be: latency")
			}
			return nil
		}},
	{Long: "report-histogrm", Short: "H", Usage: "latency tests: print every sample after the sort (sic: perftest's parser spells it so and refuses the --report-histogram its help prints, as rdmactl does)", Value: func(v *FlagValues) any { return &v.Histogram },
		Check: latencyOnly("-H", " Available only on Latency tests")},
	{Long: "report-unsorted", Short: "U", Usage: "latency tests: print every sample in the order measured", Value: func(v *FlagValues) any { return &v.Unsorted },
		Check: latencyOnly("-U", " is Available only on Latency tests")},
	{Long: "atomic_type", Short: "A", Usage: "the atomic tests' operation: CMP_AND_SWAP or FETCH_AND_ADD (default)", Value: func(v *FlagValues) any { return &v.AtomicType },
		Check: func(t Test, v *FlagValues) error {
			// perftest looks at the test before the value
			if !t.IsAtomic() {
				return refuse("-A", v.AtomicType, notAtomicTest)
			}
			if v.AtomicType != FetchAndAdd && v.AtomicType != CmpAndSwap {
				return refuse("-A", v.AtomicType, "Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}")
			}
			return nil
		}},
	{Long: "post_list", Short: "l", Usage: "bandwidth tests: post this many requests per call, chained (CQ moderation follows unless -Q)", Value: func(v *FlagValues) any { return &v.PostList },
		Check: func(t Test, v *FlagValues) error {
			if v.PostList < 1 {
				return fmt.Errorf("-l %d: a post list holds 1 or more requests", v.PostList)
			}
			return nil
		}},
	{Long: "reversed", Usage: "the side that connects runs the test's server part, the listening side its client part (give it on both sides)", Value: func(v *FlagValues) any { return &v.Reversed }},
	{Long: "recv_post_list", Usage: "bandwidth tests: send_bw's server posts its receives in lists of this many (-r is rounded down to whole lists)", Value: func(v *FlagValues) any { return &v.RecvPostList }},
	{Long: "inline_size", Short: "I", Usage: "send and write tests: messages of up to this many bytes travel inside the work request, 0 to 912 (default 0)", Value: func(v *FlagValues) any { return &v.InlineSize },
		Check: func(t Test, v *FlagValues) error {
			switch {
			case v.InlineSize < 0 || v.InlineSize > maxInline:
				return refuse("-I", v.InlineSize, fmt.Sprintf("Max inline should be between 0 and %d", maxInline))
			case t.fetches():
				return refuse("-I", v.InlineSize, "Inline feature not available on READ/Atomic verbs")
			}
			return nil
		}},
	{Long: "outs", Short: "o", Usage: "read and atomic tests: requests in flight per QP, up to the device's max_qp_rd_atom (default: that max)", Value: func(v *FlagValues) any { return &v.OutReads },
		Check: func(t Test, v *FlagValues) error {
			if !t.fetches() {
				return refuse("-o", v.OutReads, "Setting Outstanding reads only available on READ verb")
			}
			return nil
		}},
	{Long: "tos", Short: "T", Usage: "with -R: the rdma_cm connections' type of service, 0 to 255 (default: none set)", Value: func(v *FlagValues) any { return &v.TOS },
		Check: func(t Test, v *FlagValues) error {
			switch {
			case v.TOS < 0 || v.TOS > maxTOS:
				return refuse("-T", v.TOS, fmt.Sprintf("TOS should be between 0 and %d", maxTOS))
			case !v.RDMACM:
				return refuse("-T", v.TOS, "TOS only valid for rdma_cm based QP and RawEth QP")
			}
			return nil
		}},
	{Long: "hop_limit", Short: "L", Usage: "accepted at perftest's default, 64, only: perftest sets the hop limit of raw Ethernet QPs, which rdmactl has not (the QPs' GRH carries 255, as perftest's)", Value: func(v *FlagValues) any { return &v.HopLimit },
		Check: func(t Test, v *FlagValues) error {
			switch {
			case v.HopLimit < 0 || v.HopLimit > maxHopLimit:
				return refuse("-L", v.HopLimit, fmt.Sprintf("Hop Limit should be between 0 and %d", maxHopLimit))
			case v.HopLimit != defHopLimit:
				return refuse("-L", v.HopLimit, "Hop limit only valid for RawEth QP")
			}
			return nil
		}},
	{Long: "tclass", Usage: "without -R: the traffic class in the QPs' GRH, 0 to 255 (default 0)", Value: func(v *FlagValues) any { return &v.TrafficClass }},
	{Long: "report-counters", Short: "W", Usage: `after each result row, print how far these port counters moved: "hw_counters/NAME,counters/NAME"`, Value: func(v *FlagValues) any { return &v.CounterList },
		Check: func(t Test, v *FlagValues) error {
			if _, err := ParseReportCounters(v.CounterList); err != nil {
				return &UsageError{err}
			}
			return nil
		}},
	{Long: "report-cycles", Short: "C", Usage: "latency tests: report in CPU cycles, at the clock rate /proc/cpuinfo gives", Value: func(v *FlagValues) any { return &v.Cycles },
		Check: latencyOnly("-C", " Available only on Latency tests")},
	{Long: "bidirectional", Short: "b", Usage: "bandwidth tests: both sides move data at once; each prints the sum", Value: func(v *FlagValues) any { return &v.Bidirectional },
		Check: bwOnly("-b", " Bidirectional is only available in BW test")},
	{Long: "report-both", Usage: "with -b: print each side's own result after the sum", Value: func(v *FlagValues) any { return &v.ReportBoth }},
	{Long: "report_gbits", Usage: "report bandwidth in Gb/sec instead of MB/sec", Value: func(v *FlagValues) any { return &v.Gbits }},
	{Long: "rdma_cm", Short: "R", Usage: "exchange and connect the QPs over rdma_cm, as perftest -R (the client gives the server's IPv4 address)", Value: func(v *FlagValues) any { return &v.RDMACM }},
	{Long: "comm_rdma_cm", Short: "z", Usage: "exchange over rdma_cm (the client gives the server's IPv4 address) but connect the QPs with the records, as perftest -z", Value: func(v *FlagValues) any { return &v.CommRDMACM }},
	{Long: "CPU-freq", Short: "F", Usage: "accepted for perftest compatibility (rdmactl times with the monotonic clock)", Value: func(v *FlagValues) any { return &v.CPUFreq }},
	{Long: "version", Short: "V", Usage: "print the perftest version rdmactl speaks (exit 1, as perftest)", Value: func(v *FlagValues) any { return &v.Version }},
	{Long: "limit_bw", Short: "w", Usage: "bandwidth tests: fail (exit 1) unless the average bandwidth reaches this, in the report's unit (MB/sec, Gb/sec with --report_gbits)", Value: func(v *FlagValues) any { return &v.LimitBW },
		Check: func(t Test, v *FlagValues) error {
			if v.LimitBW < 0 {
				return refuse("-w", v.LimitBW, "Invalid Minimum BW Limit")
			}
			return nil
		}},
	{Long: "limit_msgrate", Short: "y", Usage: "bandwidth tests: fail (exit 1) unless the message rate reaches this many Mpps (checked alone too; perftest checks it only with -w)", Value: func(v *FlagValues) any { return &v.LimitMsgRate },
		Check: func(t Test, v *FlagValues) error {
			if v.LimitMsgRate < 0 {
				return refuse("-y", v.LimitMsgRate, "Invalid Minimum msgRate Limit")
			}
			return nil
		}},
	{Long: "perform_warm_up", Usage: "write_bw, read_bw and atomic_bw: before measuring, post -t requests per QP (-l's count with a post list) and wait for them (other tests take it and do nothing, as perftest)", Value: func(v *FlagValues) any { return &v.WarmUp }},
	{Long: "run_infinitely", Usage: "bandwidth tests: run until stopped (^C), a row every -D seconds (default 5); the server ends when the client leaves", Value: func(v *FlagValues) any { return &v.RunInfinitely }},
	{Long: "cpu_util", Usage: "with -D: end each row with CPU_Util[%], the host's user time over its user and idle time in the sample window, from /proc/stat", Value: func(v *FlagValues) any { return &v.CPUUtil }},
	{Long: "busy-poll", Extra: true, Usage: "spin on the completion queue, as perftest does, where rdmactl would sleep on CQ events (latency tests; on one CPU, send_bw and -b)", Value: func(v *FlagValues) any { return &v.BusyPoll }},
	{Long: "plot", Extra: true, Usage: "at the end, draw this side's result to `FILE.svg`: bandwidth and message rate per size (a dot per row), or the latency samples' histogram (-a: t_min, t_typical, t_avg, 99% per size)", Value: func(v *FlagValues) any { return &v.PlotFile }},
	{Long: "timeout", Extra: true, Usage: "how long to wait for the peer at each step", Value: func(v *FlagValues) any { return &v.Timeout }},

	{Long: "rate_limit", Usage: "bandwidth tests: send at most this rate, in --rate_units; on RoCE perftest's default HW limiter falls back to its software one, and so does rdmactl's", Value: func(v *FlagValues) any { return &v.RateLimitText }},
	{Long: "rate_units", Usage: "--rate_limit's unit: M (MiB/s), g (Gb/s) or p (messages/s)", Value: func(v *FlagValues) any { return &v.RateUnits }},
	{Long: "rate_limit_type", Usage: "the limiter: SW, HW (the default with --rate_limit; an InfiniBand static rate, SW on RoCE) or PP (raw Ethernet's packet pacing: refused)", Value: func(v *FlagValues) any { return &v.RateLimitType }},
	{Long: "burst_size", Usage: "with a rate limit: messages sent back to back in each burst (default: the TX depth)", Value: func(v *FlagValues) any { return &v.BurstSize }},
	{Long: "typical_pkt_size", Usage: "packet pacing's typical packet size, 0 to 65535 (PP only, which raw Ethernet alone has)", Value: func(v *FlagValues) any { return &v.TypicalPktSize },
		Check: func(t Test, v *FlagValues) error {
			if v.TypicalPktSize < 0 || v.TypicalPktSize > 0xffff {
				return refuse("--typical_pkt_size", v.TypicalPktSize, "Typical pkt size should be between 0 and 65535")
			}
			if v.TypicalPktSize != 0 && v.RateLimitType != limiterPP {
				return refuse("--typical_pkt_size", v.TypicalPktSize, "Typical packet size only supports PP rate limiter")
			}
			return nil
		}},

	{Long: "out_json", Usage: "with each result row, write perftest's report file (key: value lines; --json is rdmactl's JSON document)", Value: func(v *FlagValues) any { return &v.OutJSON }},
	{Long: "out_json_file", Usage: "--out_json's file (default: perftest_out.json in the working directory)", Value: func(v *FlagValues) any { return &v.OutJSONFile }},
	{Long: "mr_per_qp", Usage: "register each QP's share of the buffer as a memory region of its own (its own RKey in the QP's record)", Value: func(v *FlagValues) any { return &v.MRPerQP }},
	{Long: "use_hugepages", Usage: "back the buffer with huge pages (the host must have some reserved: vm.nr_hugepages)", Value: func(v *FlagValues) any { return &v.HugePages }},
	{Long: "mmap", Usage: "use a shared mapping of this file as the buffer: what the peer writes lands in it", Value: func(v *FlagValues) any { return &v.MmapFile }},
	{Long: "mmap-offset", Usage: "with --mmap: where in the file the buffer starts", Value: func(v *FlagValues) any { return &v.MmapOffset }},
	{Long: "dualport", Short: "O", Usage: "perftest's dual-port mode: perftest's failure on a device with one port, else refused (rdmactl runs on one port)", Value: func(v *FlagValues) any { return &v.DualPort }},
	{Long: "odp", Usage: "on-demand paging: perftest's failure on a device without it for RC, else refused (rdmactl registers its memory)", Value: func(v *FlagValues) any { return &v.ODP }},
	{Long: "aes_xts", Usage: "encryption: perftest's refusals, then rdmactl's (it has no encryption)", Value: func(v *FlagValues) any { return &v.AESXTS }},
	{Long: "kek_path", Usage: "with --aes_xts: the key encryption key file", Value: func(v *FlagValues) any { return &v.KEKPath }},
	{Long: "data_enc_key_app_path", Usage: "with --aes_xts: the data encryption key application", Value: func(v *FlagValues) any { return &v.DEKAppPath }},
	{Long: "credentials_path", Usage: "with --aes_xts: the credentials file", Value: func(v *FlagValues) any { return &v.CredentialsPath }},
	{Long: "dont_xchg_versions", Usage: "refused as perftest refuses it: its peers exchange versions since 5.70", Value: func(v *FlagValues) any { return new(bool) },
		Check: func(Test, *FlagValues) error {
			return refuse("--dont_xchg_versions", "", "Current implementation is not compatible with versions older than 5.70")
		}},
	{Long: "use-srq", Usage: "send tests: the receiving QPs (send_bw's server, both sides of send_lat) share one receive queue of -r receives", Value: func(v *FlagValues) any { return &v.SRQ }},
}

// Perftest's bounds of the options above.
const (
	maxCQMod    = 1024
	maxSL       = 15
	maxHopLimit = 255
	defHopLimit = 64
)

func latencyOnly(flag, text string) func(Test, *FlagValues) error {
	return func(t Test, _ *FlagValues) error {
		if !t.Latency() {
			return refuse(flag, "", strings.TrimSpace(text))
		}
		return nil
	}
}

func bwOnly(flag, text string) func(Test, *FlagValues) error {
	return func(t Test, _ *FlagValues) error {
		if t.Latency() {
			return refuse(flag, "", strings.TrimSpace(text))
		}
		return nil
	}
}

// checkConn is perftest's -c, per test.
func checkConn(t Test, c string) error {
	switch c {
	case "RC":
	case "UD":
		if !t.IsSend() {
			return refuse("-c", c, "UD connection only possible in SEND verb")
		}
	case "UC":
		if t.fetches() {
			return refuse("-c", c, "UC connection not possible in READ/ATOMIC verbs")
		}
	case "DC":
		return fmt.Errorf("-c DC: Unable to create QP. (perftest's words on rxe; rdmactl runs RC, UC and UD only)")
	case "XRC":
		return fmt.Errorf("-c XRC: Error opening XRC domain (perftest's words on rxe; rdmactl runs RC, UC and UD only)")
	case "SRD":
		if !t.IsSend() && !t.IsRead() {
			return refuse("-c", c, "SRD connection only possible in SEND/READ verbs")
		}
		return fmt.Errorf("-c SRD: rdmactl runs RC, UC and UD only (SRD is EFA's)")
	default:
		return refuse("-c", c, "Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}")
	}
	return nil
}

// ValueIn is what the option sets in v.
func (f Flag) ValueIn(v *FlagValues) any { return f.Value(v) }

// NewFlagValues are the values before parsing: perftest's defaults.
func NewFlagValues() *FlagValues {
	v := &FlagValues{}
	v.IBPort, v.TCPPort, v.QPs, v.Timeout, v.Conn, v.MarginSecs, v.QPTimeout, v.HopLimit = 1, DefaultTCPPort, 1, 2*time.Minute, "RC", 0, defQPTimeout, defHopLimit
	v.RateUnits = "g"
	return v
}

// Resolve checks the options given (given says whether the option of
// that long name was on the command line) and turns them into Options
// for test t; -x is cmd's to read. Refusals are *Refusal (perftest's
// line, exit 1), *UsageError (rdmactl's own bounds) or plain errors
// (rdmactl does not do it).
func (v *FlagValues) Resolve(t Test, given func(long string) bool) (Options, error) {
	o := v.Options
	o.Test = t
	for _, f := range Flags {
		if !given(f.Long) {
			continue
		}
		if f.Check != nil {
			if err := f.Check(t, v); err != nil {
				return o, err
			}
		}
	}
	for long, flag := range map[string]string{"size": "-s", "iters": "-n", "tx-depth": "-t", "qp": "-q", "rx-depth": "-r"} {
		if given(long) && *intOption(long, v) == 0 {
			return o, RefuseGivenZero(flag)
		}
	}
	if given("duration") {
		d, err := DurationOf(v.DurationSecs)
		if err != nil {
			return o, err
		}
		o.Duration = d
	}
	if given("margin") {
		m := time.Duration(v.MarginSecs) * time.Second
		o.Margin = &m
	}
	if given("qp-timeout") {
		o.QPTimeout = &v.QPTimeout
	}
	if given("tos") {
		o.TOS = &v.TOS
	}
	if given("limit_bw") {
		o.LimitBW = &v.LimitBW
	}
	if given("limit_msgrate") {
		o.LimitMsgRate = &v.LimitMsgRate
	}
	switch v.Conn {
	case "UC":
		o.Conn = rdma.QPTypeUC
	case "UD":
		o.Conn = rdma.QPTypeUD
	}
	rl, err := parseRateLimit(v, given)
	if err != nil {
		return o, err
	}
	o.RateLimit = rl
	if given("report-counters") {
		o.ReportCounters = v.CounterList
	}
	if o.IBPort < 1 {
		return o, refuse("-i", o.IBPort, "IB Port can't be less than 1")
	}
	if o.IBPort > 255 {
		return o, &UsageError{fmt.Errorf("invalid -i %d: ports are numbered 1 to 255", o.IBPort)}
	}
	if o.TCPPort < 1 || o.TCPPort > 65535 {
		return o, &UsageError{fmt.Errorf("invalid -p %d: want a TCP port, 1 to 65535", o.TCPPort)}
	}
	if o.Timeout <= 0 {
		return o, &UsageError{fmt.Errorf("invalid --timeout %v: must be positive", o.Timeout)}
	}
	if given("output") {
		o.Output = v.Output
	}
	// the checks that need every option
	r, err := o.Resolve()
	if err == nil {
		err = checkAESXTS(v, r)
	}
	if err != nil {
		if errors.As(err, new(*Refusal)) {
			return o, err
		}
		return o, &UsageError{err}
	}
	return o, nil
}

// intOption is the int an integer option of that long name sets in v.
func intOption(long string, v *FlagValues) *int {
	for _, f := range Flags {
		if f.Long == long {
			return f.Value(v).(*int)
		}
	}
	panic("no int option --" + long)
}

// LongOption is the long option name stands for, as getopt_long reads it:
// an exact name, or a unique prefix of one among perf's options and
// extra; otherwise getopt's complaint.
func LongOption(name string, extra []string) (string, error) {
	names := slices.Clone(extra)
	for _, f := range Flags {
		names = append(names, f.Long)
	}
	if slices.Contains(names, name) {
		return name, nil
	}
	var matches []string
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			matches = append(matches, n)
		}
	}
	slices.Sort(matches)
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("unrecognized option '--%s'", name)
	}
	return "", fmt.Errorf("option '--%s' is ambiguous; possibilities: '--%s'", name, strings.Join(matches, "' '--"))
}
