package smoke

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report for a person: one row per peer (and one for
// the local checks), the failed check's hint under it. A BW column (the
// write_bw check's average) appears when a check measured bandwidth.
func WriteTable(w io.Writer, r Report) error {
	withBW := false
	for _, p := range r.Peers {
		for _, c := range p.Checks {
			withBW = withBW || c.BW != nil
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(tableHeader(withBW), "\t"))
	if len(r.Local) > 0 {
		fmt.Fprintln(tw, strings.Join(tableRow(localName, r.Local, allOK(r.Local), withBW), "\t"))
	}
	for _, p := range r.Peers {
		fmt.Fprintln(tw, strings.Join(tableRow(p.Peer, p.Checks, p.OK, withBW), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeFailures(w, r)
}

// localName is the table's name for the local checks.
const localName = "(local)"

func tableHeader(withBW bool) []string {
	head := []string{"PEER", "CHECKS", "RTT p50", "RTT p99"}
	if withBW {
		head = append(head, "BW")
	}
	return append(head, "VERDICT")
}

// tableRow is one row's cells, in tableHeader's columns.
func tableRow(name string, checks []Result, ok, withBW bool) []string {
	p50, p99, bw := "-", "-", "-"
	for _, c := range checks {
		if c.RTT != nil && c.RTT.Count > 0 {
			p50, p99 = fmtSeconds(c.RTT.P50), fmtSeconds(c.RTT.P99)
		}
		if c.BW != nil {
			bw = strconv.FormatFloat(c.BW.AvgMBps, 'f', 2, 64) + " MB/s"
		}
	}
	row := []string{name, checkSummary(checks), p50, p99}
	if withBW {
		row = append(row, bw)
	}
	return append(row, verdict(ok))
}

// writeFailures prints, under the table, each failed check with its hint
// in the table's order, then the summary line.
func writeFailures(w io.Writer, r Report) error {
	failures := func(name string, checks []Result) {
		for _, c := range checks {
			if c.OK || c.Skipped {
				continue
			}
			fmt.Fprintf(w, "%s: %s: %s\n", name, c.Check, c.Message)
			if c.Hint != "" {
				fmt.Fprintf(w, "%s: hint: %s\n", name, c.Hint)
			}
		}
	}
	failures(localName, r.Local)
	for _, p := range r.Peers {
		failures(p.Peer, p.Checks)
	}
	_, err := fmt.Fprintf(w, "%s\n", summaryLine(r))
	return err
}

// checkSummary lists each check's mark; a long list of passes (the local
// checks) is counted instead.
func checkSummary(checks []Result) string {
	if len(checks) > 3 && allOK(checks) {
		return fmt.Sprintf("%d checks ok", len(checks))
	}
	parts := make([]string, 0, len(checks))
	for _, c := range checks {
		mark := "ok"
		switch {
		case c.Skipped:
			mark = "skip"
		case !c.OK:
			mark = "FAIL"
		}
		parts = append(parts, c.Check+":"+mark)
	}
	return strings.Join(parts, " ")
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

func summaryLine(r Report) string {
	failed := 0
	for _, p := range r.Peers {
		if !p.OK {
			failed++
		}
	}
	s := fmt.Sprintf("%d of %d peers passed", len(r.Peers)-failed, len(r.Peers))
	if !allOK(r.Local) {
		s += "; local checks failed"
	}
	return s
}

func fmtSeconds(s float64) string {
	return strconv.FormatFloat(s*1e3, 'f', 3, 64) + " ms"
}

// JUnit XML, the subset Jenkins, GitLab and GitHub's test reporters read:
// one testsuite per peer, one testcase per check. Viewers split a
// classname at its dots into package and class, so the classname is
// rdmactl.smoke.local or rdmactl.smoke.peer and the peer's address goes in
// the suite's and the case's names.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes the report as JUnit XML.
func WriteJUnit(w io.Writer, r Report) error {
	doc := junitSuites{Name: "rdmactl smoke"}
	add := func(name, class string, checks []Result) {
		s := junitSuite{Name: name}
		var total float64
		for _, c := range checks {
			tc := junitCase{Name: c.Check, ClassName: "rdmactl.smoke." + class, Time: seconds(c.Seconds)}
			if class == "peer" {
				tc.Name = c.Check + " " + name
			}
			switch {
			case c.Skipped:
				tc.Skipped = &junitSkipped{Message: c.Message}
				s.Skipped++
			case !c.OK:
				text := c.Message
				if c.Hint != "" {
					text += "\nhint: " + c.Hint
				}
				tc.Failure = &junitFailure{Message: c.Message, Text: text}
				s.Failures++
			}
			total += c.Seconds
			s.Tests++
			s.Cases = append(s.Cases, tc)
		}
		s.Time = seconds(total)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if len(r.Local) > 0 {
		add("local", "local", r.Local)
	}
	for _, p := range r.Peers {
		add(p.Peer, "peer", p.Checks)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// WritePrometheus writes the report in the text exposition format that
// node_exporter's textfile collector reads: a verdict per peer and check,
// the check's duration, the ping's round-trip quantiles and, with --bw,
// the write_bw check's bandwidth.
func WritePrometheus(w io.Writer, r Report) error {
	var b strings.Builder
	type sample struct {
		labels string
		value  float64
	}
	metrics := map[string][]sample{}
	put := func(name, labels string, v float64) {
		metrics[name] = append(metrics[name], sample{labels, v})
	}
	for _, p := range r.Peers {
		peer := `peer="` + escapeLabel(p.Peer) + `"`
		put("rdmactl_smoke_ok", "{"+peer+"}", boolValue(p.OK))
		for _, c := range p.Checks {
			labels := "{" + peer + `,check="` + escapeLabel(c.Check) + `"}`
			put("rdmactl_smoke_check_ok", labels, boolValue(c.OK))
			put("rdmactl_smoke_check_duration_seconds", labels, c.Seconds)
			if c.RTT != nil && c.RTT.Count > 0 {
				put("rdmactl_ping_rtt_seconds", "{"+peer+`,quantile="0.5"}`, c.RTT.P50)
				put("rdmactl_ping_rtt_seconds", "{"+peer+`,quantile="0.99"}`, c.RTT.P99)
				put("rdmactl_ping_rtt_seconds", "{"+peer+`,quantile="1"}`, c.RTT.Max)
				put("rdmactl_ping_rtt_seconds_sum", "{"+peer+"}", c.RTT.Sum)
				put("rdmactl_ping_rtt_seconds_count", "{"+peer+"}", float64(c.RTT.Count))
			}
			if c.BW != nil {
				put("rdmactl_smoke_write_bw_bytes_per_second", "{"+peer+"}", c.BW.BytesPerSecond)
			}
		}
	}
	put("rdmactl_smoke_local_ok", "", boolValue(allOK(r.Local)))
	if !r.Start.IsZero() {
		put("rdmactl_smoke_last_run_timestamp_seconds", "", float64(r.Start.Add(r.Duration).UnixMilli())/1e3)
		put("rdmactl_smoke_last_run_duration_seconds", "", r.Duration.Seconds())
	}

	help := map[string][2]string{
		"rdmactl_smoke_ok":                         {"gauge", "1 when every smoke check against the peer passed."},
		"rdmactl_smoke_check_ok":                   {"gauge", "1 when the smoke check passed."},
		"rdmactl_smoke_check_duration_seconds":     {"gauge", "How long the smoke check took."},
		"rdmactl_ping_rtt_seconds":                 {"summary", "Round-trip time of rping-protocol pings to the peer."},
		"rdmactl_smoke_local_ok":                   {"gauge", "1 when every local smoke check passed."},
		"rdmactl_smoke_write_bw_bytes_per_second":  {"gauge", "Average bandwidth of the smoke write_bw check (64 KiB RDMA writes) to the peer."},
		"rdmactl_smoke_last_run_timestamp_seconds": {"gauge", "When the smoke run that wrote this file ended, in seconds since the epoch (alert when it grows old)."},
		"rdmactl_smoke_last_run_duration_seconds":  {"gauge", "How long the smoke run that wrote this file took."},
	}
	names := make([]string, 0, len(metrics))
	for name := range metrics {
		if !strings.HasPrefix(name, "rdmactl_ping_rtt_seconds_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		h := help[name]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, h[1], name, h[0])
		for _, s := range metrics[name] {
			fmt.Fprintf(&b, "%s%s %s\n", name, s.labels, strconv.FormatFloat(s.value, 'g', -1, 64))
		}
		if name == "rdmactl_ping_rtt_seconds" {
			for _, suffix := range []string{"_sum", "_count"} {
				for _, s := range metrics[name+suffix] {
					fmt.Fprintf(&b, "%s%s%s %s\n", name, suffix, s.labels, strconv.FormatFloat(s.value, 'g', -1, 64))
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func boolValue(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
