package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/perf"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// TestPerfFlagsOneTable: perf.Flags is the one source of perf's options:
// the command's flags (help), the man page and completion show each of
// them with its letter and text, and no other.
func TestPerfFlagsOneTable(t *testing.T) {
	cmd := newCmdPerf(&cli.Factory{IO: cli.Test(nil, &bytes.Buffer{}, &bytes.Buffer{})}, nil)
	man, err := os.ReadFile(manDir + "/rdmactl-perf.1")
	if err != nil {
		t.Fatal(err)
	}
	completed := complete(t, labHost(t), "perf", "write_bw", "--")
	var longs []string
	for _, f := range perf.Flags {
		longs = append(longs, f.Long)
		fl := cmd.Flags().Lookup(f.Long)
		if fl == nil {
			t.Errorf("--%s is in the table, not among the command's flags", f.Long)
			continue
		}
		if fl.Shorthand != f.Short || !strings.HasSuffix(fl.Usage, f.Usage) {
			t.Errorf("--%s: flag -%s %q, table -%s %q", f.Long, fl.Shorthand, fl.Usage, f.Short, f.Usage)
		}
		if !bytes.Contains(man, []byte(`\fB--`+f.Long+`\fP`)) {
			t.Errorf("the man page lacks --%s (make man)", f.Long)
		}
		if !slices.ContainsFunc(completed, func(c string) bool { return strings.HasPrefix(c, "--"+f.Long+"\t") || c == "--"+f.Long }) {
			t.Errorf("completion lacks --%s", f.Long)
		}
	}
	cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		if fl.Name != "help" && !slices.Contains(longs, fl.Name) {
			t.Errorf("--%s is a flag of perf outside the table", fl.Name)
		}
	})
	// Prefix matching knows the root's flags too.
	root := newCmdRoot(&cli.Factory{IO: cli.Test(nil, &bytes.Buffer{}, &bytes.Buffer{}), Version: "test"})
	inherited := []string{"help"}
	root.PersistentFlags().VisitAll(func(fl *pflag.Flag) { inherited = append(inherited, fl.Name) })
	slices.Sort(inherited)
	known := slices.Sorted(slices.Values(perfInheritedFlags))
	if !slices.Equal(inherited, known) {
		t.Errorf("root's flags %v, perf's prefix matching knows %v", inherited, known)
	}
}

// TestPerfLongOptionPrefixes: as perftest's getopt_long, a unique prefix
// of a long option is that option (NVIDIA's scripts type --report_gbit);
// an ambiguous or unknown one exits 1 with getopt's words.
func TestPerfLongOptionPrefixes(t *testing.T) {
	o, err := runPerfCmd(t, "write_bw", "--report_gbit", "--ite=50", "--siz", "4096", "10.9.0.1")
	if err != nil || !o.Gbits || o.Iters != 50 || o.Size != 4096 {
		t.Fatalf("--report_gbit --ite=50 --siz 4096: %v, %+v", err, o)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"write_bw", "--report"}, "option '--report' is ambiguous; possibilities: '--report-both' '--report-counters' '--report-cycles' '--report-histogrm' '--report-unsorted' '--report_gbits'"},
		{[]string{"write_bw", "--bogus"}, "unrecognized option '--bogus'"},
		{[]string{"write_bw", "--report_gbits=1"}, "option '--report_gbits' doesn't allow an argument"},
		{[]string{"write_bw", "--report_gb=yes"}, "option '--report_gbits' doesn't allow an argument"},
		{[]string{"write_bw", "--report_gbits=true"}, "option '--report_gbits' doesn't allow an argument"},
		{[]string{"write_bw", "--bidirectional=true"}, "option '--bidirectional' doesn't allow an argument"},
		{[]string{"write_bw", "-k"}, "unknown shorthand flag: 'k' in -k"},
		{[]string{"write_bw", "-n", "abc"}, `invalid argument "abc" for "-n, --iters" flag`},
	} {
		var out, errOut bytes.Buffer
		root := newCmdRoot(&cli.Factory{IO: cli.Test(nil, &out, &errOut), Version: "test"})
		root.SetArgs(append([]string{"perf"}, c.args...))
		err := root.Execute()
		if cli.ExitCode(err) != cli.ExitFailed || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: exit %d (%v), want 1 and %q", c.args, cli.ExitCode(err), err, c.want)
		}
	}
}

