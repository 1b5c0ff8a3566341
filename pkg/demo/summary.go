package demo

import (
	"fmt"
	"io"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Summary is the --json output.
type Summary struct {
	Role      string      `json:"role"`
	Server    string      `json:"server,omitempty"`
	Device    string      `json:"device"`
	IBPort    int         `json:"ib_port"`
	TCPPort   int         `json:"tcp_port"`
	GIDIndex  *int        `json:"gid_index"`
	GIDAuto   bool        `json:"gid_auto"`
	Local     *RecordJSON `json:"local,omitempty"`
	Remote    *RecordJSON `json:"remote,omitempty"`
	Message   *string     `json:"message,omitempty"`       // client: what the SEND carried
	ReadBack  *string     `json:"rdma_read,omitempty"`     // client: the server's buffer
	Buffer    *string     `json:"server_buffer,omitempty"` // server: after the client's write
	Result    int         `json:"result"`
	Error     string      `json:"error,omitempty"`
	Hint      string      `json:"hint,omitempty"`
	ElapsedMS float64     `json:"elapsed_ms"`
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

// writeSummary completes the summary with the result and hands it to the
// one JSON writer.
func (r *runner) writeSummary(w io.Writer, rc int) error {
	r.sum.Result = rc
	r.sum.ElapsedMS = float64(time.Since(r.start).Microseconds()) / 1000
	return cli.WriteJSON(w, r.sum)
}
