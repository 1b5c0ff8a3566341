package ping

import (
	"bytes"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/mattn/go-isatty"
)

// stdout buffers like C stdio does for rping's printf: line by line on a
// terminal, otherwise in blocks of the file's preferred I/O size, flushed
// when full and at exit. Keeping the same buffering keeps the byte order
// of stdout and stderr identical to rping's when both go to one file.
// It is safe for concurrent use (persistent server connections).
type stdout struct {
	mu       sync.Mutex
	w        io.Writer
	buf      []byte
	lineMode bool
}

func newStdout(w io.Writer) *stdout {
	size := 4096
	line := false
	if f, ok := w.(*os.File); ok {
		if isatty.IsTerminal(f.Fd()) {
			line = true
		}
		var st syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &st) == nil && st.Blksize > 0 {
			size = int(st.Blksize)
		}
	}
	return &stdout{w: w, buf: make([]byte, 0, size), lineMode: line}
}

// Write appends p. A full buffer is written out first; data beyond whole
// blocks stays buffered (as glibc's fwrite does). Write errors are
// ignored, as printf's are.
func (s *stdout) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.write(p)
	s.mu.Unlock()
	return len(p), nil
}

// line writes the concatenation of parts followed by a newline as one
// unit, so that concurrent connections never interleave within a line.
func (s *stdout) line(parts ...[]byte) {
	s.mu.Lock()
	for _, p := range parts {
		s.write(p)
	}
	s.write(newline)
	s.mu.Unlock()
}

var newline = []byte{'\n'}

func (s *stdout) write(p []byte) {
	block := cap(s.buf)
	// Like glibc, a write that exactly fills the buffer leaves it full
	// until the next write.
	if room := block - len(s.buf); len(p) > room {
		s.buf = append(s.buf, p[:room]...)
		p = p[room:]
		s.flushLocked()
		if whole := len(p) - len(p)%block; whole > 0 {
			_, _ = s.w.Write(p[:whole])
			p = p[whole:]
		}
	}
	s.buf = append(s.buf, p...)
	if s.lineMode && bytes.IndexByte(p, '\n') >= 0 {
		s.flushLocked()
	}
}

// Flush writes out what is buffered.
func (s *stdout) Flush() {
	s.mu.Lock()
	s.flushLocked()
	s.mu.Unlock()
}

func (s *stdout) flushLocked() {
	if len(s.buf) > 0 {
		_, _ = s.w.Write(s.buf)
		s.buf = s.buf[:0]
	}
}
