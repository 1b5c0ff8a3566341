package pollwait

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The traces in testdata were recorded in the lab (scripts/lab.sh run
// --smp N, rdmactl ping -C 400 at -S 64 with RDMACTL_WAIT_TRACE set),
// one file per vCPU count, wait mode and side. Under --busy-poll a wait's
// latency is when the completion arrived; under --no-spin it adds the
// wake-up. Replaying them asks: what would the policy have done?

type trace struct {
	cpus  int
	waits []Wait
}

var cpusRE = regexp.MustCompile(`cpus=(\d+)`)

func loadTrace(t *testing.T, name string) trace {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	m := cpusRE.FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no cpus= in its header", name)
	}
	cpus, _ := strconv.Atoi(string(m[1]))
	f, _ := os.Open(filepath.Join("testdata", name))
	defer f.Close()
	ws, err := ReadTrace(f)
	if err != nil || len(ws) < 100 {
		t.Fatalf("%s: %d waits, %v", name, len(ws), err)
	}
	return trace{cpus: cpus, waits: ws}
}

func (tr trace) site(names ...string) []Wait {
	var out []Wait
	for _, w := range tr.waits {
		for _, n := range names {
			if w.Site == n {
				out = append(out, w)
			}
		}
	}
	return out
}

type outcome struct {
	spin time.Duration
	hit  bool
}

// replay runs the policy over waits: a spin catches a completion that
// arrives within it; otherwise the wait blocks until the recorded time.
func replay(p *Policy, ws []Wait) []outcome {
	out := make([]outcome, len(ws))
	for i, w := range ws {
		s := p.Spin()
		hit := s > 0 && w.Latency <= s
		spun := s
		if hit {
			spun = w.Latency
		}
		p.Observe(w.Latency, spun, hit)
		out[i] = outcome{s, hit}
	}
	return out
}

func spinShare(os []outcome) (spins, hits float64) {
	var s, h int
	for _, o := range os {
		if o.spin > 0 {
			s++
		}
		if o.hit {
			h++
		}
	}
	return float64(s) / float64(len(os)), float64(h) / float64(len(os))
}

var traceSides = []string{"busy-poll-server", "busy-poll-client", "no-spin-server", "no-spin-client"}

func TestOneCPUAlwaysBlocks(t *testing.T) {
	for _, side := range traceSides {
		tr := loadTrace(t, "smp1-"+side+".trace")
		if tr.cpus != 1 {
			t.Fatalf("smp1-%s recorded with %d CPUs", side, tr.cpus)
		}
		for _, site := range []string{"read", "echo", "next-ping", "read-done", "sink-adv", "write-done"} {
			for i, o := range replay(New(Config{CPUs: tr.cpus}), tr.site(site)) {
				if o.spin != 0 {
					t.Fatalf("smp1-%s %s wait %d: spun %v on the only CPU", side, site, i, o.spin)
				}
			}
		}
	}
}

// At 2 vCPUs the completions of the server's own RDMA read and write
// arrive within microseconds: the policy spins for them, briefly.
func TestFastCompletionsGetABoundedSpin(t *testing.T) {
	for _, side := range []string{"busy-poll-server", "no-spin-server"} {
		tr := loadTrace(t, "smp2-"+side+".trace")
		if tr.cpus != 2 {
			t.Fatalf("smp2-%s recorded with %d CPUs", side, tr.cpus)
		}
		for _, site := range []string{"read-done", "write-done"} {
			out := replay(New(Config{CPUs: tr.cpus}), tr.site(site))
			for i, o := range out {
				if o.spin > DefaultMaxSpin {
					t.Fatalf("%s %s wait %d: spin %v beyond the cap", side, site, i, o.spin)
				}
			}
			spins, hits := spinShare(out)
			if spins < 0.9 || hits < 0.85 {
				t.Errorf("%s %s: spun in %.0f%% of waits, caught %.0f%%; want >= 90%%, >= 85%%", side, site, 100*spins, 100*hits)
			}
		}
	}
}

// Waiting for the peer's message takes the peer's whole turn (a median of
// hundreds of microseconds, a tail of milliseconds at 2 vCPUs), except
// in runs where the message is already there (the first poll finds it,
// whatever the policy says). Spinning for a message that is not there
// takes the CPU the peer needs: few spins may miss, and they may burn
// only a sliver of the time spent waiting.
func TestPeerWaitsRarelySpinInVain(t *testing.T) {
	for _, side := range traceSides {
		tr := loadTrace(t, "smp2-"+side+".trace")
		for _, site := range []string{"read", "echo", "next-ping", "sink-adv"} {
			ws := tr.site(site)
			if len(ws) == 0 {
				continue
			}
			out := replay(New(Config{CPUs: tr.cpus}), ws)
			var missed int
			var wasted, waited time.Duration
			for i, o := range out {
				waited += ws[i].Latency
				if o.spin > 0 && !o.hit {
					missed++
					wasted += o.spin
				}
			}
			if share := float64(missed) / float64(len(out)); share > 0.1 || wasted > waited/50 {
				t.Errorf("%s %s: %.0f%% of waits spun in vain, %v of %v waiting", side, site, 100*share, wasted, waited)
			}
		}
	}
}

