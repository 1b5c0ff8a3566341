//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// gidIndexOf is the RoCE v2 GID index of ip on dev, read from sysfs.
func gidIndexOf(t *testing.T, dev, ip string) string {
	t.Helper()
	want := fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%s", ipv4GIDTail(ip))
	for _, g := range readSysfsGIDs(t) {
		if g.dev == dev && g.gid == want && g.typ == "RoCE v2" {
			return g.index
		}
	}
	t.Fatalf("no RoCE v2 GID of %s on %s", ip, dev)
	return ""
}

func ipv4GIDTail(ip string) string {
	a := net.ParseIP(ip).To4()
	return fmt.Sprintf("%02x%02x:%02x%02x", a[0], a[1], a[2], a[3])
}

// dialFrom opens a TCP connection to 10.9.0.1:port from 10.9.0.2, so that
// serve sees a peer other than the real clients'.
func dialFrom(port int) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("10.9.0.2")}, Timeout: 5 * time.Second}
	return d.Dial("tcp4", fmt.Sprintf("10.9.0.1:%d", port))
}

// holdIdle opens n idle connections to port and holds each until serve
// closes it or ctx ends; it returns once all are open or refused.
func holdIdle(ctx context.Context, port, n int, wg *sync.WaitGroup) {
	var opened sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		opened.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialFrom(port)
			opened.Done()
			if err != nil {
				return
			}
			go func() { <-ctx.Done(); c.Close() }()
			_, _ = io.Copy(io.Discard, c) // until serve or ctx closes it
			c.Close()
		}()
	}
	opened.Wait()
}

// garbage sends n clients in all, at most 20 at once, each some random
// bytes to port before closing.
func garbage(port, n int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 20)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dialFrom(port)
			if err != nil {
				return
			}
			defer c.Close()
			b := make([]byte, 16+i%200)
			_, _ = rand.Read(b)
			_, _ = c.Write(b)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = c.Read(make([]byte, 64))
		}()
	}
	wg.Wait()
}

// slowPerftest is a perftest client that sends its version and then one
// exchange step every 4 s, each inside a 5 s step timeout; it returns when
// the server closes the connection.
func slowPerftest(t *testing.T) {
	begin := time.Now()
	c, err := dialFrom(perftestPort)
	if err != nil {
		t.Errorf("slow client: %v", err)
		return
	}
	defer c.Close()
	version := make([]byte, 16)
	copy(version, "6.06")
	if _, err := c.Write(version); err == nil {
		_, err = io.ReadFull(c, version)
	}
	for err == nil && time.Since(begin) < 2*time.Minute {
		time.Sleep(4 * time.Second)
		step := binary.BigEndian.AppendUint32(nil, 4096)
		if _, err = c.Write(step); err == nil {
			_, err = io.ReadFull(c, step)
		}
	}
}

// healthCheck is a client that must get its answer from serve.
type healthCheck struct {
	name string
	args []string
}

func healthChecks(t *testing.T) []healthCheck {
	return []healthCheck{
		{"rping", []string{"rping", "-c", "-a", "10.9.0.1", "-C", "3", "-V"}},
		{"demo", []string{rdmactl, "demo", "-d", "rxe0", "-g", gidIndexOf(t, "rxe0", "10.9.0.1"), "10.9.0.1"}},
		{"smoke", []string{rdmactl, "smoke", "10.9.0.1", "-C", "3", "--timeout", "10s"}},
	}
}

// serveHealth runs the checks against serve and fails unless each passes
// in at most twice what it took against the idle serve, plus 2 s (base:
// under qemu TCG on a shared machine a client alone takes 2 to 20 s, and
// the same check varies by a factor of two between runs), and serve's RSS
// and thread count stay bounded. It returns what each took.
func serveHealth(t *testing.T, what string, pid int, base []time.Duration) []time.Duration {
	t.Helper()
	var took []time.Duration
	for i, c := range healthChecks(t) {
		begin := time.Now()
		r := run(t, 2*time.Minute, c.args[0], c.args[1:]...)
		d := time.Since(begin)
		took = append(took, d)
		t.Logf("%s: %s took %v", what, c.name, d)
		if r.Code != 0 {
			t.Errorf("%s: %s exit %d\n%s%s", what, c.name, r.Code, r.Stdout, r.Stderr)
		}
		if base != nil && d > 2*base[i]+2*time.Second {
			t.Errorf("%s: %s took %v, %v against the idle serve: want at most twice that and 2 s", what, c.name, d, base[i])
		}
	}
	rssKiB, threads := rss(t, pid), procStatusKiB(t, pid, "Threads")
	t.Logf("%s: serve RSS %d KiB, %d threads, %d fds", what, rssKiB, threads, countFDs(pid))
	if rssKiB > 16*1024 {
		t.Errorf("%s: serve RSS %d KiB, want at most 16 MiB", what, rssKiB)
	}
	if threads > 64 {
		t.Errorf("%s: serve runs %d threads", what, threads)
	}
	return took
}

