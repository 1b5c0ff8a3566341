//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// roceTOSCounter counts, on one host's eth0 egress, the RoCEv2 packets
// (UDP to port 4791) and those among them whose IPv4 TOS byte is tos:
// two u32 filters, the first passing its matches on to the second.
type roceTOSCounter struct {
	tos int
	on  func(script string) result // runs a shell line on the host
}

func (c roceTOSCounter) reset(t *testing.T) {
	t.Helper()
	const roce = "protocol ip u32 match ip protocol 17 0xff match ip dport 4791 0xffff"
	script := "modprobe -a sch_ingress cls_u32 act_gact; tc qdisc del dev eth0 clsact 2>/dev/null; " +
		"tc qdisc add dev eth0 clsact && " +
		fmt.Sprintf("tc filter add dev eth0 egress prio 1 %s match ip tos %#x 0xff action continue && ", roce, c.tos) +
		fmt.Sprintf("tc filter add dev eth0 egress prio 2 %s action ok", roce)
	if r := c.on(script); r.Code != 0 {
		t.Fatalf("%s: %+v", script, r)
	}
	t.Cleanup(func() { c.on("tc qdisc del dev eth0 clsact") })
}

var tcActionSent = regexp.MustCompile(`(?m)^\s*filter protocol ip pref (\d) u32 .*\n(?:.*\n)*?\s*Sent \d+ bytes (\d+) pkt`)

// read returns how many RoCEv2 packets left since reset, and how many of
// them carried the TOS.
func (c roceTOSCounter) read(t *testing.T) (all, withTOS int) {
	t.Helper()
	r := c.on("tc -s filter show dev eth0 egress")
	counts := map[string]int{}
	for _, m := range tcActionSent.FindAllStringSubmatch(r.Stdout, -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	if len(counts) != 2 {
		t.Fatalf("no statistics of both filters in tc's output: %+v", r)
	}
	return counts["2"], counts["1"]
}

// TestTwoHostsPerfTrafficClassOnTheWire: the traffic class that --tclass
// (perftest's GRH traffic class) and -R -T (rdma_cm's TOS) ask for is the
// IPv4 TOS byte of the RoCEv2 packets each side sends, rdmactl's as
// perftest's: write_bw across two kernels, the packets counted on both
// hosts' egress. perftest against itself, in the same boot, gives each
// role's count of packets that leave without it (with -R, perftest's
// exchange: its control connection has no TOS); rdmactl, in each role
// against perftest, must send as many. A run without the flag is the
// control: none of its packets carries that TOS.
func TestTwoHostsPerfTrafficClassOnTheWire(t *testing.T) {
	const tos = 0x68
	onA := roceTOSCounter{tos: tos, on: func(s string) result { return sh(t, time.Minute, s) }}
	onB := roceTOSCounter{tos: tos, on: func(s string) result { return remote(t, time.Minute, s) }}
	cross := func(rdmaCM bool) func(string, []string, string, []string) (result, result) {
		return func(sn string, sa []string, cn string, ca []string) (result, result) {
			onA.reset(t)
			onB.reset(t)
			s := start(t, 4*time.Minute, sn, sa...)
			if rdmaCM {
				waitListening(t, perfPort)
			} else {
				waitTCPListen(t, perfPort)
			}
			cli := remote(t, 4*time.Minute, "timeout 230 "+shellJoin(append(append([]string{cn}, ca...), "10.9.1.1")))
			logFailure(t, "client", cli)
			return s.wait(t), cli
		}
	}
	common := []string{"-d", "rxe0", "-x", ownGID(t), "-n", "100"}
	type sent struct{ all, with int }
	runAndCount := func(t *testing.T, server, client string, rdmaCM bool, flags []string) (srv, cli sent) {
		s, c := perfPair(t, "write_bw", server, client, cross(rdmaCM), append(append([]string{}, common...), flags...)...)
		checkPerf(t, "write_bw", s, c)
		srv.all, srv.with = onA.read(t)
		cli.all, cli.with = onB.read(t)
		t.Logf("%s server on A: %d RoCEv2 packets sent, %d with TOS %#x; %s client on B: %d, %d", server, srv.all, srv.with, tos, client, cli.all, cli.with)
		return srv, cli
	}
	for _, c := range []struct {
		name   string
		rdmaCM bool
		flags  []string
	}{
		{"tclass", false, []string{"--tclass", strconv.Itoa(tos)}},
		{"rdma_cm-T", true, []string{"-R", "-T", strconv.Itoa(tos)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, cli := runAndCount(t, "perftest", "perftest", c.rdmaCM, c.flags)
			want := map[string]sent{"server": srv, "client": cli}
			// The writes' packets, 64 KiB each, and at least one ACK.
			least := map[string]int{"server": 1, "client": 100}
			for _, role := range want {
				if role.with == 0 {
					t.Fatalf("perftest against itself sent no packet with TOS %#x: the filters count wrong", tos)
				}
			}
			for _, roles := range [][2]string{{"perftest", "rdmactl"}, {"rdmactl", "perftest"}} {
				srv, cli := runAndCount(t, roles[0], roles[1], c.rdmaCM, c.flags)
				role, got := "client", cli
				if roles[0] == "rdmactl" {
					role, got = "server", srv
				}
				// ACKs coalesce as they will: allow a few either way.
				w := want[role]
				if got.with < least[role] || abs((got.all-got.with)-(w.all-w.with)) > 3 {
					t.Errorf("rdmactl as %s: %d of its %d RoCEv2 packets carry TOS %#x, %d do not; perftest as %s: %d of %d, %d do not",
						role, got.with, got.all, tos, got.all-got.with, role, w.with, w.all, w.all-w.with)
				}
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		srv, cli := runAndCount(t, rdmactl, rdmactl, false, nil)
		for host, n := range map[string]sent{"A": srv, "B": cli} {
			if n.all == 0 || n.with != 0 {
				t.Errorf("without a traffic class, host %s sent %d RoCEv2 packets, %d with TOS %#x: the filters count wrong", host, n.all, n.with, tos)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
