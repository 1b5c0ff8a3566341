package ping

import (
	"bytes"
	"net/netip"
	"runtime"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// rping's client flow: resolve, connect, then the ping loop.

func (r *runner) client(ec rdma.EventChannel, id rdma.CMID) int {
	o := r.o
	c := newConn(o, r.out, false, id, ec)
	defer r.keep(c)
	c.stats = r.stats
	c.checkEcho = o.Validate || o.verdictModes()
	defer r.catchInterrupt(c)()

	// rping_bind_client
	dst := netip.AddrPortFrom(r.dst, uint16(o.Port))
	if err := id.ResolveAddr(r.src, dst, rdmaRouteTimeoutMs*time.Millisecond); err != nil {
		r.errorf("%v\n", err)
		c.failure.note(failure{call: err})
		return -1
	}
	if err := c.waitPost(c.deadline(), stepResolve); err != nil {
		return -1
	}
	if !c.take(RouteResolved, "waiting for addr/route resolution") {
		return -1
	}
	c.debugf("rdma_resolve_addr - rdma_resolve_route successful\n")

	defer c.close()
	if ret := r.prepare(c); ret != 0 {
		return ret
	}

	if ret := r.connect(c); ret != 0 {
		r.errorf("connect error %d\n", ret)
		return ret
	}
	c.pinging = true
	ret := c.testClient()
	interrupted := c.interrupted != nil && c.interrupted.Load()
	if interrupted {
		ret = 0 // ^C under --stats ends the run as it ends ping's
	}
	if ret != 0 && c.failure.timeout == nil {
		r.errorf("rping client failed: %d\n", ret)
	}
	c.disconnect()
	return ret
}

// connect is rping_connect_client.
func (r *runner) connect(c *conn) int {
	if err := c.id.Connect(c.connParam()); err != nil {
		r.errorf("%v\n", err)
		c.failure.note(failure{call: err})
		return -1
	}
	if err := c.waitPost(c.deadline(), stepConnect); err != nil {
		return -1
	}
	if !c.take(Connected, "wait for CONNECTED") {
		return -1
	}
	if r.o.SelfQP {
		if err := c.id.ReadyOwnQP(c.qp); err != nil {
			r.errorf("rping_modify_qp: %s\n", rdma.Strerror(syscall.Errno(rdma.ErrnoOf(err))))
			return rdma.ErrnoOf(err)
		}
		if err := c.id.Establish(); err != nil {
			r.errorf("%v\n", err)
			return -1
		}
	}
	c.debugf("rdma_connect successful\n")
	return 0
}

// testClient is rping's ping loop on the client (rping_test_client).
// It returns rping's return value; a wait error ends it with -1.
func (c *conn) testClient() int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	start, sink := c.startMR.Bytes(), c.rdmaMR.Bytes()
	if c.stats != nil {
		c.stats.beginPings()
	}
	ret := 0
	for seq := 0; c.o.Count == 0 || seq < c.o.Count; seq++ {
		if c.interrupted != nil && c.interrupted.Load() {
			break
		}
		c.seq = seq
		c.state = ReadAdv
		FillPattern(start, seq)
		var t0 time.Time
		if c.stats != nil {
			t0 = time.Now()
		}
		deadline := c.deadline()

		if err := c.postInfo(c.startMR); err != nil {
			c.errorf("post send error %d\n", rdma.ErrnoOf(err))
			ret = rdma.ErrnoOf(err)
			break
		}
		if err := c.waitPost(deadline, stepRead); err != nil {
			return -1
		}
		if !c.take(WriteAdv, "wait for RDMA_WRITE_ADV") {
			ret = -1
			break
		}

		if err := c.postInfo(c.rdmaMR); err != nil {
			c.errorf("post send error %d\n", rdma.ErrnoOf(err))
			ret = rdma.ErrnoOf(err)
			break
		}
		if err := c.waitPost(deadline, stepEcho); err != nil {
			return -1
		}
		if !c.take(WriteComplete, "wait for RDMA_WRITE_COMPLETE") {
			ret = -1
			break
		}

		same := !c.checkEcho || bytes.Equal(start, sink)
		if c.o.Validate && !same {
			c.errorf("data mismatch!\n")
			ret = -1
			break
		}
		if !same && c.mismatch == 0 {
			c.mismatch = seq + 1
		}
		c.completed++
		if c.o.Verbose {
			c.out.line(pingDataPrefix, rdma.CString(sink))
		}
		if c.stats != nil {
			rtt := time.Since(t0)
			c.stats.add(rtt)
			if c.o.Stats && !c.o.JSON {
				c.out.line(c.stats.pingLine(seq, rtt))
			}
		}
	}
	if c.state == Disconnected {
		return 0
	}
	return ret
}

var (
	pingDataPrefix       = []byte("ping data: ")
	serverPingDataPrefix = []byte("server ping data: ")
)