func countFDs(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}

// TestSingleHostileServe: serve keeps answering rping, a demo client and
// smoke, each in at most twice its time against the idle serve plus 2 s,
// in at most 16 MiB and a bounded number of threads, while 500 idle TCP
// connections are held open on each of its TCP ports and while 200
// garbage clients come to each; SIGTERM then leaves nothing behind.
func TestSingleHostileServe(t *testing.T) {
	s := startServe(t, 7174, 19875, "-a", "10.9.0.1")
	waitTCPListen(t, perftestPort)
	pid := s.cmd.Process.Pid
	base := serveHealth(t, "idle serve", pid, nil)

	t.Run("500-idle-per-port", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		holdIdle(ctx, 19875, 500, &wg)
		holdIdle(ctx, perftestPort, 500, &wg)
		serveHealth(t, "500 idle per port", pid, base)
		cancel()
		wg.Wait()
	})

	t.Run("200-garbage-clients", func(t *testing.T) {
		done := make(chan struct{})
		go func() {
			garbage(19875, 200)
			garbage(perftestPort, 200)
			close(done)
		}()
		serveHealth(t, "garbage clients", pid, base)
		<-done
	})

	out := stopWithin(t, s.background, 3*time.Second)
	noRDMALeft(t)
	t.Logf("serve log: %v", logLines(out.Stdout))
}

// TestSingleHostileSlowPerftest: a perftest client that sends one exchange
// step every 4 s, each inside serve's --timeout 5s, is still dropped within
// the 5 s, so a real ib_write_bw that comes a second later is served.
func TestSingleHostileSlowPerftest(t *testing.T) {
	s := startServe(t, 7175, 19876, "-a", "10.9.0.1", "--timeout", "5s")
	waitTCPListen(t, perftestPort)
	held := make(chan struct{})
	go func() { slowPerftest(t); close(held) }()
	time.Sleep(time.Second)
	x := gidIndexOf(t, "rxe0", "10.9.0.1")
	bw := run(t, 3*time.Minute, "ib_write_bw", "-d", "rxe0", "-x", x, "-F", "-n", "200", "10.9.0.1")
	if bw.Code != 0 && !strings.Contains(bw.Stderr, "Can't produce a report") {
		t.Errorf("ib_write_bw after the slow client: exit %d\n%s%s", bw.Code, bw.Stdout, bw.Stderr)
	}
	<-held
	out := stopWithin(t, s.background, 3*time.Second)
	noRDMALeft(t)
	var slow, ok int
	for _, line := range strings.Split(out.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[1] != "write_bw" {
			continue
		}
		secs, _ := strconv.ParseFloat(strings.TrimSuffix(f[4], "s"), 64)
		switch {
		case f[2] == "10.9.0.2":
			slow++
			if f[3] != "FAILED" || secs > 6.5 {
				t.Errorf("the slow client's session: %s (want FAILED within the 5 s --timeout)", line)
			}
		case f[3] == "ok":
			ok++
		}
	}
	if slow != 1 || ok != 1 {
		t.Errorf("want one line for the slow client and one ok for ib_write_bw:\n%s", out.Stdout)
	}
}

