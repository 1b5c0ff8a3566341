package pollwait

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// TraceEnv names the file a process appends its waits to when set: one
// line per wait, for recording the traces the policy is tested against.
const TraceEnv = "RDMACTL_WAIT_TRACE"

// maxTraceWaits bounds a trace's memory; later waits are not recorded.
const maxTraceWaits = 200000

// Wait is one recorded wait.
type Wait struct {
	Site    string        // which wait (e.g. the ping step)
	Latency time.Duration // from the wait's start to the completion
	Spun    time.Duration // time spent polling
	Hit     bool          // the spin caught the completion
}

// Trace collects waits in memory and writes them out on Close.
type Trace struct {
	mu     sync.Mutex // a persistent server's connections share one trace
	path   string
	header string
	waits  []Wait
}

// TraceFromEnv returns a trace writing to $RDMACTL_WAIT_TRACE, or nil
// (which records nothing) when it is unset. header describes the run.
func TraceFromEnv(header string) *Trace {
	path := os.Getenv(TraceEnv)
	if path == "" {
		return nil
	}
	return &Trace{path: path, header: header}
}

// Add records one wait.
func (t *Trace) Add(w Wait) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if len(t.waits) < maxTraceWaits {
		t.waits = append(t.waits, w)
	}
	t.mu.Unlock()
}

// Close appends the recorded waits to the trace file.
func (t *Trace) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# %s\n", t.header)
	for _, x := range t.waits {
		hit := 0
		if x.Hit {
			hit = 1
		}
		fmt.Fprintf(w, "%s %d %d %d\n", x.Site, x.Latency.Nanoseconds(), x.Spun.Nanoseconds(), hit)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadTrace parses a trace file: "# comment" lines, then one
// "site latency_ns spun_ns hit" line per wait.
func ReadTrace(r io.Reader) ([]Wait, error) {
	var out []Wait
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		var w Wait
		var lat, spun int64
		var hit int
		if _, err := fmt.Sscanf(s, "%s %d %d %d", &w.Site, &lat, &spun, &hit); err != nil {
			return nil, fmt.Errorf("trace line %d: %v", line, err)
		}
		w.Latency, w.Spun, w.Hit = time.Duration(lat), time.Duration(spun), hit == 1
		out = append(out, w)
	}
	return out, sc.Err()
}
