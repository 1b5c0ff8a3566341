package perf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resolveFlags reads args (long name → value as typed) as cmd does and
// resolves them for test t.
func resolveFlags(t *testing.T, test Test, args map[string]string) (Options, error) {
	t.Helper()
	v := NewFlagValues()
	for long, text := range args {
		var f *Flag
		for i := range Flags {
			if Flags[i].Long == long {
				f = &Flags[i]
			}
		}
		if f == nil {
			t.Fatalf("no flag --%s", long)
		}
		switch p := f.ValueIn(v).(type) {
		case *string:
			*p = text
		case *int:
			n, err := strconv.Atoi(text)
			if err != nil {
				t.Fatal(err)
			}
			*p = n
		case *bool:
			*p = true
		case *int64:
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			*p = n
		default:
			t.Fatalf("--%s: a %T", long, p)
		}
	}
	return v.Resolve(test, func(long string) bool { _, ok := args[long]; return ok })
}

// TestRateLimitRefusals: the limiter's options are refused where
// perftest refuses them, with its words, and where it would wait for ever
// between bursts, with rdmactl's.
func TestRateLimitRefusals(t *testing.T) {
	for _, c := range []struct {
		test    Test
		args    map[string]string
		want    string
		perftst bool // perftest's refusal (exit 1), else rdmactl's usage error
	}{
		{WriteBW, map[string]string{"rate_limit": "0"}, "Rate limit must be non-negative", true},
		{WriteBW, map[string]string{"rate_limit": "abc"}, "Rate limit must be non-negative", true},
		{WriteBW, map[string]string{"rate_limit": "1", "rate_units": "k"}, "Invalid rate limit units. Please use M,g or p", true},
		{WriteBW, map[string]string{"rate_limit": "1", "rate_limit_type": "sw"}, "Invalid rate limit type flag. Please use HW, SW or PP.", true},
		{WriteBW, map[string]string{"burst_size": "-1"}, "Burst size must be non-negative", true},
		{WriteBW, map[string]string{"burst_size": "8"}, "Can't enable burst mode when rate limiter is off", true},
		{WriteBW, map[string]string{"rate_limit": "1", "rate_limit_type": "PP"}, "Packet Pacing is only supported for Raw Ethernet.", true},
		{WriteBW, map[string]string{"typical_pkt_size": "100"}, "Typical packet size only supports PP rate limiter", true},
		{WriteBW, map[string]string{"typical_pkt_size": "70000"}, "Typical pkt size should be between 0 and 65535", true},
		{SendLat, map[string]string{"rate_limit": "1", "rate_limit_type": "SW"}, "SW Rate limiter cann't be executed on non-BW, ATOMIC or bidirectional SEND tests", true},
		{AtomicBW, map[string]string{"rate_limit": "1", "rate_limit_type": "SW"}, "SW Rate limiter cann't be executed", true},
		{WriteBW, map[string]string{"rate_limit": "3"}, "Failed: Unknown rate limit value", true},
		{WriteBW, map[string]string{"rate_limit": "10.0"}, "Failed: Unknown rate limit value", true},
		{WriteBW, map[string]string{"rate_limit": "1000", "rate_units": "p"}, "Failed: pps rate limit units is not supported when setting HW rate limit", true},
		{WriteBW, map[string]string{"rate_limit": "10", "rdma_cm": ""}, "HW rate limit isn't supported yet with rdma_cm scenarios", true},
		{WriteBW, map[string]string{"rate_limit": "10", "run_infinitely": ""}, "run_infinitely does not support rate limit feature yet", true},
		{WriteBW, map[string]string{"rate_limit_type": "SW"}, "--rate_limit_type SW without --rate_limit", false},
		// 64 KiB at 0.001 Gb/s is 1 message a second: no burst of 128
		{WriteBW, map[string]string{"rate_limit": "0.001", "rate_limit_type": "SW"}, "make less than one burst of 128 a second", false},
		// -a's first size to run out of bursts is named
		{WriteBW, map[string]string{"rate_limit": "1", "rate_limit_type": "SW", "all": ""}, "1048576-byte messages at that rate", false},
	} {
		_, err := resolveFlags(t, c.test, c.args)
		var refusal *Refusal
		switch {
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("%v %v: %v, want %q", c.test, c.args, err, c.want)
		case c.perftst != errors.As(err, &refusal):
			t.Errorf("%v %v: %v is perftest's refusal: %v, want %v", c.test, c.args, err, !c.perftst, c.perftst)
		}
	}
	for _, c := range []struct {
		test Test
		args map[string]string
	}{
		{WriteBW, map[string]string{"rate_limit": "10"}},
		{WriteBW, map[string]string{"rate_limit": "100", "rate_units": "M"}}, // perftest looks the text up, whatever the unit
		{SendLat, map[string]string{"rate_limit": "10"}},                     // HW falls back at the connection
		{AtomicBW, map[string]string{"rate_limit": "10"}},
		{ReadBW, map[string]string{"rate_limit": "500", "rate_units": "p", "rate_limit_type": "SW", "burst_size": "4"}},
		{WriteBW, map[string]string{"rate_units": "M"}},
	} {
		if _, err := resolveFlags(t, c.test, c.args); err != nil {
			t.Errorf("%v %v: %v", c.test, c.args, err)
		}
	}
}

