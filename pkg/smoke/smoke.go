// Package smoke runs rdmactl's smoke checks against a set of peers and
// reports them for people (a table), scripts (JSON), CI systems (JUnit XML)
// and Prometheus (the node_exporter textfile format). The checks themselves
// (doctor, ping, the RC demo) are handed in as functions, so this package
// is pure Go and tested without RDMA.
package smoke

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// CheckFunc runs one check against peer ("" for a local check). It must
// return when ctx is done.
type CheckFunc func(ctx context.Context, peer string) Result

// Check is a named step. A check marked Gate stops the peer's remaining
// checks when it fails: a peer whose route cannot be resolved cannot be
// pinged either, and saying so three times helps nobody.
type Check struct {
	Name string
	Gate bool
	Run  CheckFunc
}

// Result is the outcome of one check.
type Result struct {
	Check    string        `json:"check"`
	OK       bool          `json:"ok"`
	Skipped  bool          `json:"skipped,omitempty"`
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"duration_seconds"`
	Message  string        `json:"message,omitempty"`
	Hint     string        `json:"hint,omitempty"`
	// RTT is set by checks that measure round trips (ping).
	RTT *RTT `json:"rtt,omitempty"`
	// BW is set by checks that measure bandwidth (write_bw).
	BW *BW `json:"bandwidth,omitempty"`
}

// BW is a bandwidth result. AvgMBps is perftest's "BW average[MB/sec]",
// whose MB is 2^20 bytes; BytesPerSecond is the same number in bytes.
type BW struct {
	Bytes          uint64  `json:"bytes"`
	Iterations     uint64  `json:"iterations"`
	AvgMBps        float64 `json:"bw_average_mb_per_sec"`
	BytesPerSecond float64 `json:"bytes_per_second"`
}

// RTT summarises round-trip times in seconds.
type RTT struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_seconds"`
	P99   float64 `json:"p99_seconds"`
	Max   float64 `json:"max_seconds"`
	Sum   float64 `json:"sum_seconds"`
}

// PeerReport is every check run against one peer.
type PeerReport struct {
	Peer   string   `json:"peer"`
	OK     bool     `json:"ok"`
	Checks []Result `json:"checks"`
}

// Report is the whole run: local checks first, then one entry per peer in
// the order the peers were given.
type Report struct {
	OK    bool         `json:"ok"`
	Local []Result     `json:"local"`
	Peers []PeerReport `json:"peers"`
	// Start and Duration are when the run began and how long it took
	// (for the Prometheus file, whose readers alert on stale results).
	Start    time.Time     `json:"-"`
	Duration time.Duration `json:"-"`
}

// Plan is what a smoke run does.
type Plan struct {
	Local       []Check
	PerPeer     []Check
	Peers       []string
	Timeout     time.Duration // bounds each check; 0 = no bound
	Concurrency int           // peers checked at once; <1 = 1
	// OnLocal, when set, is called once the local checks are done, and
	// OnPeer as each peer's checks are done, in the order they finish
	// (never two calls at once): a terminal shows results as they come.
	OnLocal func([]Result)
	OnPeer  func(PeerReport)
}

// ErrTimedOut is the message of a check that did not finish in time.
var ErrTimedOut = errors.New("timed out")

// Run executes the plan. Local checks run first, in order; then the peers,
// up to Concurrency at a time, each peer's checks in order.
func Run(ctx context.Context, p Plan) Report {
	r := Report{Local: []Result{}, Peers: make([]PeerReport, len(p.Peers)), Start: time.Now()}
	r.Local = runChecks(ctx, p.Local, "", p.Timeout)
	if p.OnLocal != nil {
		p.OnLocal(r.Local)
	}
	var reporting sync.Mutex

	n := p.Concurrency
	if n < 1 {
		n = 1
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, peer := range p.Peers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			checks := runChecks(ctx, p.PerPeer, peer, p.Timeout)
			r.Peers[i] = PeerReport{Peer: peer, OK: allOK(checks), Checks: checks}
			if p.OnPeer != nil {
				reporting.Lock()
				p.OnPeer(r.Peers[i])
				reporting.Unlock()
			}
		}()
	}
	wg.Wait()
	r.Duration = time.Since(r.Start)

	r.OK = allOK(r.Local)
	for _, pr := range r.Peers {
		r.OK = r.OK && pr.OK
	}
	return r
}

func runChecks(ctx context.Context, checks []Check, peer string, timeout time.Duration) []Result {
	out := make([]Result, 0, len(checks))
	gated := ""
	for _, c := range checks {
		if gated != "" {
			out = append(out, Result{Check: c.Name, Skipped: true, Message: "skipped: " + gated + " failed"})
			continue
		}
		if ctx.Err() != nil {
			// The run was interrupted: what has not started does not start.
			out = append(out, Result{Check: c.Name, Skipped: true, Message: "skipped: interrupted"})
			continue
		}
		res := runOne(ctx, c, peer, timeout)
		out = append(out, res)
		if !res.OK && c.Gate {
			gated = c.Name
		}
	}
	return out
}

// runOne bounds a check by timeout. A check that ignores its context is
// reported as timed out when the bound passes (plus a grace period for it
// to clean up); it is left to finish in the background.
func runOne(ctx context.Context, c Check, peer string, timeout time.Duration) Result {
	start := time.Now()
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	done := make(chan Result, 1)
	go func() { done <- c.Run(cctx, peer) }()

	var res Result
	select {
	case res = <-done:
	case <-afterGrace(cctx, timeout):
		res = Result{Message: stopped(ctx, timeout, time.Since(start))}
	}
	res.Check = c.Name
	res.Duration = time.Since(start)
	res.Seconds = res.Duration.Seconds()
	if !res.OK && res.Message == "" && cctx.Err() != nil {
		res.Message = stopped(ctx, timeout, res.Duration)
	}
	return res
}

// stopped says why a check's context ended: the run was interrupted
// (SIGINT, SIGTERM), after the time the check had run, or the check's own
// bound passed.
func stopped(run context.Context, timeout, ran time.Duration) string {
	if run.Err() != nil {
		return fmt.Sprintf("interrupted after %v", ran.Round(100*time.Millisecond))
	}
	return ErrTimedOut.Error() + " after " + timeout.String()
}

// checkGrace is how long a check may take to return after its context ends.
const checkGrace = 2 * time.Second

func afterGrace(ctx context.Context, timeout time.Duration) <-chan time.Time {
	if timeout <= 0 {
		return nil // wait as long as the check runs
	}
	ch := make(chan time.Time, 1)
	go func() {
		<-ctx.Done()
		time.Sleep(checkGrace)
		ch <- time.Now()
	}()
	return ch
}

func allOK(rs []Result) bool {
	for _, r := range rs {
		if !r.OK {
			return false
		}
	}
	return true
}