// TestSingleHostileDevinfoEmptyName: an empty -d names no device, as in
// ibv_devinfo, which says so and exits 255.
func TestSingleHostileDevinfoEmptyName(t *testing.T) {
	real := run(t, time.Minute, "ibv_devinfo", "-d", "")
	ours := run(t, time.Minute, rdmactl, "devinfo", "-d", "")
	sameResult(t, "devinfo -d ''", real, ours)
	if dir := os.Getenv("CAPTURE_DIR"); dir != "" {
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(dir+"/stdout", []byte(real.Stdout), 0o644)
		_ = os.WriteFile(dir+"/stderr", []byte(real.Stderr), 0o644)
		_ = os.WriteFile(dir+"/status", []byte(fmt.Sprintf("%d\n", real.Code)), 0o644)
	}
}

// TestSingleHostilePingModeFlags: as rping's getopt loop, the last of -s
// and -c wins: `-s -c` runs a client, with the same output as rping's.
func TestSingleHostilePingModeFlags(t *testing.T) {
	flags := []string{"-a", "10.9.0.1", "-v", "-C", "3"}
	var clients []result
	for _, tool := range []string{"rping", rdmactl} {
		port := freshPort()
		srv := start(t, 2*time.Minute, "rping", append([]string{"-s", "-p", fmt.Sprint(port)}, flags...)...)
		waitListening(t, port)
		args := append(append(toolArgs(tool, "-s"), "-c", "-p", fmt.Sprint(port)), flags...)
		clients = append(clients, run(t, time.Minute, tool, args...))
		srv.wait(t)
	}
	if clients[0].Code != 0 {
		t.Fatalf("rping -s -c: exit %d\n%s%s", clients[0].Code, clients[0].Stdout, clients[0].Stderr)
	}
	sameResult(t, "ping -s -c", clients[0], clients[1])
}

// TestSingleHostileSmokeSpecialFiles: smoke writes its reports into
// devices and FIFOs as they stand: /dev/null stays a device, /dev/full
// fails the run with ENOSPC named, and a FIFO's reader gets the report.
func TestSingleHostileSmokeSpecialFiles(t *testing.T) {
	s := startServe(t, 7177, 19878, "-a", "10.9.0.1")
	args := []string{"smoke", "10.9.0.1", "--port", "7177", "--tcp-port", "19878", "-C", "2"}
	if r := run(t, 2*time.Minute, rdmactl, append(args, "--junit", "/dev/null")...); r.Code != 0 {
		t.Errorf("--junit /dev/null: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/null is now %v (%v)", st.Mode(), err)
	}
	r := run(t, 2*time.Minute, rdmactl, append(args, "--prom", "/dev/full")...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "--prom: write /dev/full: no space left on device") {
		t.Errorf("--prom /dev/full: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/full is now %v (%v)", st.Mode(), err)
	}
	fifo := t.TempDir() + "/junit.fifo"
	if r := run(t, time.Minute, "mkfifo", fifo); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	time.Sleep(500 * time.Millisecond) // the reader opens its end first
	if r := run(t, 2*time.Minute, rdmactl, append(args, "--junit", fifo)...); r.Code != 0 {
		t.Errorf("--junit FIFO: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if report := <-got; !strings.Contains(report, "<testsuites") {
		t.Errorf("the FIFO's reader got %q", report)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v)", st.Mode(), err)
	}
	s.stop()
}

// ownGID is the index of the RoCE v2 GID of this VM's own address on rxe0
// (10.9.0.1 in the single VM, 10.9.1.1 on host A), read from sysfs: on a
// fresh netdev SLAAC can put another entry at index 1.
func ownGID(t *testing.T) string {
	if ownGIDIndex == "" {
		ip := "10.9.0.1"
		if os.Getenv("LAB_ROLE") == "a" {
			ip = "10.9.1.1"
		}
		ownGIDIndex = gidIndexOf(t, "rxe0", ip)
	}
	return ownGIDIndex
}

// ownGIDIndex is ownGID's answer, read once: the table does not change
// within a boot, and reading it from sysfs is slow under emulation.
var ownGIDIndex string

// remoteGID is host B's: the index of 10.9.1.2's RoCE v2 GID on its rxe0.
func remoteGID(t *testing.T) string {
	t.Helper()
	r := remote(t, time.Minute, shellJoin([]string{rdmactl, "gids", "--ip", "10.9.1.2"}))
	if r.Code != 0 || strings.TrimSpace(r.Stdout) == "" {
		t.Fatalf("host B's GID index of 10.9.1.2: %+v", r)
	}
	return strings.TrimSpace(r.Stdout)
}