// TestPaceAsPerftest: the schedule is perftest's, messages a second in
// an int cut into bursts of the burst size (default the TX depth).
func TestPaceAsPerftest(t *testing.T) {
	for _, c := range []struct {
		limit RateLimit
		size  int
		burst int
		gap   time.Duration
	}{
		// 1 Gb/s of 64 KiB: 1907 a second, 14 bursts of 128
		{RateLimit{Rate: 1, Text: "1", Type: "SW"}, 65536, 128, time.Second / 14},
		// 16 MiB/s of 64 KiB: 256 a second, 25 bursts of 10
		{RateLimit{Rate: 16, Text: "16", Units: "M", Type: "SW", Burst: 10}, 65536, 10, time.Second / 25},
		{RateLimit{Rate: 1000, Text: "1000", Units: "p", Type: "SW", Burst: 1}, 2, 1, time.Millisecond},
		// HW given by default limits in software on RoCE
		{RateLimit{Rate: 10, Text: "10"}, 65536, 128, time.Second / 149},
	} {
		l := c.limit
		r, err := Options{Test: WriteBW, RateLimit: &l, Size: c.size}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		if p := r.pace(c.size); p.Burst != c.burst || p.Gap != c.gap {
			t.Errorf("%+v, %d bytes: %+v, want bursts of %d every %v", l, c.size, p, c.burst, c.gap)
		}
	}
	hw := RateLimit{Rate: 10, Text: "10", Type: "HW"}
	if r, err := (Options{Test: WriteBW, RateLimit: &hw}).Resolve(); err != nil || r.pace(65536).Gap != 0 {
		t.Errorf("HW given by name: %v, %+v; want no pace (it fails at the connection)", err, r.pace(65536))
	}
}

