package smoke

import (
	"io"
	"strings"
)

// TableStream prints WriteTable's table a row at a time, as the local
// checks and then each peer finish, for a person watching a terminal. The
// columns are as wide as what is known before the run (the peers' names,
// the checks' names), so a row need not wait for the others; the failures
// and the summary follow the last row, in the table's order.
type TableStream struct {
	w      io.Writer
	withBW bool
	widths []int
}

// rttWidth fits a round-trip time up to 999.999 ms.
const rttWidth = len("999.999 ms")

// NewTableStream prints the header for a run of checks against peers.
func NewTableStream(w io.Writer, peers, checks []string, withBW bool) *TableStream {
	s := &TableStream{w: w, withBW: withBW}
	head := tableHeader(withBW)
	for _, h := range head {
		s.widths = append(s.widths, len(h))
	}
	for _, p := range append([]string{localName}, peers...) {
		s.widths[0] = max(s.widths[0], len(p))
	}
	// The widest CHECKS cell of a peer: every check failed or skipped.
	marks := make([]string, len(checks))
	for i, c := range checks {
		marks[i] = c + ":FAIL"
	}
	s.widths[1] = max(s.widths[1], len(strings.Join(marks, " ")))
	s.widths[2], s.widths[3] = max(s.widths[2], rttWidth), max(s.widths[3], rttWidth)
	s.line(head)
	return s
}

// Local prints the local checks' row.
func (s *TableStream) Local(results []Result) {
	if len(results) > 0 {
		s.line(tableRow(localName, results, allOK(results), s.withBW))
	}
}

// Peer prints a finished peer's row.
func (s *TableStream) Peer(p PeerReport) { s.line(tableRow(p.Peer, p.Checks, p.OK, s.withBW)) }

// Finish prints the failures and the summary of the whole run.
func (s *TableStream) Finish(r Report) error { return writeFailures(s.w, r) }

// line writes cells padded to the columns' widths, two spaces apart, as
// WriteTable's tabwriter does.
func (s *TableStream) line(cells []string) {
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", max(s.widths[i]-len(c), 0)+2))
		}
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(s.w, b.String())
}
