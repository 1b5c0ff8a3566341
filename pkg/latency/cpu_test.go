package latency

import (
	"testing"
	"time"
)

func TestProcessCPUCountsBusyWork(t *testing.T) {
	before := ProcessCPU()
	end := time.Now().Add(30 * time.Millisecond)
	x := 0
	for time.Now().Before(end) {
		x++
	}
	used := ProcessCPU().Sub(before)
	if used.Total() < 10*time.Millisecond {
		t.Fatalf("30 ms of spinning counted as %v (%d)", used.Total(), x)
	}
	if per := used.Per(10); per.Total() > used.Total()/9 {
		t.Fatalf("Per: %v of %v", per, used)
	}
	if (CPU{User: 1}).Per(0) != (CPU{}) {
		t.Fatal("Per(0)")
	}
}
