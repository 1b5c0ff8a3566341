//go:build e2e

package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// perftestPort is perftest's default TCP port, where serve answers write_bw.
const perftestPort = 18515

// bwCheck is smoke --json's write_bw check with its bandwidth.
type bwCheck struct {
	Check     string `json:"check"`
	OK        bool   `json:"ok"`
	Message   string `json:"message"`
	Hint      string `json:"hint"`
	Bandwidth *struct {
		Bytes          int     `json:"bytes"`
		Iterations     int     `json:"iterations"`
		AvgMBps        float64 `json:"bw_average_mb_per_sec"`
		BytesPerSecond float64 `json:"bytes_per_second"`
	} `json:"bandwidth"`
}

// smokeChecks returns the checks of the only peer of a smoke --json run.
func smokeChecks(t *testing.T, r result) map[string]bwCheck {
	t.Helper()
	var doc struct {
		Peers []struct {
			Checks []bwCheck `json:"checks"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Peers) != 1 {
		t.Fatalf("smoke --json: %v, %d peers\n%s%s", err, len(doc.Peers), r.Stdout, r.Stderr)
	}
	checks := map[string]bwCheck{}
	for _, c := range doc.Peers[0].Checks {
		checks[c.Check] = c
	}
	return checks
}

// TestSingleSmokeBWAgainstServe: serve with its defaults, smoke --bw passes
// with a write_bw check of a sane bandwidth in JSON, JUnit and Prometheus;
// serve logs the session; without --bw there is no write_bw check.
func TestSingleSmokeBWAgainstServe(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitTCPListen(t, perftestPort)
	dir := t.TempDir()
	junit, prom := filepath.Join(dir, "s.xml"), filepath.Join(dir, "s.prom")
	r := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--bw", "--json", "--junit", junit, "--prom", prom)
	if r.Code != 0 {
		t.Errorf("smoke --bw: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	bw, ok := smokeChecks(t, r)["write_bw"]
	if !ok || !bw.OK || bw.Bandwidth == nil {
		t.Fatalf("no passing write_bw check with a bandwidth:\n%s", r.Stdout)
	}
	// Soft-RoCE under TCG moves tens of MB/s; a result outside 1 MB/s ..
	// 100 GB/s is a broken measurement, not a slow link.
	if b := bw.Bandwidth; b.Bytes != 65536 || b.Iterations < 5 || b.AvgMBps < 1 || b.AvgMBps > 1e5 || b.BytesPerSecond != b.AvgMBps*(1<<20) {
		t.Errorf("write_bw bandwidth %+v", *b)
	}
	t.Logf("smoke --bw: %s", bw.Message)

	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(x, &suites); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			found = found || (c.Name == "write_bw 10.9.0.1" && c.Failure == nil)
		}
	}
	if !found {
		t.Errorf("JUnit has no passing write_bw testcase:\n%s", x)
	}
	p, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	gauge := regexp.MustCompile(`(?m)^rdmactl_smoke_write_bw_bytes_per_second\{peer="10\.9\.0\.1"\} (\S+)$`).FindSubmatch(p)
	if v, _ := strconv.ParseFloat(string(gauge[min(1, len(gauge)-1)]), 64); gauge == nil || v != bw.Bandwidth.BytesPerSecond {
		t.Errorf("Prometheus gauge %q, want %v:\n%s", gauge, bw.Bandwidth.BytesPerSecond, p)
	}

	plain := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1")
	if plain.Code != 0 || strings.Contains(plain.Stdout, "write_bw") || strings.Contains(plain.Stdout, " BW ") {
		t.Errorf("smoke without --bw: exit %d, mentions write_bw:\n%s%s", plain.Code, plain.Stdout, plain.Stderr)
	}
	out := s.stop()
	if n := logLines(out.Stdout)["write_bw ok"]; n != 1 {
		t.Errorf("serve log: %d write_bw ok lines, want 1:\n%s", n, out.Stdout)
	}
	noRDMALeft(t)
}

// TestSingleServePerfWithIbWriteBW: the real perftest client, ib_write_bw,
// against serve on perftest's default port passes; so do two at once (the
// second waits for the first); serve logs the client's own average.
func TestSingleServePerfWithIbWriteBW(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitTCPListen(t, perftestPort)
	one, runs := ibWriteBWClient(t, ownGID(t))
	rows := bwRow.FindStringSubmatch(one.Stdout)
	if one.Code != 0 || rows == nil {
		t.Fatalf("ib_write_bw against serve: exit %d\n%s%s", one.Code, one.Stdout, one.Stderr)
	}
	bwCmd := "ib_write_bw -d rxe0 -x " + ownGID(t) + " -F 10.9.0.1"
	both := sh(t, 4*time.Minute, bwCmd+" >/tmp/bw1.out 2>&1 & a=$!; "+bwCmd+" >/tmp/bw2.out 2>&1; b=$?; wait $a; echo \"$? $b\"; cat /tmp/bw1.out /tmp/bw2.out")
	if !strings.HasPrefix(both.Stdout, "0 0\n") || len(bwRow.FindAllString(both.Stdout, -1)) != 2 {
		t.Errorf("two ib_write_bw clients at once:\n%s%s", both.Stdout, both.Stderr)
	}
	out := s.stop()
	// A client whose clock sampling failed may still have run its session.
	if n := logLines(out.Stdout)["write_bw ok"]; n < 3 || (runs == 1 && n != 3) {
		t.Errorf("serve log: %d write_bw ok lines for %d clients:\n%s", n, runs+2, out.Stdout)
	}
	// serve logs the report the client sent: its own average.
	if want := rows[4] + " MB/sec"; !strings.Contains(out.Stdout, want) {
		t.Errorf("serve log lacks the client's average %q:\n%s", want, out.Stdout)
	}
	noRDMALeft(t)
}

// TestSingleSmokeBWWithoutServePerf: a peer whose serve does not answer on
// the perftest port fails smoke --bw in the write_bw check alone, with a
// hint naming serve; with no serve at all the write_bw check fails too.
func TestSingleSmokeBWWithoutServePerf(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1", "--perf-port", "18599")
	waitTCPListen(t, 18599)
	r := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--bw", "--json")
	if r.Code != 1 {
		t.Errorf("smoke --bw against a peer not answering on 18515: exit %d, want 1", r.Code)
	}
	checks := smokeChecks(t, r)
	bw := checks["write_bw"]
	if bw.OK || !strings.Contains(bw.Hint, "rdmactl serve") || !strings.Contains(bw.Hint, "18515") {
		t.Errorf("write_bw check: %+v", bw)
	}
	for _, name := range []string{"route", "ping", "demo"} {
		if !checks[name].OK {
			t.Errorf("%s failed though serve answers it: %+v", name, checks[name])
		}
	}
	table := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--bw")
	if table.Code != 1 || !strings.Contains(table.Stdout, "10.9.0.1: write_bw: ") || !strings.Contains(table.Stdout, "hint: nothing answered perftest's TCP port 18515") {
		t.Errorf("table: exit %d\n%s%s", table.Code, table.Stdout, table.Stderr)
	}
	s.stop()

	none := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.0.1", "--bw", "--json", "--timeout", "5s")
	if none.Code != 1 {
		t.Errorf("smoke --bw with no serve: exit %d", none.Code)
	}
	if bw := smokeChecks(t, none)["write_bw"]; bw.OK || !strings.Contains(bw.Hint, "rdmactl serve") {
		t.Errorf("write_bw check with no serve: %+v", bw)
	}
	noRDMALeft(t)
}
