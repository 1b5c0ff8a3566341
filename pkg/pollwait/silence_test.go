package pollwait

import (
	"testing"
	"time"
)

// TestSilence: the quiet that ends a session is twenty times its slowest
// gap, at least 2 s, never beyond the bound; the start is no gap.
func TestSilence(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := NewSilence(t0)
	s.Mark(t0.Add(time.Hour)) // the first completion, an hour after the start: no gap
	if got := s.Limit(0); got != 2*time.Second {
		t.Errorf("no gap yet: %v, want the floor", got)
	}
	s.Mark(t0.Add(time.Hour + 300*time.Millisecond))
	s.Mark(t0.Add(time.Hour + 400*time.Millisecond))
	if got := s.Limit(0); got != 6*time.Second {
		t.Errorf("slowest gap 300ms: %v, want 6s", got)
	}
	if got := s.Limit(5 * time.Second); got != 5*time.Second {
		t.Errorf("bound 5s: %v", got)
	}
	if got := s.Last(); !got.Equal(t0.Add(time.Hour + 400*time.Millisecond)) {
		t.Errorf("last %v", got)
	}
}
