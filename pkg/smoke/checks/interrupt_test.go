package checks

import (
	"context"
	"testing"
	"time"
)

// A check's pings end when the run is interrupted, not when the check's
// own bound passes.
func TestInterruptOnlyFollowsTheRunNotTheBound(t *testing.T) {
	run, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	check, cancel := context.WithTimeout(run, time.Millisecond)
	defer cancel()
	pings, stop := interruptOnly(check)
	defer stop()
	<-check.Done()
	select {
	case <-pings.Done():
		t.Fatal("the check's bound ended its pings")
	case <-time.After(50 * time.Millisecond):
	}

	check, cancel = context.WithTimeout(run, time.Hour)
	defer cancel()
	pings, stop = interruptOnly(check)
	defer stop()
	interrupt()
	select {
	case <-pings.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the interrupt did not end the pings")
	}
}
