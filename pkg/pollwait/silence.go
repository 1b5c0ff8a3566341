package pollwait

import "time"

// Silence is the quiet that ends a session whose length the responder
// does not know (rdmactl serve answering a client that never says how
// many messages it sends): many times the slowest gap between two of the
// session's completions, so that no pause within the client's run ends
// it, and at least a floor, which covers what a few gaps do not show: a
// client descheduled for a while, an RC retransmission.
type Silence struct {
	last    time.Time
	slowest time.Duration
	marked  bool
}

// SilenceFloor is the least quiet that ends a session; silencePaces is
// how many of its slowest gaps do.
const (
	SilenceFloor = 2 * time.Second
	silencePaces = 20
)

// NewSilence starts counting at now, before any completion.
func NewSilence(now time.Time) *Silence { return &Silence{last: now} }

// Mark notes a completion at now.
func (s *Silence) Mark(now time.Time) {
	if s.marked {
		s.slowest = max(s.slowest, now.Sub(s.last))
	}
	s.last, s.marked = now, true
}

// Last is when the last completion came (the start before any).
func (s *Silence) Last() time.Time { return s.last }

// Limit is the quiet that ends the session, never beyond bound (not
// positive: none).
func (s *Silence) Limit(bound time.Duration) time.Duration {
	d := max(SilenceFloor, silencePaces*s.slowest)
	if bound > 0 {
		d = min(d, bound)
	}
	return d
}
