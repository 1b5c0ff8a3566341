//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// checkSchema holds one real run to the contract: exactly one document on
// stdout, valid against the command's schema (or, when the run failed,
// the error document's), and ok:false never beside exit status 0.
func checkSchema(t *testing.T, name string, wantFail bool, r result, what string) {
	t.Helper()
	if failed := r.Code != 0; failed != wantFail {
		t.Errorf("%s: exit %d (want failure: %v)\nstdout %s\nstderr %s", what, r.Code, wantFail, r.Stdout, r.Stderr)
	}
	if err := schema.ValidateResult(name, []byte(r.Stdout), r.Code); err != nil {
		t.Errorf("%s: %v\nstdout: %s\nstderr: %s", what, err, r.Stdout, r.Stderr)
	}
	if r.Code == 0 && strings.Contains(r.Stdout, `"ok":false`) && !strings.Contains(r.Stdout, `"ok":true`) {
		t.Errorf("%s: ok:false with exit 0: %s", what, r.Stdout)
	}
}

// TestSingleJSONSchemas: every command's --json, on success and
// on failure, run for real in the lab and validated against the schema
// the repository keeps for it (pkg/cli/schema).
func TestSingleJSONSchemas(t *testing.T) {
	const minute = time.Minute
	for _, c := range []struct {
		schema string
		fail   bool
		args   []string
	}{
		{"devinfo", false, []string{"devinfo"}},
		{"devinfo", false, []string{"devinfo", "-d", "rxe0", "-i", "1"}},
		{"devinfo", true, []string{"devinfo", "-d", "nosuch"}},
		{"devices", false, []string{"devinfo", "-l"}},
		{"devices", false, []string{"devices"}},
		{"devices", true, []string{"devices", "extra"}},
		{"gids", false, []string{"gids"}},
		{"gids", false, []string{"gids", "--ip", "10.9.0.1"}},
		{"gids", true, []string{"gids", "--ip", "10.77.0.1"}},
		{"ping", true, []string{"ping", "-c", "-a", "10.9.0.1", "-p", fmt.Sprint(freshPort()), "-C", "1", "--timeout", "5s"}},
		{"ping-server", true, []string{"ping", "-s", "-a", "10.77.0.1", "-p", fmt.Sprint(freshPort())}},
		{"demo", true, []string{"demo", "-d", "nosuch", "-g", ownGID(t)}},
		{"demo", true, []string{"demo", "10.9.0.1", "-d", "rxe0", "-g", ownGID(t), "-p", "19999", "--timeout", "3s"}},
		{"rxe-status", false, []string{"rxe", "status"}},
		{"rxe-status", true, []string{"rxe", "status", "extra"}},
		{"rxe-add", true, []string{"rxe", "add", "nosuchnet"}},
		{"rxe-remove", true, []string{"rxe", "remove", "nosuch"}},
		{"rxe-apply", false, []string{"rxe", "apply"}},
		{"doctor", false, []string{"doctor"}},
		{"doctor", false, []string{"doctor", "--ip", "10.9.0.1"}},
		{"doctor", true, []string{"doctor", "--ip", "not-an-ip"}},
		{"version", false, []string{"version"}},
		{"version", true, []string{"version", "extra"}},
		{"smoke", false, []string{"smoke", "-C", "3", "--timeout", "30s"}},
		{"smoke", true, []string{"smoke", "10.9.0.77", "-C", "1", "--timeout", "3s"}},
		{"perf", true, []string{"perf", "write_bw", "-d", "rxe0", "-x", ownGID(t), "-p", "18999", "--timeout", "3s", "10.9.0.1"}},
		{"serve-line", true, []string{"serve", "-a", "10.77.0.1"}},
	} {
		args := append([]string{"--json"}, c.args...)
		checkSchema(t, c.schema, c.fail, run(t, 2*minute, rdmactl, args...), "rdmactl "+strings.Join(args, " "))
	}

	// perf's failures carry rdmactl's message and hint in the error document
	// (they said only "the message is on standard error").
	r := run(t, 2*minute, rdmactl, "--json", "perf", "send_lat", "-d", "rxe0", "-x", ownGID(t), "-p", "18998", "--timeout", "3s", "10.9.0.1")
	if !strings.Contains(r.Stdout, `"message":"Couldn't connect to 10.9.0.1:18998`) || !strings.Contains(r.Stdout, `"hint":"`) ||
		!strings.Contains(r.Stderr, "rdmactl: Couldn't connect") || !strings.Contains(r.Stderr, "\nhint: ") {
		t.Errorf("perf failure: stdout %s\nstderr %s", r.Stdout, r.Stderr)
	}

	t.Run("ping both sides", func(t *testing.T) {
		n := freshPort()
		port := fmt.Sprint(n)
		srv := start(t, 2*minute, rdmactl, "-j", "ping", "-s", "-a", "10.9.0.1", "-p", port, "-v")
		waitListening(t, n)
		checkSchema(t, "ping", false, run(t, 2*minute, rdmactl, "-j", "ping", "-c", "-a", "10.9.0.1", "-p", port, "-C", "3", "-V"), "ping -c")
		r := srv.wait(t)
		checkSchema(t, "ping-server", false, r, "ping -s")
		if !strings.Contains(r.Stdout, `"completed":3,"ok":true`) || !strings.Contains(r.Stderr, "server ping data: ") {
			t.Errorf("ping -s --json: stdout %s stderr %q", r.Stdout, r.Stderr)
		}
	})

	t.Run("ping persistent server stopped by SIGTERM", func(t *testing.T) {
		n := freshPort()
		port := fmt.Sprint(n)
		srv := start(t, 2*minute, rdmactl, "-j", "ping", "-s", "-P", "-a", "10.9.0.1", "-p", port)
		waitListening(t, n)
		for i := 0; i < 2; i++ {
			if r := run(t, 2*minute, "rping", "-c", "-a", "10.9.0.1", "-p", port, "-C", "2", "-V"); r.Code != 0 {
				t.Errorf("rping client %d: %+v", i, r)
			}
		}
		_ = srv.cmd.Process.Signal(syscall.SIGTERM)
		r := srv.wait(t)
		checkSchema(t, "ping-server", false, r, "ping -s -P")
		if strings.Count(r.Stdout, `"completed":2,"ok":true`) != 2 {
			t.Errorf("want two clients with 2 pings each: %s", r.Stdout)
		}
	})

	t.Run("demo both sides", func(t *testing.T) {
		srv := start(t, 2*minute, rdmactl, "-j", "demo", "-d", "rxe0", "-g", ownGID(t), "-p", "19871")
		waitTCPListen(t, 19871)
		checkSchema(t, "demo", false, run(t, 2*minute, rdmactl, "-j", "demo", "10.9.0.1", "-d", "rxe0", "-g", ownGID(t), "-p", "19871"), "demo client")
		checkSchema(t, "demo", false, srv.wait(t), "demo server")
	})

	t.Run("perf both sides", func(t *testing.T) {
		for i, test := range []string{"write_bw", "send_lat"} {
			port := fmt.Sprint(18991 + i)
			srv := start(t, 2*minute, rdmactl, "-j", "perf", test, "-d", "rxe0", "-x", ownGID(t), "-n", "100", "-p", port)
			waitTCPListen(t, 18991+i)
			checkSchema(t, "perf", false, run(t, 2*minute, rdmactl, "-j", "perf", test, "-d", "rxe0", "-x", ownGID(t), "-n", "100", "-p", port, "10.9.0.1"), test+" client")
			checkSchema(t, "perf", false, srv.wait(t), test+" server")
		}
	})

	t.Run("rxe add and remove", func(t *testing.T) {
		cleanupNetdev(t, "dumj0")
		sh(t, 30*time.Second, "ip link add dumj0 type dummy && ip addr add 10.66.0.1/24 dev dumj0 && ip link set dumj0 up")
		r := run(t, minute, rdmactl, "-j", "rxe", "add", "dumj0", "--name", "rxej")
		checkSchema(t, "rxe-add", false, r, "rxe add")
		if !strings.Contains(r.Stdout, `"state":"ACTIVE"`) {
			t.Errorf("rxe add: %s", r.Stdout)
		}
		r = run(t, minute, rdmactl, "-j", "rxe", "status")
		checkSchema(t, "rxe-status", false, r, "rxe status with dumj0")
		if !strings.Contains(r.Stdout, `"device":"rxej","state":"ACTIVE"`) {
			t.Errorf("rxe status: %s", r.Stdout)
		}
		checkSchema(t, "rxe-remove", false, run(t, minute, rdmactl, "-j", "rxe", "remove", "rxej"), "rxe remove")
	})

	t.Run("rxe apply with a link that cannot be made", func(t *testing.T) {
		if _, err := os.Stat("/etc/rdmactl/rxe.conf"); err == nil {
			t.Fatal("/etc/rdmactl/rxe.conf exists already")
		}
		t.Cleanup(func() { os.Remove("/etc/rdmactl/rxe.conf") })
		sh(t, 30*time.Second, "mkdir -p /etc/rdmactl && echo 'rxe0 veth0' >/etc/rdmactl/rxe.conf && echo 'rxez nosuchnet' >>/etc/rdmactl/rxe.conf")
		r := run(t, minute, rdmactl, "-j", "rxe", "apply", "--wait", "1s")
		checkSchema(t, "rxe-apply", true, r, "rxe apply")
		if !strings.Contains(r.Stdout, `"action":"present","ok":true`) || !strings.Contains(r.Stdout, `"action":"failed","ok":false,"error":{"message":`) {
			t.Errorf("rxe apply: %s", r.Stdout)
		}
	})

	t.Run("serve JSON lines", func(t *testing.T) {
		s := startServe(t, 7290, 19290, "--json", "-a", "10.9.0.1", "--perf-port", "18290")
		if r := run(t, 2*minute, "rping", "-c", "-a", "10.9.0.1", "-p", "7290", "-C", "2", "-V"); r.Code != 0 {
			t.Errorf("rping against serve: %+v", r)
		}
		if r := run(t, 2*minute, rdmactl, "demo", "10.9.0.1", "-d", "rxe0", "-g", ownGID(t), "-p", "19290"); r.Code != 0 {
			t.Errorf("demo against serve: %+v", r)
		}
		// smoke --bw: its document, and serve's write_bw line.
		sm := run(t, 2*minute, rdmactl, "--json", "smoke", "10.9.0.1", "--bw", "-C", "2", "--port", "7290", "--tcp-port", "19290", "--perf-port", "18290")
		checkSchema(t, "smoke", false, sm, "rdmactl --json smoke --bw")
		if !strings.Contains(sm.Stdout, `"check":"write_bw","ok":true`) || !strings.Contains(sm.Stdout, `"bandwidth":{"bytes":65536`) {
			t.Errorf("smoke --bw: %s", sm.Stdout)
		}
		// A client that is not a demo: serve logs a failed session.
		sh(t, minute, "echo garbage | timeout 5 bash -c 'cat >/dev/tcp/10.9.0.1/19290'")
		r := s.stop()
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if len(lines) < 6 || !strings.Contains(r.Stdout, `"test":"write_bw","ok":true`) {
			t.Errorf("want a line per client (6, one a write_bw), got:\n%s", r.Stdout)
		}
		for _, l := range lines {
			if err := schema.Validate("serve-line", []byte(l)); err != nil {
				t.Errorf("%s: %v", l, err)
			}
		}
	})
}
