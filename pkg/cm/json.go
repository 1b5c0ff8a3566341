package cm

import (
	"errors"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// runDocument is --json's one document of udaddy, ucmatose, rdma_server,
// rdma_client and mckey (docs/json.md).
type runDocument struct {
	Tool        string         `json:"tool"`
	OK          bool           `json:"ok"`
	Role        string         `json:"role"`
	Connections int            `json:"connections"`
	Connected   int            `json:"connected"`
	Messages    int            `json:"messages"`
	Size        int            `json:"size"`
	ElapsedMs   float64        `json:"elapsed_ms"`
	Output      []string       `json:"output"`
	Error       *cli.ErrorBody `json:"error,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func asRDMA(err error, target **rdma.Error) bool { return errors.As(err, target) }