// When a site's completions turn slow (own-completion latencies, then the
// peer-wait latencies of the same boot), spinning stops within a few
// waits, and resumes when they are fast again.
func TestSpinsStopWhenTheyStopPaying(t *testing.T) {
	tr := loadTrace(t, "smp2-busy-poll-server.trace")
	fast, slow := tr.site("read-done"), tr.site("sink-adv")
	p := New(Config{CPUs: 2})
	replay(p, fast)
	slowOut := replay(p, slow)
	if spins, _ := spinShare(slowOut[5:]); spins > 0.15 {
		t.Errorf("slow phase: spun in %.0f%% of waits after the first 5", 100*spins)
	}
	var wasted time.Duration
	for _, o := range slowOut {
		if o.spin > 0 && !o.hit {
			wasted += o.spin
		}
	}
	if wasted > 40*DefaultMaxSpin {
		t.Errorf("slow phase: %v spent in spins that missed", wasted)
	}
	again := replay(p, fast)
	if spins, _ := spinShare(again[20:]); spins < 0.85 {
		t.Errorf("fast again: spun in only %.0f%% of waits after the first 20", 100*spins)
	}
}

// When most completions come just past the spin cap, the latency estimate
// (a mean of 230 µs, under the 250 µs cap) would keep spinning and
// missing; the hit rate stops spinning, and blocked waits that a spin
// would have caught bring it back.
func TestMissingSpinsBackOff(t *testing.T) {
	p := New(Config{CPUs: 2})
	var mostlyLate []Wait
	for i := range 400 {
		d := 300 * time.Microsecond
		if i%4 == 0 {
			d = 20 * time.Microsecond
		}
		mostlyLate = append(mostlyLate, Wait{Latency: d})
	}
	out := replay(p, mostlyLate)
	spins, hits := spinShare(out[50:])
	if spins > 0.05 {
		t.Errorf("spun in %.0f%% of waits while 3 in 4 spins miss (caught %.0f%%)", 100*spins, 100*hits)
	}
	back := replay(p, repeat(20*time.Microsecond, 200))
	if spins, hits := spinShare(back[20:]); spins < 0.95 || hits < 0.95 {
		t.Errorf("fast again: spun in %.0f%%, caught %.0f%%", 100*spins, 100*hits)
	}
}

func repeat(d time.Duration, n int) []Wait {
	ws := make([]Wait, n)
	for i := range ws {
		ws[i] = Wait{Latency: d}
	}
	return ws
}

func TestModesOverrideMeasurements(t *testing.T) {
	busy, never := New(Config{Mode: BusyPoll, CPUs: 1}), New(Config{Mode: NoSpin, CPUs: 64})
	for range 100 {
		if s := busy.Spin(); s != Forever {
			t.Fatalf("busy-poll spin %v", s)
		}
		busy.Observe(time.Second, time.Second, false)
		if s := never.Spin(); s != 0 {
			t.Fatalf("no-spin spin %v", s)
		}
		never.Observe(time.Microsecond, 0, false)
	}
}

func TestAvailableCPUsFollowsTheAffinityMask(t *testing.T) {
	runtime.LockOSThread() // the mask is per thread; keep this one
	defer runtime.UnlockOSThread()
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		t.Fatal(err)
	}
	if got := AvailableCPUs(); got != orig.Count() {
		t.Fatalf("AvailableCPUs %d, mask has %d", got, orig.Count())
	}
	first := -1
	for i := range 1024 {
		if orig.IsSet(i) {
			first = i
			break
		}
	}
	var one unix.CPUSet
	one.Set(first)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Skipf("cannot narrow the affinity mask here: %v", err)
	}
	defer unix.SchedSetaffinity(0, &orig)
	if got := AvailableCPUs(); got != 1 {
		t.Fatalf("pinned to CPU %d, AvailableCPUs says %d", first, got)
	}
	if s := New(Config{}).Spin(); s != 0 {
		t.Fatalf("pinned to one CPU, the policy spins %v", s)
	}
}

func TestSpinPollStopsAtCompletionOrBudget(t *testing.T) {
	calls := 0
	n, _, err := SpinPoll(time.Second, func() (int, error) {
		calls++
		if calls == 3 {
			return 2, nil
		}
		return 0, nil
	})
	if n != 2 || err != nil || calls != 3 {
		t.Fatalf("n %d err %v calls %d", n, err, calls)
	}
	n, spent, _ := SpinPoll(2*time.Millisecond, func() (int, error) { return 0, nil })
	if n != 0 || spent < 2*time.Millisecond || spent > time.Second {
		t.Fatalf("n %d spent %v", n, spent)
	}
	boom := fmt.Errorf("boom")
	if _, _, err := SpinPoll(time.Second, func() (int, error) { return 0, boom }); err != boom {
		t.Fatalf("err %v", err)
	}
}

// Only an adaptive policy with a second CPU changes its spin with what it
// observes, so only it asks callers to time their waits.
func TestLearnsOnlyWhatCanChangeTheSpin(t *testing.T) {
	for _, c := range []struct {
		mode Mode
		cpus int
		want bool
	}{{Adaptive, 2, true}, {Adaptive, 1, false}, {BusyPoll, 4, false}, {NoSpin, 4, false}} {
		p := New(Config{Mode: c.mode, CPUs: c.cpus})
		if got := p.Learns(); got != c.want {
			t.Errorf("%v with %d CPUs: Learns %v, want %v", c.mode, c.cpus, got, c.want)
		}
		before := p.Spin()
		for range 50 {
			p.Observe(time.Millisecond, 0, false)
		}
		if changed := p.Spin() != before; changed && !c.want {
			t.Errorf("%v with %d CPUs: spin changed %v -> %v though it does not learn", c.mode, c.cpus, before, p.Spin())
		}
	}
}
