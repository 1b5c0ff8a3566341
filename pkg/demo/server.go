package demo

import "github.com/rdmactl/rdmactl/pkg/rdma"

// The server's flow: wait for the client, print the port, SEND the
// message, then let the client read and write its buffer.

// acceptClient is the original's sock_connect(NULL, port) with its error
// lines, bounded by the timeout.
func (r *runner) acceptClient() bool {
	r.printf("waiting on port %d for TCP connection\n", r.opts.TCPPort)
	var err error
	r.conn, err = listenAccept(r.ctx, r.opts.TCPPort, r.opts.timeout())
	if err != nil {
		r.fail("server accept: %s", rdma.Perror(err))
		r.fail("accept() failed")
		r.fail("failed to establish TCP connection with client on port %d", r.opts.TCPPort)
		return false
	}
	return true
}

// printPort is the port block the seed's server prints.
func (r *runner) printPort() {
	r.printf("\t\t\tstate:\t\t\t%s (%d)\n", r.port.State, uint32(r.port.State))
	r.printf("\t\t\tsm_lid:\t\t\t%d\n", r.port.SMLID)
	r.printf("\t\t\tport_lid:\t\t%d\n", r.port.LID)
	r.printf("\t\t\tport_lmc:\t\t0x%02x\n", r.port.LMC)
	r.printf("\t\t\tlink_layer:\t\t%s\n", r.port.LinkLayer)
}

// serverTransfer SENDs the message, fills the buffer for the client's
// RDMA read, and prints what the client's RDMA write left in it.
func (r *runner) serverTransfer() bool {
	buf := r.res.mr.Bytes()
	if err := r.res.postSend(rdma.WRSend, r.opts.msgSize(), 0, 0); err != nil {
		r.fail("failed to post SR")
		r.fail("failed to post sr")
		return false
	}
	r.printf("Send Request was posted\n")
	if !r.pollCompletion("SEND") {
		r.fail("poll completion failed")
		return false
	}
	putCString(buf, readMsg)
	if err := r.syncByte('R'); err != nil {
		r.fail("sync error before RDMA ops")
		return false
	}
	if err := r.syncByte('W'); err != nil {
		r.fail("sync error after RDMA ops")
		return false
	}
	final := cString(buf)
	r.sum.Buffer = &final
	r.printf("Contents of server buffer: '%s'\n", final)
	return true
}
