package cm

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/rdmactl/rdmactl/pkg/rdma/rdmatest"
)

// answerClient runs tool's client with -C count -S size against a
// responder and returns the answer, the client's run and how long the
// responder went on after the client ended.
func answerClient(t *testing.T, f *rdmatest.Fabric, tool string, count, size int) (Result, result, time.Duration) {
	t.Helper()
	ps, port := rdma.PortSpaceTCP, 7471
	if tool == "udaddy" {
		ps, port = rdma.PortSpaceUDP, 7174
	}
	var clientEnded time.Time
	client := options(f, tool, func(o *Options) { o.Server, o.Count, o.Size = "10.9.0.1", count, size })
	_, res, c := answerOne(t, f, ps, port, func() result {
		c := run(client)
		clientEnded = time.Now()
		return c
	})
	return res, c, time.Since(clientEnded)
}

// A responder that knows neither -C nor -S answers each client, and
// ends its session once the client, done, falls silent: after the
// silence's floor, as the fabric is fast. 3 × rcRecvWindow replies
// outrun the receives kept posted for them.
func TestAnswerAnyCountAndSize(t *testing.T) {
	for _, tc := range []struct {
		tool        string
		count, size int
	}{
		{"udaddy", 3, 50},
		{"udaddy", MaxUDMessages, 1024},
		{"ucmatose", 25, 4000},
		{"ucmatose", 3 * rcRecvWindow, 1},
		{"ucmatose", 2, MaxRCMessageSize},
	} {
		t.Run(tc.tool+" -C "+strconv.Itoa(tc.count)+" -S "+strconv.Itoa(tc.size), func(t *testing.T) {
			t.Parallel()
			f, _, _ := newFabric()
			start := time.Now()
			res, c, after := answerClient(t, f, tc.tool, tc.count, tc.size)
			took := time.Since(start)
			if c.code != 0 || !strings.Contains(c.out, "data transfers complete\n") {
				t.Errorf("client %+v", c)
			}
			if !res.OK || res.Messages != 2*tc.count || res.Answered == nil || *res.Answered != (Answered{tc.count, tc.size}) {
				t.Errorf("answer %+v (answered %+v)", res, res.Answered)
			}
			// udaddy's client exits after its last reply; ucmatose's
			// waits for the responder's disconnect.
			if tc.tool == "udaddy" && (after < pollwait.SilenceFloor-100*time.Millisecond || after > pollwait.SilenceFloor+2*time.Second) {
				t.Errorf("the responder ended %v after the client, want about %v", after, pollwait.SilenceFloor)
			}
			if tc.tool == "ucmatose" && (took < pollwait.SilenceFloor || took > pollwait.SilenceFloor+3*time.Second) {
				t.Errorf("the session took %v, want the silence's floor (%v) and a little", took, pollwait.SilenceFloor)
			}
			if tc.tool == "ucmatose" && !retriesRNRWithoutEnd(f) {
				t.Errorf("the responder's QP does not retry RNR NAKs without end: %+v", f.QPRecords())
			}
		})
	}
}

// Beyond the bounds the session fails with a line naming the bound and
// a hint with the flag that keeps within it.
func TestAnswerRefusesBeyondTheBounds(t *testing.T) {
	for _, tc := range []struct {
		tool              string
		count, size       int
		message, hint     string
		clientCanPassHere bool
	}{
		{"udaddy", MaxUDMessages + 1, 100,
			"more than 1024 messages arrived, the most serve takes from an udaddy client: the client waits for replies to the rest, which were dropped",
			"run udaddy with -C 1024 or less", false},
		{"ucmatose", 2, MaxRCMessageSize + 1,
			"a reply larger than 65536 bytes (64 KiB), the most serve takes from a ucmatose client, arrived (its receive failed: local length error)",
			"run ucmatose with -S 65536 or less", true},
		{"ucmatose", 0, 100, "the client connected but exchanged no message in 2s",
			"serve answers ucmatose clients of -C 1 or more and -S 1 or more; one of -C 0 or -S 0 exchanges nothing, which serve cannot tell from a client that stopped", true},
	} {
		t.Run(tc.tool+" -C "+strconv.Itoa(tc.count)+" -S "+strconv.Itoa(tc.size), func(t *testing.T) {
			t.Parallel()
			f, _, _ := newFabric()
			res, c, _ := answerClient(t, f, tc.tool, tc.count, tc.size)
			if res.OK || res.Error != tc.message || res.Hint != tc.hint || res.Answered != nil {
				t.Errorf("answer %+v", res)
			}
			// The C tools check no completion's status: a ucmatose
			// client whose replies failed still ends as the server
			// disconnects.
			if !tc.clientCanPassHere && c.code == 0 {
				t.Errorf("client passed: %+v", c)
			}
		})
	}
}

// retriesRNRWithoutEnd says whether the responder's RC QP, its own,
// sends with RNR retry 7, whatever the client asked for (0).
func retriesRNRWithoutEnd(f *rdmatest.Fabric) bool {
	for _, r := range f.QPRecords() {
		if r.Type == rdma.QPTypeRC && !r.CM && r.Readied && r.RTS.RNRRetry == 7 {
			return true
		}
	}
	return false
}
