package counters

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rise is an error counter that went up during a run.
type Rise struct {
	Device  string `json:"device"`
	Port    int    `json:"port"`
	Counter string `json:"counter"`
	Delta   uint64 `json:"delta"`
	// Kind is "retry" (the transport recovered) or "error".
	Kind    string `json:"kind"`
	Meaning string `json:"meaning"`
}

// Rises keeps the error counters among changes that went up.
func Rises(cs []Change) []Rise {
	out := []Rise{}
	for _, c := range cs {
		info := Lookup(c.Counter)
		if c.Delta == 0 || !info.IsError() {
			continue
		}
		kind := "error"
		if info.Kind == Retry {
			kind = "retry"
		}
		out = append(out, Rise{Device: c.Device, Port: c.Port, Counter: c.Counter, Delta: c.Delta, Kind: kind, Meaning: info.Meaning})
	}
	return out
}

// Watch brackets a run: Begin reads the counters, End reads them again and
// says which error counters rose. The counters are the host's, so traffic
// of others on the same ports counts too.
type Watch struct {
	src    Source
	before Snapshot
	ok     bool
}

// Begin reads the counters before a run; a nil src, or one that cannot be
// read, makes a Watch whose End reports nothing.
func Begin(src Source) *Watch {
	w := &Watch{src: src}
	if src == nil {
		return w
	}
	s, err := Take(src)
	w.before, w.ok = s, err == nil
	return w
}

// End returns the error counters that rose since Begin; nil when the
// counters could not be read (so "none rose" is an empty, non-nil slice).
func (w *Watch) End() []Rise {
	if w == nil || !w.ok {
		return nil
	}
	after, err := Take(w.src)
	if err != nil {
		return nil
	}
	return Rises(Diff(w.before, after))
}

// Summary is the port_counters member of a run's JSON document.
type Summary struct {
	// Retries: a retry counter rose; the run's operations were resent or
	// waited for, and may still have succeeded.
	Retries bool `json:"retries"`
	// Errors: an error counter rose (a QP gave up, a link went down).
	Errors bool   `json:"errors"`
	Rose   []Rise `json:"rose"`
}

// Summarize is rs for a JSON document; nil (the member left out) when the
// counters could not be read.
func Summarize(rs []Rise) *Summary {
	if rs == nil {
		return nil
	}
	s := &Summary{Rose: rs}
	for _, r := range rs {
		s.Retries = s.Retries || r.Kind == "retry"
		s.Errors = s.Errors || r.Kind == "error"
	}
	return s
}

// Line is a run's verdict on its counters in words, "" when none rose:
// "passed with retries: rxe0/1 completer_retry_err +28 (…)" for a run
// that passed, "error counters rose during the run: …" for one that failed.
func Line(rs []Rise, passed bool) string {
	if len(rs) == 0 {
		return ""
	}
	s := Summarize(rs)
	head := "error counters rose during the run"
	switch {
	case passed && s.Errors:
		head = "passed, but error counters rose"
	case passed:
		head = "passed with retries"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s %s +%d (%s)", link(r.Device, r.Port), r.Counter, r.Delta, r.Meaning)
	}
	return head + ": " + strings.Join(parts, "; ")
}

func link(dev string, port int) string { return dev + "/" + strconv.Itoa(port) }

// RisingNow reads the counters twice, gap apart, and returns the error
// counters that rose in between: what is going wrong right now. nil when
// the counters cannot be read.
func RisingNow(src Source, gap time.Duration) []Rise {
	w := Begin(src)
	if !w.ok {
		return nil
	}
	time.Sleep(gap)
	return w.End()
}
