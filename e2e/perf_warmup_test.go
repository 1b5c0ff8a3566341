//go:build e2e

package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rxeSentPackets is rxe0 port 1's sent_pkts: in one kernel both sides'
// packets, requests and ACKs.
func rxeSentPackets(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSinglePerfWarmUp: --perform_warm_up adds as many packets to a
// write_bw or read_bw run with rdmactl's client as with perftest's (one
// round of -t requests), perftest's server on the other side; the counter
// is read around runs with and without the flag. The messages are 64 KiB,
// where perftest asks for every completion: with a moderated CQ (smaller
// messages) its warm-up requests go unsignaled and ib_write_bw polls for
// them forever, where rdmactl asks for each.
func TestSinglePerfWarmUp(t *testing.T) {
	for _, test := range []string{"write_bw", "read_bw"} {
		t.Run(test, func(t *testing.T) {
			extra := map[string]int{}
			for _, client := range []string{"perftest", rdmactl} {
				// perfPair runs a pair again when perftest's clock check
				// fails: count the packets of the run that counted.
				var sent [2]int
				var last int
				counting := func(sn string, sa []string, cn string, ca []string) (result, result) {
					before := rxeSentPackets(t)
					srv, cli := singlePair(t)(sn, sa, cn, ca)
					last = rxeSentPackets(t) - before
					return srv, cli
				}
				for i, flags := range [][]string{nil, {"--perform_warm_up"}} {
					srv, cli := perfPair(t, test, "perftest", client, counting, append([]string{"-d", "rxe0", "-x", ownGID(t), "-n", "100", "-t", "32"}, flags...)...)
					checkPerf(t, test, srv, cli)
					sent[i] = last
				}
				extra[client] = sent[1] - sent[0]
				t.Logf("%s client: %d packets without the warm-up, %d with", client, sent[0], sent[1])
			}
			// The round is 32 requests of 64 packets each, with their ACKs
			// or responses; how the ACKs coalesce varies from run to run,
			// either way.
			if p, r := extra["perftest"], extra[rdmactl]; p < 32*64*3/4 || r < 32*64*3/4 || r > p+p/4 || r < p-p/4 {
				t.Errorf("the warm-up added %d packets with perftest's client, %d with rdmactl's", p, r)
			}
		})
	}
}
