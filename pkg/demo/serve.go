package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// ServeConn runs the server side of the demo over conn, a TCP connection
// the caller accepted (rdmactl serve accepts them in a loop), and closes
// it. It prints nothing; the summary says how it went (OK: the
// client's SEND, READ and WRITE all completed). opts.RDMA is the verbs.
//
// A client sends its connection record without waiting for the server's
// (the example's sock_sync_data writes, then reads), so the server reads
// and checks it before it opens the device: a connection that sends
// nothing within firstByte, or no record, never gets a QP or a buffer.
func ServeConn(opts Options, conn net.Conn, firstByte time.Duration) Summary {
	opts.Server = ""
	r := &runner{ctx: context.Background(), opts: opts, out: io.Discard, errOut: io.Discard, start: time.Now(), conn: conn}
	rec, err := readFirstRecord(conn, firstByte, opts.timeout())
	if err == nil {
		err = rec.Check()
	}
	if err != nil {
		r.fail("failed to exchange connection data between sides")
		r.hint(fmt.Sprintf("the client did not send a %d-byte connection record first (%v): is it an RC demo (rdmactl demo or RDMA_RC_example) on this TCP port?", RecordSize, err))
		_ = conn.Close()
		r.conclude(1)
		return r.sum
	}
	r.early = &rec
	r.conclude(r.run())
	return r.sum
}

// readFirstRecord reads the client's record: its first byte within
// firstByte, the whole of it within timeout.
func readFirstRecord(conn net.Conn, firstByte, timeout time.Duration) (Record, error) {
	begin := time.Now()
	if firstByte <= 0 || firstByte > timeout {
		firstByte = timeout
	}
	var b [RecordSize]byte
	if err := conn.SetReadDeadline(begin.Add(firstByte)); err != nil {
		return Record{}, err
	}
	n, err := conn.Read(b[:])
	if err == nil && n < RecordSize {
		if err = conn.SetReadDeadline(begin.Add(timeout)); err == nil {
			var m int
			m, err = io.ReadFull(conn, b[n:])
			n += m
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	switch {
	case n == 0 && errors.Is(err, os.ErrDeadlineExceeded):
		return Record{}, fmt.Errorf("nothing arrived within %v", firstByte)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return Record{}, fmt.Errorf("the client closed the connection after %d of %d bytes", n, RecordSize)
	case err != nil:
		return Record{}, fmt.Errorf("%d of %d bytes arrived: %w", n, RecordSize, err)
	}
	var rec Record
	return rec, rec.UnmarshalBinary(b[:])
}
