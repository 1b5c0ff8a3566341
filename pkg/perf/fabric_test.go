package perf

import (
	"net/netip"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// loopbackGID is rxe0's GID 1, the one the tests address each other by.
var loopbackGID = rdma.GIDFor(netip.MustParseAddr("127.0.0.1"))

// newFabric is an rdmatest fabric with one rxe0 (GID 0 link-local, GID 1
// ::ffff:127.0.0.1, both RoCE v2) whose messages take 1 ms each: a
// bandwidth row of 64 KiB messages reads 62.50 MB/sec.
func newFabric() *rdmatest.Fabric {
	f := rdmatest.NewFabric()
	f.AddDevice(rdmatest.DeviceConfig{Name: "rxe0", LinkLayer: rdma.LinkLayerEthernet, GIDs: []rdma.GIDEntry{
		{Index: 0, GID: rdma.GID{0: 0xfe, 1: 0x80, 15: 1}, Type: rdma.GIDTypeRoCEv2},
		{Index: 1, GID: loopbackGID, Type: rdma.GIDTypeRoCEv2},
	}})
	f.SetWireTime(time.Millisecond)
	return f
}

// latencyWire is a message's time in the latency tests: a 10 µs one-way
// latency.
const latencyWire = 10 * time.Microsecond

// perfQPs are the records of the QPs perf readied itself or through
// rdma_cm (not the CM's control QPs).
func perfQPs(f *rdmatest.Fabric) []rdmatest.QPRecord {
	var out []rdmatest.QPRecord
	for _, r := range f.QPRecords() {
		if r.Readied && !r.CM {
			out = append(out, r)
		}
	}
	return out
}

// stepClock is a session clock that advances 20 µs per reading: latency
// runs, which read it once per message, then report 10 µs one way.
func stepClock() func() int64 {
	var t int64
	return func() int64 { t += 20000; return t }
}

func init() { sessionClock = stepClock }
