package ping

import (
	"bytes"
	"strings"
	"testing"
)

// chunks records each Write it gets, to check where flushes happen.
type chunks struct{ writes []string }

func (c *chunks) Write(p []byte) (int, error) {
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func TestStdoutHoldsOutputUntilFlush(t *testing.T) {
	var w chunks
	s := newStdout(&w)
	s.line([]byte("ping data: "), []byte("abc"))
	if len(w.writes) != 0 {
		t.Fatalf("wrote before flush: %q", w.writes)
	}
	s.Flush()
	if got := strings.Join(w.writes, ""); got != "ping data: abc\n" {
		t.Fatalf("got %q", got)
	}
}

func TestStdoutFlushesFullBlocksLikeGlibc(t *testing.T) {
	var w chunks
	s := newStdout(&w) // not a file: 4096-byte blocks
	s.write([]byte(strings.Repeat("a", 4096)))
	if len(w.writes) != 0 {
		t.Fatalf("an exactly full buffer was written at once: %d writes", len(w.writes))
	}
	s.write([]byte("b"))
	if len(w.writes) != 1 || len(w.writes[0]) != 4096 {
		t.Fatalf("writes %d, want one block of 4096", len(w.writes))
	}
	// A write larger than a block fills the buffer, flushes it, writes
	// the whole blocks that follow directly and keeps the rest.
	s.write([]byte(strings.Repeat("c", 4095+2*4096+10)))
	if n := len(w.writes); n != 3 || len(w.writes[1]) != 4096 || len(w.writes[2]) != 2*4096 {
		t.Fatalf("writes %d: sizes %v", n, sizes(w.writes))
	}
	s.Flush()
	if got := w.writes[len(w.writes)-1]; got != strings.Repeat("c", 10) {
		t.Fatalf("remainder %q", got)
	}
}

func sizes(ws []string) []int {
	var n []int
	for _, w := range ws {
		n = append(n, len(w))
	}
	return n
}

func TestStdoutLineDoesNotAllocate(t *testing.T) {
	s := newStdout(&bytes.Buffer{})
	data := []byte("rdma-ping-0: ABC")
	if n := testing.AllocsPerRun(1000, func() { s.line(pingDataPrefix, data) }); n != 0 {
		t.Fatalf("%v allocations per line", n)
	}
}
