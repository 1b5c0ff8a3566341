package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/oob"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// toolError is a failure the tool reports in its own words: lines for
// stderr, exit status 1.
type toolError struct{ lines []string }

func (e *toolError) Error() string {
	if len(e.lines) == 0 {
		return "failed"
	}
	return e.lines[len(e.lines)-1]
}

func toolErr(lines ...string) error { return &toolError{lines: lines} }

// perror is perror(3)'s line for what a read or write returned: a short
// read leaves errno untouched, which the tools then print as Success.
func perror(prefix string, err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return prefix + ": " + rdma.Strerror(errno)
	}
	return prefix + ": Success"
}

// deadline is now+d, or none when d is negative.
func deadline(d time.Duration) time.Time {
	if d < 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// listenAccept waits for the one client, as pp_server_exch_dest: bind
// the port on every address, accept one connection, stop listening.
func listenAccept(ctx context.Context, port int, wait time.Duration) (net.Conn, error) {
	conn, err := oob.AcceptOne(ctx, "tcp", ":"+strconv.Itoa(port), wait)
	var oe *net.OpError
	switch {
	case err == nil:
		return conn, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &oe) && oe.Op == "listen":
		return nil, toolErr(fmt.Sprintf("Couldn't listen to port %d", port))
	case oob.IsTimeout(err):
		return nil, &cli.TimeoutError{After: wait, Doing: fmt.Sprintf("waiting for a client on port %d", port)}
	}
	return nil, toolErr("accept() failed")
}

// dial connects to server:port as pp_client_exch_dest, resolving the
// name with lookup when given.
func dial(ctx context.Context, lookup func(string) (netip.Addr, error), server string, port int, wait time.Duration) (net.Conn, error) {
	host := server
	if lookup != nil {
		a, err := lookup(server)
		if err != nil {
			var le *rdma.LookupError
			if errors.As(err, &le) {
				return nil, toolErr(fmt.Sprintf("%s for %s:%d", le.Msg, server, port))
			}
			return nil, toolErr(fmt.Sprintf("%v for %s:%d", err, server, port))
		}
		host = a.String()
	}
	conn, err := oob.Dial(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)), wait)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if lookup == nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) {
				return nil, toolErr(fmt.Sprintf("Name or service not known for %s:%d", server, port))
			}
		}
		if oob.IsTimeout(err) {
			return nil, &cli.TimeoutError{After: wait, Doing: fmt.Sprintf("connecting to %s:%d", server, port)}
		}
		return nil, toolErr(fmt.Sprintf("Couldn't connect to %s:%d", server, port))
	}
	return conn, nil
}

// readOnce is the tools' single read(2) of a record: short is a failure.
func readOnce(conn net.Conn, buf []byte) (int, error) {
	n, err := conn.Read(buf)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// readFull is srq's read loop. A peer that closes makes the C loop spin
// on reads of 0 bytes; here it is an error.
func readFull(conn net.Conn, buf []byte) (int, error) {
	n, err := io.ReadFull(conn, buf)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// clientExchange sends the records, reads the server's and says done.
func clientExchange(conn net.Conn, k Kind, mine []Dest, wait time.Duration) ([]Dest, error) {
	conn.SetDeadline(deadline(wait))
	n := len(mine)
	if k == SRQ {
		n = maxQP
	}
	for i := 0; i < n; i++ {
		if _, err := conn.Write(recordAt(mine, i)); err != nil {
			return nil, toolErr("Couldn't send local address")
		}
	}
	theirs := make([]Dest, n)
	buf := make([]byte, RecordSize)
	for i := 0; i < n; i++ {
		if k == SRQ {
			got, err := readFull(conn, buf)
			if err != nil {
				if oob.IsTimeout(err) {
					return nil, &cli.TimeoutError{After: wait, Doing: "reading the server's addresses"}
				}
				return nil, toolErr(perror("client read", err), fmt.Sprintf("%d/%d: Couldn't read remote address [%d]", got, RecordSize, i))
			}
		} else {
			got, err := readOnce(conn, buf)
			if oob.IsTimeout(err) {
				return nil, &cli.TimeoutError{After: wait, Doing: "reading the server's address"}
			}
			if got != RecordSize || err != nil {
				return nil, toolErr(perror("client read/write", err), "Couldn't read/write remote address")
			}
		}
		d, err := ParseRecord(buf)
		if err != nil {
			return nil, fmt.Errorf("the server's address: %w", err)
		}
		theirs[i] = d
	}
	if _, err := conn.Write(done); err != nil {
		if k == SRQ {
			return nil, toolErr(perror("client write", err))
		}
		return nil, toolErr(perror("client read/write", err), "Couldn't read/write remote address")
	}
	return theirs, nil
}

// serverReadDests reads the client's records.
func serverReadDests(conn net.Conn, k Kind, count int, wait time.Duration) ([]Dest, error) {
	conn.SetDeadline(deadline(wait))
	n := count
	if k == SRQ {
		n = maxQP
	}
	theirs := make([]Dest, n)
	buf := make([]byte, RecordSize)
	for i := 0; i < n; i++ {
		var got int
		var err error
		if k == SRQ {
			got, err = readFull(conn, buf)
		} else {
			got, err = readOnce(conn, buf)
		}
		if oob.IsTimeout(err) {
			return nil, &cli.TimeoutError{After: wait, Doing: "reading the client's address"}
		}
		if k == SRQ && err != nil {
			return nil, toolErr(perror("server read", err), fmt.Sprintf("%d/%d: Couldn't read remote address [%d]", got, RecordSize, i))
		}
		if got != RecordSize || err != nil {
			return nil, toolErr(perror("server read", err), fmt.Sprintf("%d/%d: Couldn't read remote address", got, RecordSize))
		}
		d, err := ParseRecord(buf)
		if err != nil {
			return nil, fmt.Errorf("the client's address: %w", err)
		}
		theirs[i] = d
	}
	return theirs, nil
}

// serverReply sends the server's records and waits for done.
func serverReply(conn net.Conn, k Kind, mine []Dest, wait time.Duration) error {
	conn.SetDeadline(deadline(wait))
	n := len(mine)
	if k == SRQ {
		n = maxQP
	}
	for i := 0; i < n; i++ {
		if _, err := conn.Write(recordAt(mine, i)); err != nil {
			if k == SRQ {
				return toolErr("Couldn't send local address")
			}
			return toolErr("Couldn't send/recv local address")
		}
	}
	buf := make([]byte, RecordSize)
	got, err := readOnce(conn, buf)
	if oob.IsTimeout(err) {
		return &cli.TimeoutError{After: wait, Doing: "waiting for the client's done"}
	}
	if got != len(done) {
		if k == SRQ {
			return toolErr(perror("client write", err))
		}
		return toolErr("Couldn't send/recv local address")
	}
	return nil
}

// recordAt is record i: srq sends zeroed records past its QPs.
func recordAt(d []Dest, i int) []byte {
	if i < len(d) {
		return d[i].MarshalRecord()
	}
	return Dest{}.MarshalRecord()
}
