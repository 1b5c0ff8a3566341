package cli

import (
	"os"
	"runtime/debug"
)

// A long-running responder's (ping -s, serve) Go heap is a few hundred
// kilobytes (the lab, ping -s -P: 6.5 MB of anonymous memory in all, C
// libraries and thread stacks included), so the collector may run more often without costing much,
// and a soft limit well above the normal footprint stops a leak or a
// burst from growing the heap unchecked without ever forcing collections
// in normal operation. GOGC and GOMEMLIMIT in the environment win.
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