// TestRateLimitPacesTheSender: write_bw and send_bw's clients keep to
// the rate, on the monotonic clock; an unlimited run is far faster. The
// server says nothing of it; on this RoCE port HW falls back to SW with
// perftest's line on each side, and HW given by name fails.
func TestRateLimitPacesTheSender(t *testing.T) {
	bw := regexp.MustCompile(`(?m)^ 65536 +60 +[0-9.]+ +([0-9.]+)`)
	for _, test := range []Test{WriteBW, SendBW} {
		for _, limit := range []*RateLimit{nil, {Rate: 16, Text: "16", Units: "M", Type: "SW", Burst: 10}} {
			f := newFabric()
			f.SetWireTime(0)
			o := Options{Test: test, GIDIndex: 1, IBPort: 1, Iters: 60, TxDepth: 10, RateLimit: limit}
			start := time.Now()
			_, cli, serr, cerr := runPair(t, f, o)
			took := time.Since(start)
			if serr != nil || cerr != nil {
				t.Fatalf("%v: server %v, client %v", test, serr, cerr)
			}
			m := bw.FindStringSubmatch(cli)
			if m == nil {
				t.Fatalf("%v: no row:\n%s", test, cli)
			}
			avg, _ := strconv.ParseFloat(m[1], 64)
			switch {
			case limit == nil && avg < 100:
				t.Errorf("%v unlimited: %.2f MB/sec", test, avg)
			// 6 bursts 40 ms apart: 60 messages over 200 ms
			case limit != nil && (avg < 8 || avg > 24 || took < 200*time.Millisecond):
				t.Errorf("%v at 16 MiB/s in bursts of 10: %.2f MB/sec in %v", test, avg, took)
			}
		}
	}
	stderrOf := func(l RateLimit) (srvErr, cliErr string, err error) {
		var serr, cerr bytes.Buffer
		o := Options{Test: WriteBW, GIDIndex: 1, IBPort: 1, Iters: 20, TxDepth: 10, RateLimit: &l}
		_, _, se, ce := runPairOut(t, newFabric(), o, &serr, &cerr)
		if se != nil && ce == nil {
			ce = fmt.Errorf("server: %w", se)
		}
		return serr.String(), cerr.String(), ce
	}
	for _, c := range []struct {
		l    RateLimit
		want string
	}{
		{RateLimit{Rate: 10, Text: "10"}, hwFallbackLine},
		{RateLimit{Rate: 1, Text: "1", Type: "SW"}, " Setting burst size to tx depth = 10\n"},
	} {
		s, c2, err := stderrOf(c.l)
		if err != nil || s != c.want || c2 != c.want {
			t.Errorf("%+v: %v; stderr %q and %q, want %q on both", c.l, err, s, c2, c.want)
		}
	}
	if _, _, err := stderrOf(RateLimit{Rate: 10, Text: "10", Type: "HW"}); err == nil || !strings.Contains(err.Error(), "The QP failed to accept HW rate limit") {
		t.Errorf("HW by name on RoCE: %v", err)
	}
}

// The SW limiter refused on a test perftest runs it not on: with no
// --burst_size, perftest's parser first says that the burst is the TX
// depth (on stderr), then refuses. rdmactl's refusal carries that notice,
// which the command prints before it (TestPerfSWLimiterRefusalNotice).
func TestSWLimiterRefusalSaysTheBurstFirst(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: SendLat, RateLimit: &RateLimit{Rate: 1, Text: "1", Type: "SW"}}, " Setting burst size to tx depth = 1\n"},
		{Options{Test: SendBW, Bidirectional: true, RateLimit: &RateLimit{Rate: 1, Text: "1", Type: "SW"}}, " Setting burst size to tx depth = 128\n"},
		{Options{Test: SendLat, RateLimit: &RateLimit{Rate: 1, Text: "1", Type: "SW", Burst: 4}}, ""},
	} {
		c.o.GIDIndex, c.o.IBPort = 1, 1
		var out, errOut bytes.Buffer
		_, err := execute(context.Background(), c.o, nil, &out, &errOut)
		var refused *Refusal
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "SW Rate limiter cann't be executed") {
			t.Errorf("%v -b=%v burst %d: %v, want the SW limiter's refusal", c.o.Test, c.o.Bidirectional, c.o.RateLimit.Burst, err)
		}
		if refused == nil || refused.Notice != c.want || errOut.Len() != 0 || out.Len() != 0 {
			t.Errorf("%v -b=%v burst %d: %#v, stderr %q, stdout %q; want the notice %q, for the command to print", c.o.Test, c.o.Bidirectional, c.o.RateLimit.Burst, refused, errOut.String(), out.String(), c.want)
		}
	}
}
