package checks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pingpong"
	"github.com/rdmactl/rdmactl/pkg/serve"
	"github.com/rdmactl/rdmactl/pkg/smoke"
)

// CheckPingpong runs only with --pingpong: ibv_rc_pingpong's client.
const CheckPingpong = "pingpong"

// pingpong runs ibv_rc_pingpong's client in-process against the peer's
// `rdmactl serve` (or an ibv_rc_pingpong server) on the perftest port,
// over the device and port the route check found, the GID chosen as -g
// auto. It runs the tool's defaults (serve answers any size and count)
// and validates what comes back.
func (cfg Config) pingpong(ctx context.Context, r Route) smoke.Result {
	o := &pingpong.Options{
		Verbs: cfg.RDMA, Kind: pingpong.RC, Server: r.Peer.String(), Port: cfg.PerfPort, Device: r.Device, IBPort: r.Port,
		Size: pingpong.RC.DefaultSize(), MTU: pingpong.DefaultMTU, RxDepth: pingpong.DefaultRxDepth, Iters: pingpong.DefaultIters,
		GIDIndex: -1, GIDAuto: true, Check: true, Timeout: remainingOr(ctx, 2*time.Minute),
	}
	doc := pingpong.Probe(ctx, o)
	if !doc.OK {
		res := smoke.Result{Message: "pingpong failed"}
		if doc.Error != nil {
			res.Message, res.Hint = doc.Error.Message, doc.Error.Hint
		}
		switch {
		case doc.Stopped != nil && ctx.Err() == context.DeadlineExceeded:
			res.Message, res.Hint = timedOut(doc, r.Peer.String())
		case strings.Contains(res.Message, "Couldn't connect to"):
			res.Hint = fmt.Sprintf("nothing answered on TCP port %d of %s: is `rdmactl serve` running there (systemctl status rdmactl-serve), a version that answers ibv_rc_pingpong, and is the port open?", cfg.PerfPort, r.Peer)
		case len(doc.InvalidPages) > 0:
			res.Message = fmt.Sprintf("the data that came back from %s was wrong in %d of the pages sent", r.Peer, len(doc.InvalidPages))
		case res.Hint == "" && len(doc.Remote) == 0:
			res.Hint = fmt.Sprintf("the exchange with %s TCP port %d did not complete: is it `rdmactl serve` (or ibv_rc_pingpong) there?", r.Peer, cfg.PerfPort)
		}
		return res
	}
	msg := fmt.Sprintf("%d RC round trips of %d bytes with %s TCP port %d over %s GID index %d, data validated",
		doc.Iters, doc.Size, r.Peer, cfg.PerfPort, doc.Device, gidOf(doc))
	if doc.UsecPerIter != nil {
		msg += fmt.Sprintf(": %.2f usec/iter", *doc.UsecPerIter)
	}
	return smoke.Result{OK: true, Message: msg}
}

func gidOf(d pingpong.Document) int {
	if d.GIDIndex == nil {
		return -1
	}
	return *d.GIDIndex
}

// timedOut says how far a pingpong run that smoke's time bound ended got,
// and what bound would have fitted it at the pace it went.
func timedOut(doc pingpong.Document, peer string) (message, hint string) {
	st := doc.Stopped
	ran := time.Duration(st.ElapsedSeconds * float64(time.Second)).Round(100 * time.Millisecond)
	message = fmt.Sprintf("timed out after %d of %d round trips with %s in %v", st.RoundTrips, doc.Iters, peer, ran)
	if st.RoundTrips == 0 {
		return message, "no round trip completed: the peer's side stopped, or the path drops RDMA traffic (UDP 4791)"
	}
	each := time.Duration(st.ElapsedSeconds / float64(st.RoundTrips) * float64(time.Second))
	need := (each * time.Duration(doc.Iters)).Round(time.Second)
	hint = fmt.Sprintf("%v per round trip: the %d round trips (the tool's default -n) need about %v: raise smoke's --timeout above that",
		each.Round(10*time.Microsecond), doc.Iters, need)
	if need >= serve.DefaultTimeout {
		hint += fmt.Sprintf(", and serve's --timeout on %s (%v unless set), which bounds its side", peer, serve.DefaultTimeout)
	}
	return message, hint
}
