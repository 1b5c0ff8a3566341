package ping

import "strconv"

// Size limits as rping enforces them. The lower bound is rping's
// RPING_MIN_BUFSIZE as the shipped binary computes it (23); the upper is
// one less than its 64 KiB buffer, which its error message quotes.
const (
	MinSize     = 23
	MaxSize     = 64*1024 - 1
	DefaultSize = 64
	DefaultPort = 7174
)

const (
	firstChar = 'A' // the rotating filler runs 'A'..'z'
	lastChar  = 'z'
	cycle     = lastChar - firstChar + 1
)

var prefix = []byte("rdma-ping-")

// FillPattern writes ping number seq's data into buf as rping does:
// "rdma-ping-<seq>: " followed by printable characters that start one
// further along 'A'..'z' at every ping, NUL-terminated in the last byte.
// seq must not be negative. It does not allocate.
func FillPattern(buf []byte, seq int) {
	if len(buf) == 0 {
		return
	}
	var num [24]byte
	head := strconv.AppendInt(num[:0], int64(seq), 10)
	// snprintf semantics: write what fits before the final NUL, but the
	// filler starts after the untruncated prefix.
	n := copy(buf[:len(buf)-1], prefix)
	n += copy(buf[n:len(buf)-1], head)
	copy(buf[n:len(buf)-1], ": ")
	full := len(prefix) + len(head) + 2
	if full < len(buf) {
		fillRotating(buf[full:], byte(firstChar+seq%cycle))
	}
	buf[len(buf)-1] = 0
}

// fillRotating writes 'A'..'z' from c on, wrapping: one cycle byte by
// byte, the rest by doubling copies (memmove), which at 64 KiB is many
// times faster than a byte loop, most of all under emulation.
func fillRotating(b []byte, c byte) {
	n := min(len(b), cycle)
	for i := range n {
		b[i] = c
		if c++; c > lastChar {
			c = firstChar
		}
	}
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}
