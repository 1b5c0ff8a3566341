package perf

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpuWindow is --cpu_util: perftest's CPU_Util[%] of a -D run, read from
// the first line of /proc/stat at the start and at the end of the sample
// window. perftest reads two of that line's numbers, user and idle time,
// and reports user / (user + idle): system time counts in neither. A side
// whose loop never opened a window reports 0.00, as perftest's does.
type cpuWindow struct {
	read func() (user, idle int64, ok bool)

	mu     sync.Mutex
	at     [2][2]int64 // start and end: user, idle
	timers []*time.Timer
}

func newCPUWindow(read func() (user, idle int64, ok bool)) *cpuWindow {
	return &cpuWindow{read: read}
}

// open samples at margin from now and again at d-margin from now, where a
// run that starts now opens and closes its sample window (perftest's
// alarms do the same).
func (w *cpuWindow) open(d, margin time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop()
	w.at = [2][2]int64{}
	for i, after := range []time.Duration{margin, d - margin} {
		w.timers = append(w.timers, time.AfterFunc(after, func() { w.sample(i) }))
	}
}

func (w *cpuWindow) sample(i int) {
	user, idle, ok := w.read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		w.at[i] = [2]int64{user, idle}
	}
}

// stop cancels the samples not yet taken. Its caller holds mu.
func (w *cpuWindow) stop() {
	for _, t := range w.timers {
		t.Stop()
	}
	w.timers = nil
}

// percent is the share of user time in the last window (calc_cpu_util).
func (w *cpuWindow) percent() float32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop()
	user, idle := w.at[1][0]-w.at[0][0], w.at[1][1]-w.at[0][1]
	if user+idle == 0 {
		return 0
	}
	return float32(user) / float32(user+idle) * 100
}

// rowEnd ends a result row: with --cpu_util the window's share
// (REPORT_EXT_CPU_UTIL), else a newline.
func (s *session) rowEnd() string {
	if s.cpu == nil {
		return "\n"
	}
	return fmt.Sprintf("\t    %-3.2f\n", s.cpu.percent())
}

// recordCPUShare puts --cpu_util's share into the --json document with
// the result row it belongs to, whether or not the row is printed.
func (s *session) recordCPUShare() {
	if s.cpu != nil {
		util := float64(s.cpu.percent())
		s.result.CPU.HostUserPercent = &util
	}
}

// readProcStat is the user and idle time of /proc/stat's first line.
func readProcStat() (user, idle int64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, false
	}
	u, err1 := strconv.ParseInt(f[1], 10, 64)
	i, err2 := strconv.ParseInt(f[4], 10, 64)
	return u, i, err1 == nil && err2 == nil
}
