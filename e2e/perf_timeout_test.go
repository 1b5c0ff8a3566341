//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSinglePerfTimeoutSilentPeer: on every test, in either role, a peer
// that connects and then says nothing (where perftest would wait forever)
// ends rdmactl's run within --timeout, exit 1, with the bound named and a
// hint.
func TestSinglePerfTimeoutSilentPeer(t *testing.T) {
	const bound = 3 * time.Second
	want := "exchange with the peer failed: exchanging versions: timed out after 3s waiting for the peer (--timeout)"
	check := func(what string, r result, took time.Duration) {
		t.Helper()
		if r.Code != 1 || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "hint: the peer connected but did not answer this step") {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q with its hint", what, r.Code, r.Stderr, want)
		}
		if took > bound+5*time.Second {
			t.Errorf("%s: ended after %v, bound %v", what, took, bound)
		}
	}
	for _, test := range []string{"write_bw", "send_bw", "read_bw", "atomic_bw", "send_lat", "write_lat", "read_lat", "atomic_lat"} {
		args := []string{"perf", test, "-d", "rxe0", "-x", ownGID(t), "--timeout", "3s"}

		silent, _ := silentListener(t)
		begin := time.Now()
		r := run(t, time.Minute, rdmactl, append(args, "-p", fmt.Sprint(silent), "10.9.0.1")...)
		check(test+" client", r, time.Since(begin))

		perfPort++
		s := start(t, time.Minute, rdmactl, append(args, "-p", fmt.Sprint(perfPort))...)
		waitTCPListen(t, perfPort)
		c, err := net.Dial("tcp4", fmt.Sprintf("10.9.0.1:%d", perfPort))
		if err != nil {
			t.Fatalf("%s server: %v", test, err)
		}
		begin = time.Now()
		r = s.wait(t)
		check(test+" server", r, time.Since(begin))
		c.Close()
	}
}

// TestSinglePerfLatencyPeerStops: a peer stopped (SIGSTOP) in the middle
// of write_lat's or send_lat's measured loop ends the other side's run
// within --timeout, exit 1, with the hint that the peer stopped
// answering; perftest would spin for ever.
func TestSinglePerfLatencyPeerStops(t *testing.T) {
	const bound = 3 * time.Second
	for _, test := range []string{"write_lat", "send_lat"} {
		t.Run(test, func(t *testing.T) {
			perfPort++
			args := []string{"perf", test, "-d", "rxe0", "-x", ownGID(t), "--timeout", "3s", "-n", "1000000", "-p", fmt.Sprint(perfPort)}
			s := start(t, time.Minute, rdmactl, args...)
			waitTCPListen(t, perfPort)
			sent := rxeSentPackets(t)
			c := start(t, time.Minute, rdmactl, append(args, "10.9.0.1")...)
			// The loop runs once messages flow.
			for deadline := time.Now().Add(30 * time.Second); rxeSentPackets(t) < sent+1000; {
				if time.Now().After(deadline) {
					t.Fatal("no messages flowed within 30 s")
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			defer s.cmd.Process.Signal(syscall.SIGCONT)
			stopped := time.Now()
			r := c.wait(t)
			if took := time.Since(stopped); took > bound+5*time.Second {
				t.Errorf("the client ended %v after the server stopped, bound %v", took, bound)
			}
			if r.Code != 1 || !strings.Contains(r.Stderr, "hint: the peer stopped answering") {
				t.Errorf("want exit 1 and the hint that the peer stopped answering: exit %d, stderr %q", r.Code, r.Stderr)
			}
		})
	}
}
