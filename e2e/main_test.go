//go:build e2e

// Package e2e runs rdmactl against the real tools (rping, ibv_devinfo,
// ibv_devices, rdma) on real Soft-RoCE inside the lab VM.
//
// `go test -tags e2e ./e2e` on the host boots the lab (scripts/lab.sh) once
// per topology and re-runs this same test binary inside it, where LAB_ROLE
// is set. Tests are named after the topology they need: TestSingle* (one VM,
// rxe0+rxe1), TestTwoHosts* (two VMs), TestNoRxe* (one VM, rdma_rxe not
// loaded); the name is the only place a test's topology is chosen, since
// each boot runs only the tests of its prefix. When the lab cannot boot,
// the run fails: it never skips.
//
// E2E_MODES=single,twohosts,norxe picks topologies; E2E_RUN=regexp narrows
// the tests within each (matched after the topology prefix, or used as it
// is when it names whole tests: -run TestSingleJSON); a run whose filter
// selects no lab test fails.
package e2e

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rdmactl is the binary under test, built by the host side of TestMain.
var rdmactl string

type labMode struct {
	name   string // for E2E_MODES
	prefix string // test name prefix
	args   []string
}

var labModes = []labMode{
	{"single", "TestSingle", nil},
	{"twohosts", "TestTwoHosts", []string{"--two-hosts"}},
	{"norxe", "TestNoRxe", []string{"--no-rxe"}},
}

func TestMain(m *testing.M) {
	if os.Getenv("LAB_ROLE") != "" {
		rdmactl = os.Getenv("RDMACTL_BIN")
		if rdmactl == "" {
			fmt.Fprintln(os.Stderr, "e2e: RDMACTL_BIN is not set inside the lab")
			os.Exit(2)
		}
		os.Exit(m.Run())
	}
	os.Exit(runInLab())
}

// runInLab is the host side: build rdmactl, boot each topology, run the
// matching tests inside and add up what they report.
func runInLab() int {
	repo, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	bin := filepath.Join(repo, "bin", "rdmactl-e2e")
	// The release build, as make build and the package make it: its
	// linker settings (no THP for the Go heap) change what RSS tests see.
	build := exec.Command("make", "-s", "build", "BIN="+bin)
	build.Dir, build.Stdout, build.Stderr = repo, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building rdmactl failed:", err)
		return 1
	}
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	modes := map[string]bool{}
	for _, m := range strings.Split(os.Getenv("E2E_MODES"), ",") {
		if m != "" {
			modes[m] = true
		}
	}
	var passed, failed int
	status := 0
	// One topology's tests under emulation. The single VM's are most of
	// the run (perf's option cells against perftest above all); the
	// bound leaves them room on a slower CI machine while the three
	// boots together stay inside the Makefile's -timeout.
	const labTimeout = 60 * time.Minute
	for _, mode := range labModes {
		if len(modes) > 0 && !modes[mode.name] {
			continue
		}
		pattern, ok := modePattern(mode.prefix, labFilter())
		if !ok || !hasTests(self, pattern) {
			continue // no test of this topology matches: do not boot it
		}
		inner := fmt.Sprintf("RDMACTL_BIN=%s %s -test.v -test.count=1 -test.timeout=%s -test.run '%s'", bin, self, labTimeout, pattern)
		args := append([]string{"run", "--timeout", strconv.Itoa(int(labTimeout.Seconds()) + 60)}, mode.args...)
		args = append(args, "--", inner)
		fmt.Printf("=== lab %s: scripts/lab.sh %s\n", mode.name, strings.Join(args, " "))
		cmd := exec.Command(filepath.Join(repo, "scripts", "lab.sh"), args...)
		cmd.Dir, cmd.Stderr = filepath.Join(repo, "e2e"), os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: cannot start the lab:", err)
			return 1
		}
		p, f, ran := countResults(out, os.Stdout)
		passed += p
		failed += f
		if err := cmd.Wait(); err != nil {
			fmt.Printf("--- FAIL: lab %s: %v\n", mode.name, err)
			status = 1
		}
		if !ran {
			fmt.Printf("--- FAIL: lab %s ran no test\n", mode.name)
			status = 1
		}
	}
	fmt.Printf("e2e: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		status = 1
	}
	if passed+failed == 0 {
		// A filter that selects nothing must not read as a green run.
		fmt.Printf("--- FAIL: no e2e test ran (filter %q; matched after a topology's prefix TestSingle/TestTwoHosts/TestNoRxe, or full test names)\n", labFilter())
		status = 1
	}
	return status
}

// labFilter is E2E_RUN, or else the host's own -run: `go test -run Perf`
// runs the Perf tests of every topology that has some.
func labFilter() string {
	if extra := os.Getenv("E2E_RUN"); extra != "" {
		return extra
	}
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil {
		return f.Value.String()
	}
	return ""
}

// modePattern is the -test.run pattern for one topology given the user's
// filter: its alternatives match after the topology's prefix, and a full
// test name (TestSingleX) selects only in its own topology.
func modePattern(prefix, filter string) (string, bool) {
	if filter == "" {
		return "^" + prefix, true
	}
	var alts []string
	for _, alt := range strings.Split(filter, "|") {
		alt = strings.TrimPrefix(alt, "^")
		switch {
		case strings.HasPrefix(alt, prefix):
			alts = append(alts, strings.TrimPrefix(alt, prefix))
		case strings.HasPrefix(alt, "Test"):
			// another topology's test
		default:
			alts = append(alts, alt)
		}
	}
	if len(alts) == 0 {
		return "", false
	}
	return "^" + prefix + ".*(?:" + strings.Join(alts, "|") + ")", true
}

var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL): `)

// countResults copies the inner test output and counts top-level and
// subtest results.
func countResults(r io.Reader, w io.Writer) (passed, failed int, ran bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(w, line)
		if m := resultLine.FindStringSubmatch(line); m != nil {
			ran = true
			if m[1] == "PASS" {
				passed++
			} else {
				failed++
			}
		}
	}
	return passed, failed, ran
}

// hasTests reports whether pattern selects any test of this binary.
func hasTests(self, pattern string) bool {
	cmd := exec.Command(self, "-test.list", pattern)
	cmd.Env = append(os.Environ(), "LAB_ROLE=list", "RDMACTL_BIN=none")
	out, err := cmd.Output()
	return err != nil || strings.Contains(string(out), "Test")
}
