package cli

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestServerMemorySettings(t *testing.T) {
	restore := func() { debug.SetGCPercent(100); debug.SetMemoryLimit(math.MaxInt64) }
	restore()
	defer restore()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")

	TuneResponderMemory()
	if gc, lim := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); gc != serverGCPercent || lim != serverMemoryLimit {
		t.Fatalf("server: GOGC %d, limit %d", gc, lim)
	}
	restore()
	t.Setenv("GOGC", "200") // the environment wins (the runtime read it at start)
	TuneResponderMemory()
	if gc := debug.SetGCPercent(100); gc != 100 {
		t.Fatalf("GOGC set in the environment, yet the server changed it to %d", gc)
	}
}

func TestSessionEndedCollects(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	SessionEnded()
	runtime.ReadMemStats(&after)
	if after.NumGC <= before.NumGC {
		t.Fatalf("no collection: NumGC %d, then %d", before.NumGC, after.NumGC)
	}
}
