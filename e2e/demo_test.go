//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// waitTCPListen polls the socket table until a TCP listener on port shows
// up. It does not connect: the demo server accepts exactly one connection.
func waitTCPListen(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("ss", "-Hltn", fmt.Sprintf("sport = :%d", port)).Output()
		if strings.TrimSpace(string(out)) != "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("nothing listens on TCP port %d after 30s", port)
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
	requireRole(t, "single")
	for _, gid := range []string{"1", "auto"} {
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
	requireRole(t, "single")
	port := 19910
	begin := time.Now()
	s := start(t, 2*time.Minute, rdmactl, demoArgs("", "0", port)...)
	waitTCPListen(t, port)
	cli := run(t, 2*time.Minute, rdmactl, demoArgs("10.9.0.1", "1", port)...)
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
	requireRole(t, "a")
	for _, gid := range []string{"1", "auto"} {
		t.Run("gid-"+gid, func(t *testing.T) {
			port := 19920 + len(gid)
			s := start(t, 3*time.Minute, rdmactl, demoArgs("", gid, port)...)
			waitTCPListen(t, port)
			cli := remote(t, 3*time.Minute, "timeout 170 "+shellJoin(append([]string{rdmactl}, demoArgs("10.9.1.1", gid, port)...)))
			checkDemoSuccess(t, s.wait(t), cli)
		})
	}
}
