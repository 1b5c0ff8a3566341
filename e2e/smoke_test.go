//go:build e2e

package e2e

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// smokeDoc is the part of `rdmactl smoke --json` the tests read.
type smokeDoc struct {
	SchemaVersion int  `json:"schema_version"`
	OK            bool `json:"ok"`
	Local         []smokeCheck
	Peers         []struct {
		Peer   string       `json:"peer"`
		OK     bool         `json:"ok"`
		Checks []smokeCheck `json:"checks"`
	} `json:"peers"`
}

type smokeCheck struct {
	Check   string `json:"check"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
	RTT     *struct {
		Count int     `json:"count"`
		P50   float64 `json:"p50_seconds"`
	} `json:"rtt"`
}

func parseSmoke(t *testing.T, r result) smokeDoc {
	t.Helper()
	var doc smokeDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("smoke --json stdout is not one JSON document: %v\n%s\nstderr: %s", err, r.Stdout, r.Stderr)
	}
	if doc.SchemaVersion != 2 {
		t.Errorf("schema_version %d, want 2", doc.SchemaVersion)
	}
	return doc
}

// server is a running `rdmactl serve`.
type server struct {
	*background
	t *testing.T
}

// startServe starts rdmactl serve with args and waits until both of its
// listeners are up.
func startServe(t *testing.T, cmPort, tcpPort int, args ...string) *server {
	t.Helper()
	args = append([]string{"serve", "--port", fmt.Sprint(cmPort), "--tcp-port", fmt.Sprint(tcpPort)}, args...)
	s := &server{background: start(t, 15*time.Minute, rdmactl, args...), t: t}
	waitListening(t, cmPort)
	waitTCPListen(t, tcpPort)
	return s
}

// stop sends SIGTERM and returns what serve did; it must exit 0 quickly.
func (s *server) stop() result {
	s.t.Helper()
	begin := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatalf("SIGTERM: %v", err)
	}
	r := s.wait(s.t)
	if took := time.Since(begin); took > 10*time.Second {
		s.t.Errorf("serve took %v to stop after SIGTERM", took)
	}
	if r.Code != 0 {
		s.t.Errorf("serve exited %d after SIGTERM:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// rss is the resident set of pid in KiB.
func rss(t *testing.T, pid int) int {
	t.Helper()
	return procStatusKiB(t, pid, "VmRSS")
}

// procStatusKiB is a KiB field of /proc/pid/status (VmRSS, VmHWM).
func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no %s for %d", field, pid)
	return 0
}

// noRDMALeft fails when a QP other than the GSI ones or any cm_id is left.
func noRDMALeft(t *testing.T) {
	t.Helper()
	qp, _ := exec.Command("rdma", "res", "show", "qp").CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(qp)), "\n") {
		if line != "" && !strings.Contains(line, "type GSI") {
			t.Errorf("QP left behind: %s", line)
		}
	}
	if cm, _ := exec.Command("rdma", "res", "show", "cm_id").CombinedOutput(); strings.TrimSpace(string(cm)) != "" {
		t.Errorf("cm_id left behind:\n%s", cm)
	}
}

// logLines counts serve's log lines by test and verdict ("ping ok").
func logLines(out string) map[string]int {
	n := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 4 {
			n[f[1]+" "+f[3]]++
		}
	}
	return n
}

// TestSingleServeAnswersRpingDemoAndSmoke: one responder with the default
// ports answers the real rping, an RC demo client and rdmactl smoke; one
// log line each; SIGTERM leaves no QP or cm_id.
func TestSingleServeAnswersRpingDemoAndSmoke(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")

	if r := run(t, time.Minute, "rping", "-c", "-a", "10.9.0.1", "-C", "3", "-V"); r.Code != 0 {
		t.Errorf("rping -c against serve: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := run(t, time.Minute, rdmactl, "demo", "-d", "rxe0", "-g", ownGID(t), "10.9.0.1"); r.Code != 0 || !strings.Contains(r.Stdout, "Contents of server's buffer: 'RDMA read operat") || !strings.Contains(r.Stdout, "test result is 0") {
		t.Errorf("demo client against serve: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := run(t, time.Minute, rdmactl, "--json", "smoke", "10.9.0.1", "-C", "5")
	doc := parseSmoke(t, r)
	if r.Code != 0 || !doc.OK || len(doc.Peers) != 1 || !doc.Peers[0].OK {
		t.Fatalf("smoke --json: exit %d, %+v\n%s", r.Code, doc, r.Stderr)
	}
	for _, c := range doc.Peers[0].Checks {
		if c.Check == "ping" && (c.RTT == nil || c.RTT.Count != 5 || c.RTT.P50 <= 0) {
			t.Errorf("ping check without 5 RTTs: %+v", c)
		}
	}

	out := s.stop()
	lines := logLines(out.Stdout)
	if lines["ping ok"] != 2 || lines["demo ok"] != 2 || len(lines) != 2 {
		t.Errorf("serve log: want 2 ping ok and 2 demo ok lines, got %v:\n%s", lines, out.Stdout)
	}
	if !strings.Contains(out.Stderr, "stopped after") {
		t.Errorf("serve did not report its stop:\n%s", out.Stderr)
	}
	noRDMALeft(t)
}

// TestSingleSmokeDeadPeer: a good and a dead peer; exit 1 well inside 40 s,
// the JSON names both, the dead one failed with a hint, and the JUnit file
// fails exactly the dead peer's cases.
func TestSingleSmokeDeadPeer(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	junit := filepath.Join(t.TempDir(), "f.xml")
	begin := time.Now()
	r := run(t, time.Minute, rdmactl, "smoke", "10.9.0.1", "10.9.0.77", "--timeout", "5s", "--json", "--junit", junit)
	took := time.Since(begin)
	if r.Code != 1 {
		t.Errorf("exit %d, want 1", r.Code)
	}
	if took > 40*time.Second {
		t.Errorf("took %v, want well inside 40 s", took)
	}
	t.Logf("smoke with a dead peer took %v", took)
	doc := parseSmoke(t, r)
	if doc.OK || len(doc.Peers) != 2 || doc.Peers[0].Peer != "10.9.0.1" || doc.Peers[1].Peer != "10.9.0.77" {
		t.Fatalf("peers: %+v", doc.Peers)
	}
	if !doc.Peers[0].OK {
		t.Errorf("the good peer failed: %+v", doc.Peers[0])
	}
	dead := doc.Peers[1]
	hinted := false
	for _, c := range dead.Checks {
		hinted = hinted || (!c.OK && c.Hint != "")
	}
	if dead.OK || !hinted {
		t.Errorf("the dead peer is not failed with a hint: %+v", dead)
	}

	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("JUnit file does not parse: %v\n%s", err, b)
	}
	cases, failedDead, failedOther := 0, 0, 0
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			cases++
			switch {
			case c.Failure != nil && s.Name == "10.9.0.77":
				failedDead++
			case c.Failure != nil:
				failedOther++
				t.Errorf("JUnit: %s/%s failed", s.Name, c.Name)
			}
		}
	}
	if cases < 2 || failedDead == 0 || failedOther != 0 {
		t.Errorf("JUnit: %d testcases, %d failed for the dead peer, %d for others\n%s", cases, failedDead, failedOther, b)
	}
	s.stop()
	noRDMALeft(t)
}

// TestSingleSmokeLoopback: no PEER runs the local checks and a loopback
// against a temporary responder, which leaves nothing behind.
func TestSingleSmokeLoopback(t *testing.T) {
	r := run(t, time.Minute, rdmactl, "smoke", "--json")
	doc := parseSmoke(t, r)
	if r.Code != 0 || !doc.OK || len(doc.Local) == 0 || len(doc.Peers) != 1 || doc.Peers[0].Peer != "10.9.0.1" {
		t.Fatalf("loopback smoke: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// --bw: the temporary responder answers write_bw on a free port too.
	bw := run(t, time.Minute, rdmactl, "smoke", "--bw", "--json")
	if c := smokeChecks(t, bw)["write_bw"]; bw.Code != 0 || !c.OK || c.Bandwidth == nil {
		t.Errorf("loopback smoke --bw: exit %d\n%s%s", bw.Code, bw.Stdout, bw.Stderr)
	}
	noRDMALeft(t)
}

// TestSingleServeUnderLoad: 300 rping-protocol clients in a row, then 8
// smoke clients at once (each an rping-protocol ping and an RC demo); all
// pass, the log has a line for each, RSS stays flat after warm-up
// (checkFlatRSS), and SIGTERM leaves no QP or cm_id.
func TestSingleServeUnderLoad(t *testing.T) {
	const cmPort, tcpPort = 7190, 19890
	s := startServe(t, cmPort, tcpPort, "-a", "10.9.0.1")
	pid := s.cmd.Process.Pid
	// The clients in a row run in this process (pingInProcess); the real
	// rping is the client in the tests above.
	samples := make([]int, 0, flatRSSClients)
	begin := time.Now()
	for i := 0; i < flatRSSClients; i++ {
		if err := pingInProcess(cmPort, 1); err != nil {
			t.Fatalf("sequential client %d: %v", i, err)
		}
		samples = append(samples, rss(t, pid))
	}
	t.Logf("%d sequential rping-protocol clients in %v; serve RSS %d KiB after 20, %d after 100, %d after %d (anonymous %d, files %d)", flatRSSClients, time.Since(begin),
		samples[19], samples[99], samples[flatRSSClients-1], flatRSSClients, procStatusKiB(t, pid, "RssAnon"), procStatusKiB(t, pid, "RssFile"))

	// Between clients only the listeners are left (rping's and the
	// rdma_cm tools' two): no session leaks a cm_id or a QP while serve
	// runs.
	cm, _ := exec.Command("rdma", "res", "show", "cm_id").CombinedOutput()
	ids := strings.Split(strings.TrimSpace(string(cm)), "\n")
	listening := 0
	for _, l := range ids {
		if strings.Contains(l, "state LISTEN") {
			listening++
		}
	}
	if len(ids) != 3 || listening != 3 {
		t.Errorf("after %d clients serve holds %d cm_ids, %d of them listeners, want the 3 listeners:\n%s", flatRSSClients, len(ids), listening, cm)
	}
	if qp, _ := exec.Command("bash", "-c", "rdma res show qp | grep -v 'type GSI'").Output(); len(qp) > 0 {
		t.Errorf("after %d clients serve holds QPs:\n%s", flatRSSClients, qp)
	}

	var wg sync.WaitGroup
	results := make([]result, 8)
	begin = time.Now()
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = run(t, 3*time.Minute, rdmactl, "smoke", "10.9.0.1", "--port", fmt.Sprint(cmPort), "--tcp-port", fmt.Sprint(tcpPort), "-C", "3", "--timeout", "60s")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.Code != 0 {
			t.Errorf("concurrent client %d: exit %d\n%s%s", i, r.Code, r.Stdout, r.Stderr)
		}
	}
	end := rss(t, pid)
	t.Logf("8 concurrent smoke clients in %v; serve RSS %d KiB after them", time.Since(begin), end)
	checkFlatRSS(t, samples)

	out := s.stop()
	lines := logLines(out.Stdout)
	if lines["ping ok"] != flatRSSClients+8 || lines["demo ok"] != 8 || len(lines) != 2 {
		t.Errorf("serve log: want %d ping ok and 8 demo ok, got %v", flatRSSClients+8, lines)
	}
	noRDMALeft(t)
}

// TestTwoHostsSmoke: serve on B, smoke from A passes, with --bw too; with
// serve stopped smoke fails and names the checks that failed.
func TestTwoHostsSmoke(t *testing.T) {
	pidFile := "/tmp/rdmactl-serve.pid"
	remoteServe := fmt.Sprintf("%s serve -a 10.9.1.2 & echo $! >%s; wait $!", rdmactl, pidFile)
	if r := run(t, time.Minute, labRemote, "--bg", "serve", remoteServe); r.Code != 0 {
		t.Fatalf("cannot start serve on B: %+v", r)
	}
	waitRemote := `for i in $(seq 300); do rdma res show cm_id | grep -q 'LISTEN.*:7174 ' && ss -Hltn 'sport = :19875' | grep -q . && exit 0; sleep 0.1; done; exit 1`
	if r := remote(t, time.Minute, waitRemote); r.Code != 0 {
		t.Fatalf("serve on B does not listen: %+v", r)
	}

	r := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.1.2", "--json")
	doc := parseSmoke(t, r)
	if r.Code != 0 || !doc.OK {
		t.Errorf("smoke A -> B with serve on B: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// --bw across the two kernels: write_bw against B's serve on 18515.
	bw := run(t, 2*time.Minute, rdmactl, "smoke", "10.9.1.2", "--bw", "--json")
	if c := smokeChecks(t, bw)["write_bw"]; bw.Code != 0 || !c.OK || c.Bandwidth == nil || c.Bandwidth.AvgMBps < 1 {
		t.Errorf("smoke --bw A -> B: exit %d\n%s%s", bw.Code, bw.Stdout, bw.Stderr)
	} else {
		t.Logf("smoke --bw A -> B: %s", c.Message)
	}

	if r := remote(t, time.Minute, "kill -TERM $(cat "+pidFile+")"); r.Code != 0 {
		t.Fatalf("cannot stop serve on B: %+v", r)
	}
	stopped := run(t, 2*time.Minute, labRemote, "--wait", "serve", "60")
	if n := logLines(stopped.Stdout); stopped.Code != 0 || n["ping ok"] != 2 || n["demo ok"] != 2 || n["write_bw ok"] != 1 {
		t.Errorf("serve on B: exit %d, log:\n%s%s", stopped.Code, stopped.Stdout, stopped.Stderr)
	}
	if r := remote(t, time.Minute, "rdma res show qp | grep -v 'type GSI'; rdma res show cm_id"); strings.TrimSpace(r.Stdout) != "" {
		t.Errorf("serve on B left RDMA resources:\n%s", r.Stdout)
	}

	r = run(t, 2*time.Minute, rdmactl, "smoke", "10.9.1.2", "--json", "--timeout", "5s")
	doc = parseSmoke(t, r)
	if r.Code != 1 || doc.OK || len(doc.Peers) != 1 {
		t.Fatalf("smoke with serve stopped: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	failed := map[string]string{}
	for _, c := range doc.Peers[0].Checks {
		if !c.OK {
			failed[c.Check] = c.Message + " / hint: " + c.Hint
		}
	}
	if _, ok := failed["ping"]; !ok || failed["route"] != "" {
		t.Errorf("want the ping check (not the route) named as failed, got %v", failed)
	}
	t.Logf("failed checks with serve stopped: %v", failed)
}
