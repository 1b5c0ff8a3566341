//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// waitTCPListen waits until a TCP listener on port shows up.
func waitTCPListen(t *testing.T, port int) {
	t.Helper()
	pollUntil(t, 30*time.Second, 20*time.Millisecond, fmt.Sprintf("nothing listens on TCP port %d", port), func() bool { return tcpListening(port) })
}

func demoArgs(server string, gid string, port int) []string {
	args := []string{"demo"}
	if server != "" {
		args = append(args, server)
	}
	args = append(args, "-d", "rxe0", "-p", fmt.Sprint(port))
	if gid != "" {
		args = append(args, "-g", gid)
	}
	return args
}

// checkDemoSuccess asserts what a successful run of the RC demo shows on
// each side: the SEND arrived, the READ saw the server's buffer, the WRITE
// landed in it.
func checkDemoSuccess(t *testing.T, srv, cli result) {
	t.Helper()
	if srv.Code != 0 || cli.Code != 0 {
		t.Fatalf("demo failed: server exit %d\n%s%s\nclient exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
	}
	for _, want := range []string{"TCP connection was established", "QP state was change to RTS", "Contents of server buffer: 'RDMA write opera", "test result is 0"} {
		if !strings.Contains(srv.Stdout, want) {
			t.Errorf("server output lacks %q:\n%s", want, srv.Stdout)
		}
	}
	for _, want := range []string{"Message is: 'SEND operation ", "RDMA Read Request was posted", "Contents of server's buffer: 'RDMA read operat", "Now replacing it with: 'RDMA write operation'", "test result is 0"} {
		if !strings.Contains(cli.Stdout, want) {
			t.Errorf("client output lacks %q:\n%s", want, cli.Stdout)
		}
	}
}

func TestSingleDemoBothSides(t *testing.T) {
	for _, gid := range []string{ownGID(t), "auto"} {
		t.Run("gid-"+gid, func(t *testing.T) {
			port := 19900 + len(gid)
			s := start(t, 2*time.Minute, rdmactl, demoArgs("", gid, port)...)
			waitTCPListen(t, port)
			cli := run(t, 2*time.Minute, rdmactl, demoArgs("10.9.0.1", gid, port)...)
			checkDemoSuccess(t, s.wait(t), cli)
		})
	}
}

// TestSingleDemoWrongGIDIndex: the link-local GID on one side makes RTR
// fail on both, as with the original program, plus a hint, in bounded time.
func TestSingleDemoWrongGIDIndex(t *testing.T) {
	port := 19910
	begin := time.Now()
	s := start(t, 2*time.Minute, rdmactl, demoArgs("", "0", port)...)
	waitTCPListen(t, port)
	cli := run(t, 2*time.Minute, rdmactl, demoArgs("10.9.0.1", ownGID(t), port)...)
	srv := s.wait(t)
	for side, r := range map[string]result{"server": srv, "client": cli} {
		if r.Code != 1 {
			t.Errorf("%s exit %d, want 1", side, r.Code)
		}
		all := r.Stdout + r.Stderr
		for _, want := range []string{"failed to modify QP state to RTR", "test result is 1", "rdmactl gids"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s output lacks %q:\n%s", side, want, all)
			}
		}
	}
	if took := time.Since(begin); took > 90*time.Second {
		t.Errorf("wrong GID index took %v to fail", took)
	}
}

// TestTwoHostsDemo: server on host A, client on host B, across the link.
func TestTwoHostsDemo(t *testing.T) {
	for _, gid := range []string{"index", "auto"} {
		t.Run("gid-"+gid, func(t *testing.T) {
			port := 19920 + len(gid)
			here, there := gid, gid
			if gid == "index" {
				here, there = ownGID(t), remoteGID(t)
			}
			s := start(t, 3*time.Minute, rdmactl, demoArgs("", here, port)...)
			waitTCPListen(t, port)
			cli := remote(t, 3*time.Minute, "timeout 170 "+shellJoin(append([]string{rdmactl}, demoArgs("10.9.1.1", there, port)...)))
			checkDemoSuccess(t, s.wait(t), cli)
		})
	}
}

// nvidiaMessage is what NVIDIA's public RDMA_RC_example sends: 17
// characters, 18 bytes with the NUL, where the seed's ibv_demo sends 16.
const nvidiaMessage = "SEDN operation   "

// nvidiaPeer is rdmactl standing in for that variant: it SENDs its
// message and moves 18 bytes in every transfer, as the C program built
// with that MSG does (the hidden --send-message knob).
func nvidiaPeer(args []string) []string {
	return append(args, "--send-message", nvidiaMessage)
}

