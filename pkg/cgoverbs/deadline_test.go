package cgoverbs

import (
	"errors"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// A wait that times out ends at its deadline, never before it: a timed
// run takes a wait's timeout for its own end and checks that against its
// clock. Signals cut the poll under a wait short, and the coarse clock of
// the spinning waits lags the precise one by up to a tick; neither may
// end a wait early.
func TestWaitsNeverEndBeforeTheirDeadline(t *testing.T) {
	fd := silentPipe(t)
	f := newFaked(t, 0, 0, 0, 0) // no completions, a channel whose fd is -1
	perf := fakedPerf(t, f)
	var wc [1]rdma.WC
	waits := []struct {
		name string
		wait func(time.Duration) error
	}{
		{"CM event wait", func(d time.Duration) error { return waitReadable(fd, d) }},
		{"CQ Await", func(d time.Duration) error { _, _, err := f.cq.Await(wc[:], -1, d); return err }},
		{"WaitByte", func(d time.Duration) error { return perf.WaitByte(0, 1, d, false) }},
	}
	const timeout = 2500 * time.Microsecond
	for _, w := range waits {
		underSignals(t, 200*time.Microsecond, func() {
			for range 20 {
				start := time.Now()
				err := w.wait(timeout)
				took := time.Since(start)
				if !errors.Is(err, syscall.ETIMEDOUT) {
					t.Fatalf("%s: %v, want a timeout", w.name, err)
				}
				if took < timeout {
					t.Fatalf("%s of %v timed out after %v", w.name, timeout, took)
				}
			}
		})
	}
}

// silentPipe is the read end of a pipe nothing is written to.
func silentPipe(t *testing.T) int {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Close(p[0])
		syscall.Close(p[1])
	})
	return p[0]
}

// underSignals runs fn on this thread while SIGUSR1 comes to the thread
// every period, and fails unless one came.
func underSignals(t *testing.T, period time.Duration, fn func()) {
	t.Helper()
	sigs := make(chan os.Signal, 1024)
	signal.Notify(sigs, syscall.SIGUSR1)
	defer signal.Stop(sigs)
	runtime.LockOSThread() // fn's cgo calls run on this thread: signal it
	defer runtime.UnlockOSThread()
	pid, tid := syscall.Getpid(), syscall.Gettid()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				_ = syscall.Tgkill(pid, tid, syscall.SIGUSR1)
				time.Sleep(period)
			}
		}
	}()
	fn()
	close(stop)
	<-stopped
	if len(sigs) == 0 {
		t.Fatal("no signal arrived during the waits: the test proved nothing")
	}
}
