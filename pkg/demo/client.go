package demo

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The client's flow: connect, post the receive, take the server's
// message, RDMA-read the server's buffer and RDMA-write into it.

// dialServer is the original's sock_connect(server, port) with its error
// lines, bounded by the timeout.
func (r *runner) dialServer() bool {
	var err error
	r.conn, err = dial(r.ctx, r.opts.Server, r.opts.TCPPort, r.opts.timeout())
	if err == nil {
		return true
	}
	r.dialErr = err
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		msg := "Temporary failure in name resolution"
		if dnsErr.IsNotFound {
			msg = "Name or service not known"
		}
		r.fail("%s for %s:%d", msg, r.opts.Server, r.opts.TCPPort)
	} else {
		r.printf("failed connect \n")
		if errors.Is(err, syscall.ECONNREFUSED) {
			r.hint(cli.NothingListensHint(fmt.Sprintf("%s port %d", r.opts.Server, r.opts.TCPPort), "rdmactl demo"))
		}
	}
	r.fail("Couldn't connect to %s:%d", r.opts.Server, r.opts.TCPPort)
	r.fail("failed to establish TCP connection to server %s, port %d", r.opts.Server, r.opts.TCPPort)
	return false
}

// postReceive posts the receive for the server's message into the whole
// buffer: variants of the example send messages of different lengths
// (16 bytes from the seed's ibv_demo, 18 from NVIDIA's), and a receive
// shorter than the message fails both sides.
func (r *runner) postReceive() bool {
	if err := r.res.postRecv(bufferSize); err != nil {
		r.fail("failed to post RR")
		r.fail("failed to post RR")
		return false
	}
	r.printf("Receive Request was posted\n")
	return true
}

// clientTransfer takes the message, then reads and writes the server's
// buffer. Its transfers move as many bytes as the server's message had,
// which is the server's MSG_SIZE: what the matching C client would move.
func (r *runner) clientTransfer() bool {
	buf := r.res.mr.Bytes()
	size := r.opts.msgSize()
	got := r.awaitCompletion("the server's SEND", true)
	switch got {
	case failed:
		r.fail("poll completion failed")
		return false
	case peerWentOn:
		fmt.Fprintf(r.errOut, "note: the server sent no message and went on (a build of the example without the SEND); continuing as its client does\n")
	}
	received := buf
	if got == completed {
		received = buf[:min(int(r.wc.ByteLen), len(buf))]
		if r.opts.Message == "" && r.wc.ByteLen > 0 {
			size = uint32(len(received))
		}
	}
	msg := cString(received)
	r.sum.Message = &msg
	r.printf("Message is: '%s'\n", msg)
	if err := r.syncByte('R'); err != nil {
		r.fail("sync error before RDMA ops")
		return false
	}
	if err := r.res.postSend(rdma.WRRDMARead, size, r.remote.Addr, r.remote.RKey); err != nil {
		r.fail("failed to post SR")
		r.fail("failed to post SR 2")
		return false
	}
	r.printf("RDMA Read Request was posted\n")
	if !r.pollCompletion("RDMA read") {
		r.fail("poll completion failed 2")
		return false
	}
	read := cString(buf)
	r.sum.ReadBack = &read
	r.printf("Contents of server's buffer: '%s'\n", read)
	putCString(buf, writeMsg)
	r.printf("Now replacing it with: '%s'\n", cString(buf))
	if err := r.res.postSend(rdma.WRRDMAWrite, size, r.remote.Addr, r.remote.RKey); err != nil {
		r.fail("failed to post SR")
		r.fail("failed to post SR 3")
		return false
	}
	r.printf("RDMA Write Request was posted\n")
	if !r.pollCompletion("RDMA write") {
		r.fail("poll completion failed 3")
		return false
	}
	if err := r.syncByte('W'); err != nil {
		r.fail("sync error after RDMA ops")
		return false
	}
	return true
}
