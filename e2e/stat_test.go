//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// TestSingleStatEqualsRdmaStatistic: rdmactl stat prints what iproute2's
// rdma statistic show prints, for every device and for one device or port,
// on idle counters and after traffic moved them, and fails in its words;
// --json carries rdma -j's counters.
func TestSingleStatEqualsRdmaStatistic(t *testing.T) {
	compare := func(t *testing.T) {
		for _, c := range []struct {
			rdma, ours []string
		}{
			{[]string{"statistic", "show"}, []string{"stat"}},
			{[]string{"statistic", "show", "link", "rxe0/1"}, []string{"stat", "-d", "rxe0", "-i", "1"}},
			{[]string{"statistic", "show", "link", "rxe1"}, []string{"stat", "-d", "rxe1"}},
			{[]string{"statistic", "show", "link", "rxe0/2"}, []string{"stat", "-d", "rxe0", "-i", "2"}},
			{[]string{"statistic", "show", "link", "mlx5_0"}, []string{"stat", "-d", "mlx5_0"}},
		} {
			real := run(t, 30*time.Second, "rdma", c.rdma...)
			ours := run(t, 30*time.Second, rdmactl, c.ours...)
			sameResult(t, "rdmactl "+strings.Join(c.ours, " "), real, ours)
		}
	}
	t.Run("idle", compare)
	t.Run("json", func(t *testing.T) {
		// rdma -j prints [{"ifname","port",COUNTER:VALUE…}]; ours carries
		// the same counters under ports[].hw_counters, in the same order.
		real := run(t, 30*time.Second, "rdma", "-j", "statistic", "show")
		ours := run(t, 30*time.Second, rdmactl, "stat", "--json")
		if err := schema.Validate("stat", []byte(ours.Stdout)); err != nil || ours.Code != 0 {
			t.Fatalf("stat --json: exit %d, %v\n%s", ours.Code, err, ours.Stdout)
		}
		var doc struct {
			Ports []struct {
				Device string          `json:"device"`
				Port   int             `json:"port"`
				HW     json.RawMessage `json:"hw_counters"`
			} `json:"ports"`
		}
		if err := json.Unmarshal([]byte(ours.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, obj := range regexp.MustCompile(`\{"ifname":"(\w+)","port":(\d+),([^}]*)\}`).FindAllStringSubmatch(real.Stdout, -1) {
			want = append(want, obj[1]+"/"+obj[2]+" {"+obj[3]+"}")
		}
		var got []string
		for _, p := range doc.Ports {
			got = append(got, fmt.Sprintf("%s/%d %s", p.Device, p.Port, p.HW))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) != 2 {
			t.Errorf("stat --json's hw_counters\n%s\nrdma -j statistic show\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	// traffic on rxe0: the counters are no longer zero
	flags := []string{"-a", "10.9.0.1", "-C", "20"}
	if _, cli := pingPair(t, rdmactl, rdmactl, flags, flags, freshPort()); cli.Code != 0 {
		t.Fatalf("ping: %+v", cli)
	}
	moved := run(t, 30*time.Second, "rdma", "statistic", "show", "link", "rxe0/1")
	if !regexp.MustCompile(`sent_pkts [1-9]`).MatchString(moved.Stdout) {
		t.Fatalf("a ping moved no counter of rxe0: %s", moved.Stdout)
	}
	t.Run("after-traffic", compare)
	t.Run("prom", func(t *testing.T) {
		// the textfile parses, and rxe0's sent_pkts is there under
		// node_exporter's name with the value rdma prints (idle now)
		file := filepath.Join(t.TempDir(), "rdma.prom")
		ours := run(t, 30*time.Second, rdmactl, "stat", "--prom", file)
		real := run(t, 30*time.Second, "rdma", "statistic", "show", "link", "rxe0/1")
		if ours.Code != 0 || ours.Stdout != "" {
			t.Fatalf("stat --prom: %+v", ours)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var p expfmt.TextParser
		fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		sent := fams["node_infiniband_port_packets_transmitted_total"]
		m := regexp.MustCompile(`sent_pkts (\d+) `).FindStringSubmatch(real.Stdout)
		rxe0 := ""
		for _, metric := range sent.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "device" && l.GetValue() == "rxe0" {
					rxe0 = strconv.FormatFloat(metric.GetCounter().GetValue(), 'f', -1, 64)
				}
			}
		}
		if sent == nil || sent.GetHelp() == "" || m == nil || len(sent.Metric) != 2 || rxe0 != m[1] {
			t.Errorf("sent_pkts %v (rxe0's %q), rdma says %q\n%s", sent, rxe0, m, b)
		}
	})
}

// watchLine is one JSON line of stat --watch --json.
type watchLine struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	Counters        []struct {
		Device    string  `json:"device"`
		Port      int     `json:"port"`
		Counter   string  `json:"counter"`
		Kind      string  `json:"kind"`
		Delta     uint64  `json:"delta"`
		PerSecond float64 `json:"per_second"`
	} `json:"counters"`
}

// busyRates is counter's rate on dev's port 1 in the intervals where it
// moved, without the first and last of them (part of each had no traffic).
func busyRates(t *testing.T, lines []watchLine, dev, counter string) []float64 {
	t.Helper()
	var rates []float64
	for _, l := range lines {
		for _, c := range l.Counters {
			if c.Device == dev && c.Port == 1 && c.Counter == counter && c.Delta > 0 {
				rates = append(rates, c.PerSecond)
			}
		}
	}
	if len(rates) < 3 {
		t.Fatalf("%s moved in %d intervals only: %v", counter, len(rates), rates)
	}
	return rates[1 : len(rates)-1]
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestSingleStatWatchFollowsPerf: while perf write_bw runs on rxe0, stat
// --watch 1 --json shows sent_pkts and rcvd_pkts rising at the packet rate
// perf's message rate makes (one packet per path MTU of each message,
// within 20%; perf's own ACKs add one packet in 64), each line valid against its schema; SIGINT ends the watch
// with exit 0.
func TestSingleStatWatchFollowsPerf(t *testing.T) {
	gid := gidIndexOf(t, "rxe0", "10.9.0.1")
	watch := start(t, 3*time.Minute, rdmactl, "stat", "-d", "rxe0", "--watch", "1", "--json")
	perfPort++
	common := []string{"perf", "write_bw", "-d", "rxe0", "-x", gid, "-s", "65536", "-D", "8", "-p", fmt.Sprint(perfPort)}
	srv := start(t, 3*time.Minute, rdmactl, common...)
	waitTCPListen(t, perfPort)
	cli := run(t, 3*time.Minute, rdmactl, append(common, "--json", "10.9.0.1")...)
	if s := srv.wait(t); cli.Code != 0 || s.Code != 0 {
		t.Fatalf("perf: server %+v\nclient %+v", s, cli)
	}
	time.Sleep(1500 * time.Millisecond) // one quiet interval closes the busy ones
	if err := watch.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	w := watch.wait(t)
	if w.Code != 0 || w.Stderr != "" {
		t.Fatalf("stat --watch after SIGINT: exit %d, stderr %q", w.Code, w.Stderr)
	}

	var perf struct {
		MTU       int `json:"path_mtu"`
		Bandwidth []struct {
			Bytes float64 `json:"bytes"`
			BWAvg float64 `json:"bw_average"` // MB/s, MB = 2^20 bytes
		} `json:"bandwidth"`
		BWUnit string `json:"bw_unit"`
	}
	if err := json.Unmarshal([]byte(cli.Stdout), &perf); err != nil || len(perf.Bandwidth) != 1 || perf.MTU == 0 || perf.BWUnit != "MB/sec" {
		t.Fatalf("perf --json: %v\n%s", err, cli.Stdout)
	}
	row := perf.Bandwidth[0]
	msgRate := row.BWAvg * (1 << 20) / row.Bytes
	want := msgRate * math.Ceil(row.Bytes/float64(perf.MTU))

	var lines []watchLine
	for _, l := range strings.Split(strings.TrimSuffix(w.Stdout, "\n"), "\n") {
		if err := schema.Validate("stat-line", []byte(l)); err != nil {
			t.Errorf("against its schema: %v\n%s", err, l)
		}
		var wl watchLine
		if err := json.Unmarshal([]byte(l), &wl); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		lines = append(lines, wl)
	}
	for _, counter := range []string{"sent_pkts", "rcvd_pkts"} {
		rates := busyRates(t, lines, "rxe0", counter)
		got := median(rates)
		t.Logf("%s: %.0f/s (median of %v); perf: %.2f MB/s, %.0f messages/s of %.0f bytes at MTU %d = %.0f packets/s", counter, got, rates, row.BWAvg, msgRate, row.Bytes, perf.MTU, want)
		if got < 0.8*want || got > 1.2*want {
			t.Errorf("%s rose at %.0f/s, perf's rate makes %.0f/s: more than 20%% apart", counter, got, want)
		}
	}
}

// TestTwoHostsStatRetriesUnderLoss: with netem dropping 5% of what each
// host sends, a ping from B to A still passes, and its report says it passed
// with retries, naming the counter that rose (words with --stats, the
// port_counters member with --json); doctor on A, run during the pings,
// warns that an error counter is rising and says what it means.
func TestTwoHostsStatRetriesUnderLoss(t *testing.T) {
	if r := run(t, time.Minute, "modprobe", "sch_netem"); r.Code != 0 {
		t.Fatalf("modprobe sch_netem: %+v", r)
	}
	if r := run(t, time.Minute, "tc", "qdisc", "add", "dev", "eth0", "root", "netem", "loss", "5%"); r.Code != 0 {
		t.Fatalf("tc qdisc add dev eth0 root netem loss 5%%: %+v", r)
	}
	t.Cleanup(func() { _ = exec.Command("tc", "qdisc", "del", "dev", "eth0", "root").Run() })
	// And on B's side: whose packets a lost ACK or request was decides
	// which host counts the retry, and B's report reads B's counters.
	if r := remote(t, time.Minute, "modprobe sch_netem && tc qdisc add dev eth0 root netem loss 5%"); r.Code != 0 {
		t.Fatalf("netem on B: %+v", r)
	}
	t.Cleanup(func() { remote(t, time.Minute, "tc qdisc del dev eth0 root") })

	// Each side bounds its waits: a stalled step then ends the run with
	// rdmactl's message naming it, where the server used to wait for a
	// disconnect until the test's limit killed it.
	lossyPing := func(extra string) (*background, *background) {
		port := freshPort()
		flags := []string{"-a", "10.9.1.1", "-C", "50", "-p", fmt.Sprint(port), "--timeout", "60s"}
		srv := start(t, 5*time.Minute, rdmactl, append([]string{"ping", "-s"}, flags...)...)
		waitListening(t, port)
		cli := start(t, 5*time.Minute, labRemote, "timeout 280 "+shellJoin(append([]string{rdmactl, "ping", "-c", extra}, flags...)))
		return srv, cli
	}

	srv, cli := lossyPing("--stats")
	warning := ""
	for deadline := time.Now().Add(90 * time.Second); warning == "" && time.Now().Before(deadline); {
		d := run(t, time.Minute, rdmactl, "doctor", "--json")
		var doc struct {
			Checks []struct {
				Check, Status, Message, Hint string
			} `json:"checks"`
		}
		if err := json.Unmarshal([]byte(d.Stdout), &doc); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, d.Stdout)
		}
		for _, c := range doc.Checks {
			if c.Check == "port-counters" && c.Status == "warn" {
				warning = c.Message + " / hint: " + c.Hint
			}
		}
	}
	c, s := cli.wait(t), srv.wait(t)
	if c.Code != 0 || s.Code != 0 {
		t.Fatalf("ping under 5%% loss: client %+v\nserver %+v", c, s)
	}
	t.Logf("client:\n%s", c.Stdout)
	named := regexp.MustCompile(`(?m)^passed with retries: rxe0/1 (\w+) \+\d+ \(`).FindStringSubmatch(c.Stdout)
	if named == nil {
		t.Errorf("a ping that passed under 5%% loss does not say it passed with retries:\n%s", c.Stdout)
	}
	t.Logf("doctor: %s", warning)
	if !regexp.MustCompile(`^error counters rising now \(two reads 1s apart\): rxe0/1 \w+ \+\d+ \(.+\) / hint: .*rdmactl stat --watch`).MatchString(warning) {
		t.Errorf("doctor on A during the lossy pings gave no warning naming a rising counter: %q", warning)
	}

	srv, cli = lossyPing("--json")
	c, s = cli.wait(t), srv.wait(t)
	if err := schema.Validate("ping", []byte(c.Stdout)); err != nil {
		t.Errorf("ping --json against its schema: %v", err)
	}
	var doc struct {
		OK           bool `json:"ok"`
		PortCounters *struct {
			Retries bool `json:"retries"`
			Rose    []struct {
				Counter string `json:"counter"`
				Delta   int    `json:"delta"`
				Meaning string `json:"meaning"`
			} `json:"rose"`
		} `json:"port_counters"`
	}
	if err := json.Unmarshal([]byte(c.Stdout), &doc); err != nil || c.Code != 0 {
		t.Fatalf("ping --json under loss: exit %d, %v\n%s%s", c.Code, err, c.Stdout, c.Stderr)
	}
	if pc := doc.PortCounters; !doc.OK || pc == nil || !pc.Retries || len(pc.Rose) == 0 || pc.Rose[0].Delta <= 0 || pc.Rose[0].Meaning == "" {
		t.Errorf("ping --json under loss: %s", c.Stdout)
	}
}
