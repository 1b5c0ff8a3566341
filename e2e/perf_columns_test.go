//go:build e2e

package e2e

import (
	"math"
	"strconv"
	"testing"
)

// bwColumns are one row's BW peak, BW average and MsgRate.
type bwColumns [3]float64

// bwRows reads every result row of a bandwidth table.
func bwRows(t *testing.T, out string) []bwColumns {
	t.Helper()
	var rows []bwColumns
	for _, m := range bwRow.FindAllStringSubmatch(out, -1) {
		var c bwColumns
		for i := range c {
			v, err := strconv.ParseFloat(m[3+i], 64)
			if err != nil {
				t.Fatalf("row %q: %v", m[0], err)
			}
			c[i] = v
		}
		rows = append(rows, c)
	}
	return rows
}

// columnsClose is every column of got within 10% of want's (0.00 against
// 0.00 counts as equal: the send_bw server prints no peak).
func columnsClose(got, want bwColumns) bool {
	for i := range got {
		if math.Abs(got[i]-want[i]) > 0.1*math.Max(math.Abs(want[i]), 0.005) {
			return false
		}
	}
	return true
}

// TestSinglePerfColumnsMatchPerftest: on the same run shape, rdmactl's BW
// peak, BW average and MsgRate are perftest's within 10%, as client and as
// server. The shapes moderate the CQ (4096 and 64 bytes: a completion per
// 100 messages), where the peak read 3906250 MB/s. A comparison is tried
// three times against a perftest pair run just before it: the lab's
// timing is noisy, an absurd column is not.
func TestSinglePerfColumnsMatchPerftest(t *testing.T) {
	requireRole(t, "single")
	for _, shape := range []struct {
		test string
		args []string
	}{
		{"write_bw", []string{"-s", "4096", "-n", "100"}},
		{"write_bw", []string{"-s", "64", "-n", "1000"}},
		{"send_bw", []string{"-s", "4096", "-n", "200"}},
	} {
		for _, rdmactlSide := range []string{"client", "server"} {
			t.Run(shape.test+"/"+shape.args[1]+"/rdmactl-"+rdmactlSide, func(t *testing.T) {
				args := append([]string{"-d", "rxe0", "-x", "1"}, shape.args...)
				var got, want bwColumns
				for attempt := 1; attempt <= 3; attempt++ {
					rs, rc := perfPair(t, shape.test, "perftest", "perftest", singlePair(t), args...)
					checkPerf(t, shape.test, rs, rc)
					server, client := "perftest", "rdmactl"
					if rdmactlSide == "server" {
						server, client = "rdmactl", "perftest"
					}
					s, c := perfPair(t, shape.test, server, client, singlePair(t), args...)
					checkPerf(t, shape.test, s, c)
					ref, ours := rc, c
					if rdmactlSide == "server" {
						ref, ours = rs, s
					}
					got, want = bwRows(t, ours.Stdout)[0], bwRows(t, ref.Stdout)[0]
					t.Logf("attempt %d: rdmactl %v, perftest %v", attempt, got, want)
					if columnsClose(got, want) {
						return
					}
				}
				t.Errorf("rdmactl's columns %v are not within 10%% of perftest's %v (peak, average, Mpps)", got, want)
			})
		}
	}
}

// TestSinglePerfAllSizesPeak: with -a the CQ is moderated at every size;
// each size's peak is at least its average and not more than perftest's
// largest peak of the same sweep by more than a factor of 3 (it read up
// to 8000000000 MB/s).
func TestSinglePerfAllSizesPeak(t *testing.T) {
	requireRole(t, "single")
	args := []string{"-d", "rxe0", "-x", "1", "-a", "-n", "5"}
	_, ref := perfPair(t, "write_bw", "perftest", "perftest", singlePair(t), args...)
	srv, ours := perfPair(t, "write_bw", "perftest", "rdmactl", singlePair(t), args...)
	checkPerf(t, "write_bw", srv, ours)
	refPeak := 0.0
	for _, r := range bwRows(t, ref.Stdout) {
		refPeak = math.Max(refPeak, r[0])
	}
	rows := bwRows(t, ours.Stdout)
	if len(rows) != 23 || refPeak == 0 {
		t.Fatalf("%d rows, perftest's largest peak %.2f:\n%s\n%s", len(rows), refPeak, ours.Stdout, ref.Stdout)
	}
	for i, r := range rows {
		if r[0] < 0.99*r[1] || r[0] > 3*refPeak {
			t.Errorf("size %d: BW peak %.2f, average %.2f, perftest's largest peak %.2f", 2<<i, r[0], r[1], refPeak)
		}
	}
}
