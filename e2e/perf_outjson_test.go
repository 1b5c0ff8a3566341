//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// measured are the --out_json keys whose values change from run to run.
var measured = regexp.MustCompile(`(?m)^(BW_peak|BW_average|MsgRate|bw_avg|msgRate_avg|avg_lat|t_min|t_max|t_typical|t_avg|t_stdev|percentile_99|percentile_99\.9|tps_average|CPU_util): -?[0-9.]+(,?)$`)

// durationIters is the count of a -D run's file.
var durationIters = regexp.MustCompile(`(?m)^n_iterations: \d+,$`)

// fineRow is a bandwidth row in perftest's REPORT_FMT_EXT (Gb/sec below 0.1).
var fineRow = regexp.MustCompile(`(?m)^ \d+ +\d+ +\d+\.\d{6} +\d+\.\d{6} +\d+\.\d{6}$`)

// TestSinglePerfOutJSON: --out_json's file, perftest against itself first,
// then each tool in each role: rdmactl's file (its mode too) equals perftest's in the
// same role, measured values masked (a side that prints no row, as
// ib_read_lat's server, writes none). In Gb/sec below 0.1 both print the
// row with six decimals.
func TestSinglePerfOutJSON(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ test, args string }{
		{"write_bw", "-n 20"},
		{"send_bw", "-n 20"},
		{"read_bw", "-n 20"},
		{"atomic_bw", "-n 20 --report_gbits"},
		{"send_lat", "-n 20"},
		{"write_lat", "-n 20"},
		{"read_lat", "-n 20"},
		{"atomic_lat", "-n 20"},
		{"send_lat", "-D 4 -f 1"},
		{"write_bw", "-n 20 --output=bandwidth"},
		{"write_bw", "-n 20 -b --report-both"},
		{"write_bw", "-D 4 -f 1 --cpu_util"},
	} {
		name := c.test + " " + c.args
		files := map[string]string{}
		read := func(role, tool string) string {
			b, err := os.ReadFile(files[role+tool])
			if errors.Is(err, fs.ErrNotExist) {
				return "(no file)"
			}
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(files[role+tool])
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("mode %v\n", st.Mode().Perm()) + measured.ReplaceAllString(string(b), "$1: N$2")
			if strings.HasPrefix(c.args, "-D") { // a timed run counts what it measured
				got = durationIters.ReplaceAllString(got, "n_iterations: N,")
			}
			return got
		}
		for _, roles := range [][2]string{{"perftest", "perftest"}, {"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
			for _, role := range []string{"server", "client"} {
				tool := roles[0]
				if role == "client" {
					tool = roles[1]
				}
				files[role+tool] = filepath.Join(dir, strings.NewReplacer(" ", "_", "=", "_").Replace(name)+"-"+role+"-"+tool+".json")
				os.Remove(files[role+tool])
			}
			args := append([]string{"-d", "rxe0", "-x", ownGID(t), "--out_json"}, strings.Fields(c.args)...)
			srv, cli := perfPairFiles(t, c.test, roles[0], roles[1], files["server"+roles[0]], files["client"+roles[1]], args...)
			if srv.Code != 0 || cli.Code != 0 {
				t.Errorf("%s, %s server, %s client: exit %d and %d\n%s%s\n%s%s", name, roles[0], roles[1], srv.Code, cli.Code, srv.Stdout, srv.Stderr, cli.Stdout, cli.Stderr)
				continue
			}
			if strings.Contains(c.args, "--report_gbits") && !fineRow.MatchString(cli.Stdout) {
				t.Errorf("%s, %s client: no row with six decimals:\n%s", name, roles[1], cli.Stdout)
			}
		}
		for _, role := range []string{"server", "client"} {
			want := read(role, "perftest")
			if got := read(role, "rdmactl"); got != want {
				t.Errorf("%s, the %s's file:\n%s\nperftest's:\n%s", name, role, got, want)
			}
		}
	}
}

// perfPairFiles is perfPair with each side's --out_json_file.
func perfPairFiles(t *testing.T, test, server, client, srvFile, cliFile string, args ...string) (result, result) {
	return perfPair(t, test, server, client, func(sn string, sa []string, cn string, ca []string) (result, result) {
		return singlePair(t)(sn, append(sa, "--out_json_file="+srvFile), cn, append(ca, "--out_json_file="+cliFile))
	}, args...)
}