// TestPerfOptionsPerftestRefuses: the new options keep perftest's per
// test refusals and ranges; those rdmactl cannot do yet are refused in
// one line that says so.
func TestPerfOptionsPerftestRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"write_lat", "-b"}, "-b : Bidirectional is only available in BW test"},
		{[]string{"send_bw", "-b", "--run_infinitely"}, "run_infinitely mode is not supported in SEND Bidirectional BW test"},
		{[]string{"write_lat", "-N"}, "-N : NoPeak only valid for BW tests"},
		{[]string{"write_bw", "-C"}, "-C : Available only on Latency tests"},
		{[]string{"write_bw", "-H"}, "-H : Available only on Latency tests"},
		{[]string{"write_bw", "-U"}, "-U : is Available only on Latency tests"},
		{[]string{"write_bw", "-e"}, "-e : Events feature not available on WRITE verb"},
		{[]string{"send_bw", "-e", "-D", "4"}, "Duration mode doesn't work with events."},
		{[]string{"read_bw", "-e", "--run_infinitely"}, "run_infinitely does not support events feature yet."},
		{[]string{"write_bw", "-Q", "0"}, "-Q 0: CQ moderation should be between 1 and 1024"},
		{[]string{"write_bw", "-Q", "2000"}, "-Q 2000: CQ moderation should be between 1 and 1024"},
		{[]string{"write_bw", "-S", "16"}, "-S 16: Only 15 Service levels"},
		{[]string{"write_bw", "-c", "XX"}, "-c XX: Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}"},
		{[]string{"write_bw", "-c", "UD"}, "-c UD: UD connection only possible in SEND verb"},
		{[]string{"read_bw", "-c", "UC"}, "-c UC: UC connection not possible in READ/ATOMIC verbs"},
		{[]string{"write_bw", "-c", "UC", "-R"}, "UC is not supported in librdmacm"},
		{[]string{"write_bw", "--output=foo"}, "--output foo: Invalid verbosity level output flag. Please use bandwidth, latency, message_rate"},
		{[]string{"write_bw", "--output=latency"}, "--output latency: Output verbosity level for BW can be: bandwidth, message_rate"},
		{[]string{"write_lat", "--output=bandwidth"}, "--output bandwidth: Output verbosity level for LAT can be: latency"},
		{[]string{"write_bw", "-D", "4", "-f", "2"}, "please check that DURATION > 2*MARGIN"},
		{[]string{"write_bw", "-f", "-1"}, "-f -1: Margin must be non-negative int"},
		{[]string{"write_bw", "-T", "5"}, "-T 5: TOS only valid for rdma_cm based QP and RawEth QP"},
		{[]string{"write_bw", "-R", "-T", "256"}, "-T 256: TOS should be between 0 and 255"},
		{[]string{"write_bw", "-I", "913"}, "-I 913: Max inline should be between 0 and 912"},
		{[]string{"write_bw", "-I", "-1"}, "-I -1: Max inline should be between 0 and 912"},
		{[]string{"read_bw", "-I", "0"}, "-I 0: Inline feature not available on READ/Atomic verbs"},
		{[]string{"atomic_lat", "-I", "8"}, "-I 8: Inline feature not available on READ/Atomic verbs"},
	} {
		_, err := runPerfCmd(t, append(c.args, "10.9.0.1")...)
		if cli.ExitCode(err) != cli.ExitFailed || err == nil || err.Error() != c.want {
			t.Errorf("%q: exit %d (%v), want 1 and %q", c.args, cli.ExitCode(err), err, c.want)
		}
	}
	o, err := runPerfCmd(t, "write_bw", "-Q", "4", "-N", "-u", "16", "-S", "15", "-c", "RC", "--output=bandwidth", "10.9.0.1")
	if err != nil || o.CQModeration != 4 || !o.SkipPeak || o.QPTimeout == nil || *o.QPTimeout != 16 || o.SL != 15 || o.Output != "bandwidth" {
		t.Errorf("-Q 4 -N -u 16 -S 15 -c RC --output=bandwidth: %v, %+v", err, o)
	}
	for _, test := range []string{"send_bw", "read_bw", "atomic_bw"} {
		if o, err := runPerfCmd(t, test, "-e", "10.9.0.1"); err != nil || !o.Events {
			t.Errorf("%s -e: %v, %+v", test, err, o)
		}
		if o, err := runPerfCmd(t, test, "-b", "10.9.0.1"); err != nil || !o.Bidirectional {
			t.Errorf("%s -b: %v, %+v", test, err, o)
		}
	}
	// rdmactl's own bounds of --tclass are usage errors
	for _, args := range [][]string{{"write_bw", "--tclass", "256"}, {"write_bw", "-R", "--tclass", "8"}} {
		if _, err := runPerfCmd(t, append(args, "10.9.0.1")...); cli.ExitCode(err) != cli.ExitUsage || !strings.HasPrefix(fmt.Sprint(err), "--tclass") {
			t.Errorf("%q: exit %d (%v), want 2 and a line about --tclass", args, cli.ExitCode(err), err)
		}
	}
	// and of -W's names
	if _, err := runPerfCmd(t, "write_bw", "-W", "../../x", "10.9.0.1"); cli.ExitCode(err) != cli.ExitUsage || !strings.HasPrefix(fmt.Sprint(err), `-W "../../x"`) {
		t.Errorf("-W ../../x: exit %d (%v), want 2 and a line about -W", cli.ExitCode(err), err)
	}
	o, err = runPerfCmd(t, "write_bw", "-W", "hw_counters/sent_pkts,counters/port_xmit_data", "10.9.0.1")
	if err != nil || o.ReportCounters != "hw_counters/sent_pkts,counters/port_xmit_data" {
		t.Errorf("-W hw_counters/sent_pkts,counters/port_xmit_data: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "write_bw", "-R", "-T", "96", "10.9.0.1")
	if err != nil || o.TOS == nil || *o.TOS != 96 {
		t.Errorf("write_bw -R -T 96: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "write_bw", "--tclass", "106", "10.9.0.1")
	if err != nil || o.TrafficClass != 106 || o.TOS != nil {
		t.Errorf("write_bw --tclass 106: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "read_bw", "-b", "--report-both", "10.9.0.1")
	if err != nil || !o.Bidirectional || !o.ReportBoth {
		t.Errorf("read_bw -b --report-both: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "send_bw", "-c", "UC", "10.9.0.1")
	if err != nil || o.Conn != rdma.QPTypeUC {
		t.Errorf("send_bw -c UC: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "send_lat", "-c", "UD", "10.9.0.1")
	if err != nil || o.Conn != rdma.QPTypeUD {
		t.Errorf("send_lat -c UD: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "send_lat", "-C", "10.9.0.1")
	if err != nil || !o.Cycles {
		t.Errorf("send_lat -C: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "send_lat", "--inline_size=236", "10.9.0.1")
	if err != nil || o.InlineSize != 236 {
		t.Errorf("send_lat --inline_size=236: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "write_bw", "-l", "4", "-n", "100", "10.9.0.1")
	if err != nil || o.PostList != 4 {
		t.Errorf("-l 4: %v, %+v", err, o)
	}
	o, err = runPerfCmd(t, "send_lat", "-H", "-U", "-e", "10.9.0.1")
	if err != nil || !o.Histogram || !o.Unsorted || !o.Events {
		t.Errorf("send_lat -H -U -e: %v, %+v", err, o)
	}
}

// TestPerfVersionAsPerftest: -V prints perftest's version line and exits
// 1, as ib_write_bw -V does.
func TestPerfVersionAsPerftest(t *testing.T) {
	var out, errOut bytes.Buffer
	root := newCmdRoot(&cli.Factory{IO: cli.Test(nil, &out, &errOut), Version: "test"})
	root.SetArgs([]string{"perf", "-V"})
	err := root.Execute()
	if cli.ExitCode(err) != cli.ExitFailed || !cli.IsSilent(err) || out.String() != "Version: 6.06\n" {
		t.Errorf("perf -V: exit %d (%v), stdout %q", cli.ExitCode(err), err, out.String())
	}
}

// TestPerfHelpShowsSwitchesBare: the switches' parsing value, a NUL,
// stays out of perf's help; they read as plain options there.
func TestPerfHelpShowsSwitchesBare(t *testing.T) {
	var out bytes.Buffer
	root := newCmdRoot(&cli.Factory{IO: cli.Test(nil, &out, &bytes.Buffer{}), Version: "test"})
	root.SetArgs([]string{"perf", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	if !strings.Contains(help, "-b, --bidirectional ") || strings.Contains(help, "[=") || strings.Contains(help, "\x00") {
		t.Errorf("perf --help shows the switches with a value:\n%s", help)
	}
	// and parsing still takes them bare afterwards
	if o, err := runPerfCmd(t, "write_bw", "-b", "--report_gbits", "10.9.0.1"); err != nil || !o.Bidirectional || !o.Gbits {
		t.Errorf("-b --report_gbits after help: %v, %+v", err, o)
	}
}
