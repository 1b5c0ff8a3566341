package ping

import (
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Mode says which side of the ping this process is.
type Mode int

const (
	ModeUnset Mode = iota
	ModeServer
	ModeClient
)

// Options are rping's flags plus rdmactl's extras.
type Options struct {
	Mode       Mode
	Addr       string // -a: address to bind (server) or connect to (client)
	AddrGiven  bool   // -a was on the command line (-a '' is rping's getaddrinfo failure)
	Source     string // -I: client source address
	Port       int    // -p
	Count      int    // -C: 0 = until interrupted
	Size       int    // -S
	Verbose    bool   // -v: print the ping data
	Validate   bool   // -V: compare the echoed data
	Debug      bool   // -d
	Persistent bool   // -P: serve clients one after another and concurrently
	SelfQP     bool   // -q: create the QP with verbs and move it through its states here

	Stats   bool          // per-ping round-trip times and a summary (client)
	JSON    bool          // the same as one JSON document on stdout (client)
	Timeout time.Duration // bounds resolution, connection and each ping; 0 = wait as long as rping
	Wait    pollwait.Mode // how completion waits poll or sleep (--busy-poll, --no-spin; wait.go)

	trace *pollwait.Trace // $RDMACTL_WAIT_TRACE: every wait, to record the policy's test traces
	probe *Outcome        // Probe's: the outcome is handed back, not printed

	IO *cli.IOStreams

	// Counters are the port counters a client run with --stats or --json
	// reads before and after, to say which error counters rose; nil reads
	// none.
	Counters counters.Source

	// CM is the RDMA connection manager and verbs to ping over: the
	// factory's stack in rdmactl, a fake in tests.
	CM rdma.CM
}

// EndsOnInterrupt says whether the end of Run's context ends the run
// cleanly, with its statistics or document: a client with --stats or
// --json, a -P server with --json. Other runs do not look at it, and
// rdmactl gives them a context no signal cancels, so that SIGINT and
// SIGTERM keep their default effect, as in rping.
func (o *Options) EndsOnInterrupt() bool {
	switch o.Mode {
	case ModeClient:
		return o.Stats || o.JSON
	case ModeServer:
		return o.Persistent && o.JSON
	}
	return false
}

// Atoi converts s as C's atoi does: optional blanks and sign, then digits
// up to the first non-digit; no digits gives 0. rping parses -C, -S and -p
// this way, so "-C x" means 0 (ping until interrupted). Values beyond the
// C long range saturate, then truncate to 32 bits as glibc's atoi does.
func Atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	const maxLong = 1<<63 - 1
	limit := uint64(maxLong)
	if neg {
		limit++
	}
	var v uint64
	overflow := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if overflow || v > (limit-d)/10 {
			overflow = true
			continue
		}
		v = v*10 + d
	}
	var l int64
	switch {
	case overflow && neg:
		l = -maxLong - 1
	case overflow:
		l = maxLong
	case neg:
		l = int64(-v) // -v wraps to the two's complement of v
	default:
		l = int64(v)
	}
	return int(int32(l))
}
