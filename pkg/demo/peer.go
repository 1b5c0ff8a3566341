package demo

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rdmactl/rdmactl/pkg/oob"
)

// The original only speaks IPv4 (getaddrinfo with AF_INET), so a C peer
// listens and connects over IPv4: rdmactl does the same.
const network = "tcp4"

// listenAccept waits up to timeout for one client on port, then stops
// listening, as the original's sock_connect(NULL, port) does.
func listenAccept(ctx context.Context, port int, timeout time.Duration) (net.Conn, error) {
	return oob.AcceptOne(ctx, network, ":"+strconv.Itoa(port), timeout)
}

// dial connects to server:port within timeout.
func dial(ctx context.Context, server string, port int, timeout time.Duration) (net.Conn, error) {
	return oob.Dial(ctx, network, net.JoinHostPort(server, strconv.Itoa(port)), timeout)
}

// exchange is the original's sock_sync_data: send local, then read exactly
// len(remote) bytes back. Unlike the original it gives up after timeout and
// on a closed connection instead of spinning.
func exchange(conn net.Conn, local, remote []byte, timeout time.Duration) error {
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	defer conn.SetDeadline(time.Time{})
	if _, err := conn.Write(local); err != nil {
		return err
	}
	n := 0
	for n < len(remote) {
		m, err := conn.Read(remote[n:])
		n += m
		if err != nil {
			return fmt.Errorf("read %d of %d bytes from the peer: %w", n, len(remote), err)
		}
	}
	return nil
}

// syncByte sends one marker byte and waits for the peer's.
func syncByte(conn net.Conn, marker byte, timeout time.Duration) error {
	var got [1]byte
	return exchange(conn, []byte{marker}, got[:], timeout)
}

// exchangeRecords swaps connection records; a record ServeConn already
// read is the peer's.
func (r *runner) exchangeRecords(local Record) (Record, error) {
	if r.early == nil {
		return exchangeRecords(r.conn, local, r.opts.timeout())
	}
	b, _ := local.MarshalBinary()
	if err := r.conn.SetWriteDeadline(time.Now().Add(r.opts.timeout())); err != nil {
		return Record{}, err
	}
	defer r.conn.SetWriteDeadline(time.Time{})
	_, err := r.conn.Write(b)
	return *r.early, err
}

// exchangeRecords swaps connection records.
func exchangeRecords(conn net.Conn, local Record, timeout time.Duration) (Record, error) {
	b, _ := local.MarshalBinary()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return Record{}, err
	}
	defer conn.SetDeadline(time.Time{})
	if _, err := conn.Write(b); err != nil {
		return Record{}, err
	}
	return ReadRecord(conn)
}
