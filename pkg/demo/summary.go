package demo

import (
	"fmt"
	"io"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
)

// Summary is the --json output.
type Summary struct {
	Role     string      `json:"role"`
	Server   string      `json:"server,omitempty"`
	Device   string      `json:"device"`
	IBPort   int         `json:"port"`
	TCPPort  int         `json:"tcp_port"`
	GIDIndex *int        `json:"gid_index"`
	GIDAuto  bool        `json:"gid_auto"`
	Local    *RecordJSON `json:"local,omitempty"`
	Remote   *RecordJSON `json:"remote,omitempty"`
	Message  *string     `json:"message,omitempty"`       // client: what the SEND carried
	ReadBack *string     `json:"rdma_read,omitempty"`     // client: the server's buffer
	Buffer   *string     `json:"server_buffer,omitempty"` // server: after the client's write
	// PortCounters are the error counters that rose during the run; left
	// out when the counters could not be read.
	PortCounters *counters.Summary `json:"port_counters,omitempty"`
	OK           bool              `json:"ok"`
	Error        *cli.ErrorBody    `json:"error,omitempty"`
	ElapsedMS    float64           `json:"elapsed_ms"`
}

// RecordJSON is a connection record in the summary.
type RecordJSON struct {
	Addr  string `json:"addr"`
	RKey  uint32 `json:"rkey"`
	QPNum uint32 `json:"qp_num"`
	LID   uint16 `json:"lid"`
	GID   string `json:"gid,omitempty"`
	IP    string `json:"ip,omitempty"`
}

func (r *runner) recordJSON(rec Record) *RecordJSON {
	j := &RecordJSON{Addr: fmt.Sprintf("0x%x", rec.Addr), RKey: rec.RKey, QPNum: rec.QPNum, LID: rec.LID}
	if r.opts.GRH {
		j.GID = rec.GID.Addr().String()
		j.IP = printedIPv4(rec.GID).String()
	}
	return j
}

// writeSummary completes the summary with the verdict and hands it to the
// one JSON writer.
func (r *runner) writeSummary(w io.Writer, rc int) error {
	r.conclude(rc)
	return cli.WriteJSON(w, r.sum)
}

// conclude turns the example's test result (0: SEND, READ and WRITE all
// completed) into the summary's verdict, its error (the first failure
// line, the hint, the exit code) and its duration.
func (r *runner) conclude(rc int) {
	r.sum.OK = rc == 0
	r.sum.Error = nil
	if !r.sum.OK {
		msg := r.failure
		if msg == "" {
			msg = fmt.Sprintf("test result is %d", rc)
		}
		r.sum.Error = &cli.ErrorBody{Message: msg, Hint: r.advice, Code: cli.ExitFailed}
	}
	r.sum.ElapsedMS = float64(time.Since(r.start).Microseconds()) / 1000
}
