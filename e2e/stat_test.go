//go:build e2e

package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSingleStatEqualsRdmaStatistic: rdmactl stat prints what iproute2's
// rdma statistic show prints, for every device and for one device or port,
// on idle counters and after traffic moved them, and fails in its words.
func TestSingleStatEqualsRdmaStatistic(t *testing.T) {
	requireRole(t, "single")
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
}
