package perf

import (
	"fmt"
	"strings"
)

// Test is one of perftest's everyday tests.
type Test int

// The tests, named as perftest's binaries without the "ib_" prefix.
const (
	SendBW Test = iota
	WriteBW
	ReadBW
	SendLat
	WriteLat
	ReadLat
	AtomicBW
	AtomicLat
)

var testNames = [...]string{"send_bw", "write_bw", "read_bw", "send_lat", "write_lat", "read_lat", "atomic_bw", "atomic_lat"}

func (t Test) String() string { return testNames[t] }

// TestNames lists the tests in the order help shows them.
func TestNames() []string { return testNames[:] }

// ParseTest reads a test name; "ib_write_bw" works too.
func ParseTest(s string) (Test, error) {
	name := strings.TrimPrefix(strings.ToLower(s), "ib_")
	for i, n := range testNames {
		if n == name {
			return Test(i), nil
		}
	}
	return 0, fmt.Errorf("unknown test %q: want one of %s", s, strings.Join(testNames[:], ", "))
}

// Latency says whether t is a latency (ping-pong) test.
func (t Test) Latency() bool { return t == SendLat || t == WriteLat || t == ReadLat || t == AtomicLat }

// IsSend, IsWrite and IsRead name the verb the test measures.
func (t Test) IsSend() bool   { return t == SendBW || t == SendLat }
func (t Test) IsWrite() bool  { return t == WriteBW || t == WriteLat }
func (t Test) IsRead() bool   { return t == ReadBW || t == ReadLat }
func (t Test) IsAtomic() bool { return t == AtomicBW || t == AtomicLat }

// fetches says whether the test's requests bring data back (RDMA reads
// and atomics): they are bounded by the outstanding reads both sides
// advertise.
func (t Test) fetches() bool { return t.IsRead() || t.IsAtomic() }

// Verb is perftest's name of the verb in its headers.
func (t Test) Verb() string {
	switch {
	case t.IsSend():
		return "Send"
	case t.IsWrite():
		return "RDMA_Write"
	case t.IsAtomic():
		return "Atomic"
	}
	return "RDMA_Read"
}

// rttFactor: ping-pong tests time two trips per sample, reads one.
func (t Test) rttFactor() int {
	if t.fetches() {
		return 1
	}
	return 2
}