// checkNVIDIAInterop asserts a successful run against the 18-byte variant:
// the client printed the message that arrived, whole.
func checkNVIDIAInterop(t *testing.T, srv, cli result) {
	t.Helper()
	if srv.Code != 0 || cli.Code != 0 {
		t.Fatalf("demo with the 18-byte variant failed: server exit %d\n%s%s\nclient exit %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
	}
	for _, r := range []result{srv, cli} {
		if !strings.Contains(r.Stdout, "test result is 0") || strings.Contains(r.Stderr, "hint:") {
			t.Errorf("want test result 0 and no hint:\n%s%s", r.Stdout, r.Stderr)
		}
	}
	if !strings.Contains(srv.Stdout, "Contents of server buffer: 'RDMA write operati") {
		t.Errorf("server output lacks the client's 18-byte write:\n%s", srv.Stdout)
	}
	if !strings.Contains(cli.Stdout, "Contents of server's buffer: 'RDMA read operat") {
		t.Errorf("client output lacks the RDMA read:\n%s", cli.Stdout)
	}
}

// TestSingleDemoNVIDIAVariant: rdmactl works with a peer
// that sends NVIDIA's 18-byte "SEDN operation   ", in both roles.
func TestSingleDemoNVIDIAVariant(t *testing.T) {
	t.Run("rdmactl-client", func(t *testing.T) {
		port := 19930
		s := start(t, 2*time.Minute, rdmactl, nvidiaPeer(demoArgs("", ownGID(t), port))...)
		waitTCPListen(t, port)
		cli := run(t, 2*time.Minute, rdmactl, demoArgs("10.9.0.1", ownGID(t), port)...)
		srv := s.wait(t)
		checkNVIDIAInterop(t, srv, cli)
		if want := "Message is: '" + nvidiaMessage + "'\n"; !strings.Contains(cli.Stdout, want) {
			t.Errorf("client output lacks %q:\n%s", want, cli.Stdout)
		}
	})
	t.Run("rdmactl-server", func(t *testing.T) {
		port := 19931
		s := start(t, 2*time.Minute, rdmactl, demoArgs("", ownGID(t), port)...)
		waitTCPListen(t, port)
		cli := run(t, 2*time.Minute, rdmactl, nvidiaPeer(demoArgs("10.9.0.1", ownGID(t), port))...)
		checkNVIDIAInterop(t, s.wait(t), cli)
	})
}

// TestSingleDemoRemoteAccessError: a server that sends a
// wrong rkey makes the client's RDMA read fail with WC status 0xa. The hint
// must follow from that — the peer refused the access — and not blame the
// GIDs, which were fine.
func TestSingleDemoRemoteAccessError(t *testing.T) {
	port := 19932
	s := start(t, 2*time.Minute, rdmactl, append(demoArgs("", ownGID(t), port), "--advertise-rkey", "0xdeadbe00")...)
	waitTCPListen(t, port)
	cli := run(t, 2*time.Minute, rdmactl, demoArgs("10.9.0.1", ownGID(t), port)...)
	srv := s.wait(t)
	if cli.Code != 1 || srv.Code != 1 {
		t.Fatalf("want exit 1 on both sides: server %d\n%s%s\nclient %d\n%s%s", srv.Code, srv.Stdout, srv.Stderr, cli.Code, cli.Stdout, cli.Stderr)
	}
	if !strings.Contains(cli.Stderr, "got bad completion with status: 0xa,") {
		t.Fatalf("client did not see a remote access error:\n%s%s", cli.Stdout, cli.Stderr)
	}
	for side, r := range map[string]result{"server": srv, "client": cli} {
		if strings.Contains(r.Stderr, "GID") || strings.Contains(r.Stderr, "RoCE") {
			t.Errorf("%s blames the GIDs for a remote access error:\n%s", side, r.Stderr)
		}
	}
	if !strings.Contains(cli.Stderr, "hint: ") || !strings.Contains(cli.Stderr, "rkey") {
		t.Errorf("client hint should say the peer refused the access (its rkey or address):\n%s", cli.Stderr)
	}
}

// TestNoRxeDemoNoDevice: with no RDMA device at all the
// server must not wait for a peer: one line naming the problem and
// `rdmactl doctor`, exit 1, at once.
func TestNoRxeDemoNoDevice(t *testing.T) {
	if devs := run(t, 30*time.Second, "ibv_devices"); strings.Contains(devs.Stdout, "rxe") {
		t.Fatalf("the lab has RDMA devices; this test needs none:\n%s", devs.Stdout)
	}
	for _, args := range [][]string{demoArgs("", "1", 19933), demoArgs("10.9.0.1", "1", 19934)} {
		begin := time.Now()
		r := run(t, 3*time.Minute, rdmactl, append(args, "--timeout", "2m")...)
		msg := strings.TrimRight(r.Stderr, "\n")
		if r.Code != 1 || strings.Contains(msg, "\n") || !strings.Contains(msg, "rdmactl doctor") || !strings.Contains(msg, "RDMA device") {
			t.Errorf("%v: want exit 1 and one line naming the missing device and rdmactl doctor, got exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stdout, "waiting on port") {
			t.Errorf("%v waited for a peer with no device:\n%s", args, r.Stdout)
		}
		// Under emulation a cold start takes seconds; waiting for a peer
		// would take the whole --timeout.
		if took := time.Since(begin); took > 45*time.Second {
			t.Errorf("%v took %v to fail: it waited for a peer", args, took)
		}
	}
}
