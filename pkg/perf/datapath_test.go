package perf

import (
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// failingStream is an endpoint whose bandwidth run fails after done
// completions.
type failingStream struct {
	rdma.PerfEndpoint
	done uint64
}

func (failingStream) Addr() uint64    { return 0x1000 }
func (failingStream) LKey(int) uint32 { return 1 }
func (f failingStream) Stream(rdma.Stream) (rdma.StreamResult, error) {
	return rdma.StreamResult{Completed: f.done}, rdma.ErrTimeout
}

// TestTimedStreamFailureHasNoIterationCount: a -D run that fails says
// how many completed and how long the run was to be, not "of 5000" (the
// -n default it never ran).
func TestTimedStreamFailureHasNoIterationCount(t *testing.T) {
	ep := failingStream{done: 42}
	s := Stream{Test: WriteBW, Size: 64, Iters: 5000, TxDepth: 128, CQMod: 100, Span: 8192, Remotes: []Dest{{}}}
	_, err := runStream(ep, s)
	if err == nil || !strings.Contains(err.Error(), "RDMA_WRITE after 42 of 5000:") {
		t.Errorf("an -n run: %v", err)
	}
	s.Duration = 5 * time.Second
	_, err = runStream(ep, s)
	if err == nil || strings.Contains(err.Error(), "5000") || !strings.Contains(err.Error(), "RDMA_WRITE after 42 completions of a 5s run:") {
		t.Errorf("a -D run: %v", err)
	}
}
