package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// perfPortHint says who the perftest port answers.
const perfPortHint = "this port answers perftest's write_bw clients (ib_write_bw HOST, rdmactl smoke --bw) and ibv_rc_pingpong's (ibv_rc_pingpong -g N HOST, rdmactl pingpong rc -g auto HOST, rdmactl smoke --pingpong)"

// openingSize is how many bytes tell the perftest port's clients apart:
// ibv_rc_pingpong's address record starts with the LID as four hex
// digits and a ':' ("%04x:"), perftest's version with a digit and then
// digits and dots ("6.06"), which never hold a ':'.
const openingSize = 5

// perfPortSession answers a client of perftest's port, which both
// perftest and the pingpong tools use (18515): both send first, and their
// first bytes say which it is. Those bytes are read (the first within the
// first-byte timeout, the rest within the step timeout) and given back
// to the session, which reads the connection from its start. A pingpong
// client's whole record is read and checked before its session makes a
// QP, as perftest's version is before the write_bw session's.
func (cfg Config) perfPortSession(ctx context.Context, c net.Conn, slot chan struct{}) Entry {
	test, opening, err := readClientKind(c, cfg.FirstByte, cfg.Timeout)
	if err != nil {
		return Entry{Error: "no perftest or pingpong client: " + err.Error(), Hint: perfPortHint}
	}
	if test == TestPingpongRC {
		record, err := readRecord(c, opening, cfg.Timeout)
		if err != nil {
			return Entry{Test: TestPingpongRC, Error: err.Error(), Hint: pingpongHint}
		}
		return cfg.pingpongSession(ctx, replayConn{c, io.MultiReader(bytes.NewReader(record), c)})
	}
	return cfg.perfSession(ctx, c, opening, slot)
}

// readClientKind reads a client's first bytes until they say whose they
// are (at most openingSize), and returns its test and the bytes read.
func readClientKind(c net.Conn, firstByte, timeout time.Duration) (string, []byte, error) {
	begin := time.Now()
	b := make([]byte, openingSize)
	n := 0
	_ = c.SetReadDeadline(begin.Add(min(firstByte, timeout)))
	defer c.SetReadDeadline(time.Time{})
	for {
		m, err := c.Read(b[n:])
		n += m
		if test, decided := clientKind(b[:n]); decided {
			if test == "" {
				return "", nil, fmt.Errorf("its first bytes %q are neither a perftest version nor a pingpong address record", b[:n])
			}
			return test, b[:n], nil
		}
		switch {
		case n == 0 && errors.Is(err, os.ErrDeadlineExceeded):
			return "", nil, fmt.Errorf("nothing arrived within %v", min(firstByte, timeout))
		case err != nil:
			return "", nil, fmt.Errorf("%d bytes arrived, too few to tell its test (%q): %w", n, b[:n], err)
		}
		_ = c.SetReadDeadline(begin.Add(timeout))
	}
}

// clientKind says whose opening b starts: TestPingpongRC, TestWriteBW
// or "" for neither, once b decides it.
func clientKind(b []byte) (test string, decided bool) {
	other := func() (string, bool) {
		if b[0] >= '0' && b[0] <= '9' {
			return TestWriteBW, true
		}
		return "", true
	}
	for i := 0; i < len(b) && i < openingSize-1; i++ {
		if !isHex(b[i]) {
			return other()
		}
	}
	if len(b) < openingSize {
		return "", false
	}
	if b[openingSize-1] == ':' {
		return TestPingpongRC, true
	}
	return other()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
