package cli

import (
	"os"
	"runtime/debug"
)

// A long-running responder's (ping -s -P, serve) Go heap is about a
// megabyte (the lab, ping -s -P: 1.6 MB of anonymous memory in all at
// start, 2.5 MB after 100 clients, C libraries and thread stacks included;
// most of its RSS is the binary's own pages), so the collector may run
// more often without costing much, and a soft limit well above the normal
// footprint stops a leak or a burst from growing the heap unchecked
// without ever forcing collections in normal operation. GOGC and
// GOMEMLIMIT in the environment win.
const (
	serverGCPercent   = 50
	serverMemoryLimit = 16 << 20
)

// TuneResponderMemory applies a responder's collector settings.
func TuneResponderMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serverMemoryLimit)
	}
}

// SessionEnded is what a responder calls when a client's session is over:
// it collects and hands the freed pages back. Such a heap stays below the
// collector's minimum goal (4 MB scaled by GOGC), so left alone it never
// collects and every session's garbage lands on fresh pages that stay
// resident (the lab, ping -s -P, 300 rping clients in a row: 9.0 -> 11.7
// MB without a collection; 10.8 MB from the 50th client to the 300th with
// one per session, 0.2-0.3 MB less with the pages handed back). For a
// heap this small both take well under a millisecond, against the several
// a connection takes to set up.
func SessionEnded() { debug.FreeOSMemory() }
