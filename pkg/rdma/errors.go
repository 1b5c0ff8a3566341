package rdma

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

// Error is a failed call into the RDMA stack (a verbs, rdma_cm or sysfs
// operation). Its text is what perror(3) prints for it, "op: strerror";
// errors.Is(err, syscall.ENODEV) and the like work through Unwrap.
type Error struct {
	Op    string
	Errno syscall.Errno
}

func (e *Error) Error() string { return e.Op + ": " + Strerror(e.Errno) }
func (e *Error) Unwrap() error { return e.Errno }

// Errorf wraps errno from op; errno is positive, as C code sets errno.
func Errorf(op string, errno syscall.Errno) error { return &Error{Op: op, Errno: errno} }

// Strerror is the C library's text for e. Go's table comes from the same
// glibc strings with the first letter lowered; the few that differ
// otherwise are listed.
func Strerror(e syscall.Errno) string {
	if s, ok := glibcOnly[e]; ok {
		return s
	}
	s := e.Error()
	if s == "" || strings.HasPrefix(s, "errno ") {
		return "Unknown error " + strings.TrimPrefix(s, "errno ")
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var glibcOnly = map[syscall.Errno]string{133: "Memory page has hardware error"}

// Perror is the text perror(3) would print after a C tool's call failed
// with err: the C library's wording of the errno err carries (a deadline
// that passed is ETIMEDOUT), else err's own text.
func Perror(err error) string {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return Strerror(syscall.ETIMEDOUT)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return Strerror(errno)
	}
	return err.Error()
}

// ErrnoOf is the errno an error carries, as a C caller would see it in
// errno, or -1 when it carries none.
func ErrnoOf(err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return int(errno)
	}
	return -1
}
