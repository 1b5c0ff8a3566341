//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// loseFirstDREQ makes host B lose the next rdma_cm disconnect request it
// sends, silently as a lossy link does: a filter sends CM DREQs (a UD
// SEND to QP 1 whose MAD has class 0x07 and attribute 0x0015) into a
// netem band that loses everything, and a watcher on B takes the filter
// away once the band has lost one, so that the CM's resend passes. (A tc
// drop action would not do: rxe sends a refused packet again at once.)
// It returns the script that arms the watcher, to run in the same remote
// call as the client, since B runs one request at a time.
func loseFirstDREQ(t *testing.T) string {
	t.Helper()
	const setup = "modprobe -a sch_prio sch_netem cls_u32 && " +
		"tc qdisc add dev eth0 root handle 1: prio bands 3 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 && " +
		"tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 100% && " +
		"tc filter add dev eth0 parent 1: protocol ip prio 1 u32 " +
		"match ip protocol 17 0xff match ip dport 4791 0xffff " +
		"match u8 0x64 0xff at 28 match u32 0x00000001 0x00ffffff at 32 " +
		"match u8 0x07 0xff at 49 match u16 0x0015 0xffff at 64 flowid 1:3"
	if r := remote(t, time.Minute, setup); r.Code != 0 {
		t.Fatalf("on B: %s: %+v", setup, r)
	}
	t.Cleanup(func() { remote(t, time.Minute, "tc qdisc del dev eth0 root") })
	return "(for i in $(seq 600); do tc -s qdisc show dev eth0 | grep -A1 'netem 30:' | grep -q 'dropped [1-9]' && break; sleep 0.05; done; " +
		"tc filter del dev eth0 parent 1: prio 1) & "
}

// dreqCounters reads B's CM counters: disconnect requests sent and resent.
func dreqCounters(t *testing.T) (sent, resent int) {
	t.Helper()
	r := remote(t, time.Minute, "cat /sys/class/infiniband/rxe0/ports/1/cm_tx_msgs/dreq /sys/class/infiniband/rxe0/ports/1/cm_tx_retries/dreq")
	m := regexp.MustCompile(`^(\d+)\n(\d+)\n$`).FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("B's CM counters: %+v", r)
	}
	sent, _ = strconv.Atoi(m[1])
	resent, _ = strconv.Atoi(m[2])
	return sent, resent
}

// TestTwoHostsPingLostDisconnectRequest: the client's disconnect request
// is lost on the link. The kernel's CM sends it again after its response
// timeout, but only while the client's id lives: a client that destroys
// it sooner (rping at once, rdmactl's after 2 s before the fix) leaves
// the server waiting for a next ping for ever. rdmactl's client waits
// for the disconnect to finish, so both rdmactl's server and rping's end
// as after any run.
func TestTwoHostsPingLostDisconnectRequest(t *testing.T) {
	for name, server := range map[string]string{"rdmactl-server": rdmactl, "rping-server": "rping"} {
		t.Run(name, func(t *testing.T) {
			watch := loseFirstDREQ(t)
			sent0, resent0 := dreqCounters(t)
			port := freshPort()
			flags := []string{"-a", "10.9.1.1", "-C", "2", "-p", fmt.Sprint(port)}
			args := append(toolArgs(server, "-s"), flags...)
			if server == rdmactl {
				args = append(args, "--timeout", "30s")
			}
			srv := start(t, time.Minute, server, args...)
			waitListening(t, port)
			began := time.Now()
			cli := remote(t, time.Minute, watch+"timeout 50 "+shellJoin(append([]string{rdmactl, "ping", "-c"}, flags...)))
			s := srv.wait(t)
			t.Logf("server ended after %v", time.Since(began).Round(100*time.Millisecond))
			if cli.Code != 0 || cli.Stderr != "client DISCONNECT EVENT...\n" {
				t.Errorf("client: %+v", cli)
			}
			if s.Code != 0 {
				t.Errorf("server: %+v", s)
			}
			if sent, resent := dreqCounters(t); sent-sent0 < 2 || resent-resent0 < 1 {
				t.Errorf("B sent %d disconnect requests, %d of them again: the test needs the first lost and resent", sent-sent0, resent-resent0)
			}
		})
	}
}
