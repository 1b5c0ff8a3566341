// Package counterstest gives tests a counters.Source that answers with
// recorded port counters, as a run would see them before and after.
package counterstest

import "github.com/rdmactl/rdmactl/pkg/host"

// Replay answers its Reads in turn, then repeats the last one; with Err
// set every read fails.
type Replay struct {
	Reads [][]host.PortCounters
	Err   error
	n     int
}

// NewReplay answers reads in turn.
func NewReplay(reads ...[]host.PortCounters) *Replay { return &Replay{Reads: reads} }

// PortCounters is the next recorded read.
func (r *Replay) PortCounters() ([]host.PortCounters, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	i := min(r.n, len(r.Reads)-1)
	r.n++
	return r.Reads[i], nil
}
