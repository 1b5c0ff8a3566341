//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// silentListener listens on a TCP port of 10.9.0.1 and accepts one
// connection, which it hands on and never writes to: a peer that connects
// and then says nothing. The listener closes with the test, and so does
// the connection if nobody took it.
func silentListener(t *testing.T) (port int, accepted <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "10.9.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 1)
	t.Cleanup(func() {
		ln.Close()
		select {
		case c := <-conns:
			c.Close()
		default:
		}
	})
	go func() {
		if c, err := ln.Accept(); err == nil {
			conns <- c
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, conns
}

// result is what one command did.
type result struct {
	Stdout, Stderr string
	Code           int
}

// run executes name with args, killing it after limit. A command that has
// to be killed fails the test: nothing in the lab may hang.
func run(t *testing.T, limit time.Duration, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := command(ctx, name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: still running after %v; at the kill:\n%s%s", name, strings.Join(args, " "), limit, cmd.stuck, outputs(out.String(), errOut.String()))
	}
	return result{Stdout: out.String(), Stderr: errOut.String(), Code: exitCode(t, err)}
}

// limitedCmd is a command with a time limit; stuck is what its processes
// were doing when the limit, or a failed test's end (diagnose), killed
// them (stuckReport).
type limitedCmd struct {
	*exec.Cmd
	diagnose bool
	stuck    string
}

// command runs name in a process group of its own: at the time limit the
// whole group is killed, and WaitDelay stops a grandchild that still holds
// the output pipes from stalling the test until go test's own limit.
// Before the kill it records what the group was doing and has rdmactl
// print its goroutines.
func command(ctx context.Context, name string, args ...string) *limitedCmd {
	c := &limitedCmd{Cmd: exec.CommandContext(ctx, name, args...)}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error {
		pgid := c.Process.Pid
		if c.diagnose || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.stuck = stuckReport(pgid)
			interruptGoProcesses(pgid)
		}
		return syscall.Kill(-pgid, syscall.SIGKILL)
	}
	c.WaitDelay = 5 * time.Second
	return c
}

// outputs shows a killed command's streams as they were printed (a Go
// program's goroutine dump is unreadable quoted).
func outputs(stdout, stderr string) string {
	return "--- stdout:\n" + stdout + "\n--- stderr:\n" + stderr
}

// sh runs a shell command line (for pipes, ulimit and the like).
func sh(t *testing.T, limit time.Duration, script string) result {
	t.Helper()
	return run(t, limit, "bash", "-c", script)
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	t.Fatalf("cannot run: %v", err)
	return -1
}

// background is a command started with start and collected with wait.
type background struct {
	cmd         *limitedCmd
	out, errOut bytes.Buffer
	cancel      context.CancelFunc
	ctx         context.Context
	name        string
	collected   bool
}

func start(t *testing.T, limit time.Duration, name string, args ...string) *background {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	b := &background{cancel: cancel, ctx: ctx, name: name + " " + strings.Join(args, " ")}
	b.cmd = command(ctx, name, args...)
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.errOut
	if err := b.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", b.name, err)
	}
	t.Cleanup(func() {
		if b.collected {
			return
		}
		// A failed test that left this running (a client failed or
		// hung): show what it was doing, or there is only the client's
		// side to go on. Passing tests leave servers to this on purpose.
		b.cmd.diagnose = t.Failed()
		cancel()
		_ = b.cmd.Wait()
		if !b.cmd.diagnose {
			return
		}
		t.Logf("%s: still running when the test ended, killed; at the kill:\n%s%s", b.name, b.cmd.stuck, outputs(b.out.String(), b.errOut.String()))
	})
	return b
}

func (b *background) wait(t *testing.T) result {
	t.Helper()
	err := b.cmd.Wait()
	b.collected = true
	defer b.cancel()
	if b.ctx.Err() != nil {
		t.Fatalf("%s: killed at its time limit; at the kill:\n%s%s", b.name, b.cmd.stuck, outputs(b.out.String(), b.errOut.String()))
	}
	return result{Stdout: b.out.String(), Stderr: b.errOut.String(), Code: exitCode(t, err)}
}

// sameResult fails unless ours matches what the real tool did, byte for
// byte on both streams and in the exit code.
func sameResult(t *testing.T, what string, real, ours result) {
	t.Helper()
	if real.Code != ours.Code {
		t.Errorf("%s: exit code %d, real tool %d", what, ours.Code, real.Code)
	}
	if real.Stdout != ours.Stdout {
		t.Errorf("%s: stdout differs from the real tool\n%s", what, diff(real.Stdout, ours.Stdout))
	}
	if real.Stderr != ours.Stderr {
		t.Errorf("%s: stderr differs from the real tool\n%s", what, diff(real.Stderr, ours.Stderr))
	}
}

// diff shows the first differing line with a little context.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return "line " + strconv.Itoa(i+1) + ":\n  real: " + quote(wl, i < len(w)) + "\n  ours: " + quote(gl, i < len(g))
		}
	}
	return "(only in trailing bytes)"
}

func quote(s string, present bool) string {
	if !present {
		return "(none)"
	}
	return "\"" + strings.ReplaceAll(s, "\t", `\t`) + "\""
}
