package ping

import (
	"bytes"
	"context"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Option checks happen before any RDMA call, as in rping; the messages
// and exit codes are those the real rping gave in the lab.
func TestRunRejectsBadValuesLikeRping(t *testing.T) {
	for _, c := range []struct {
		o       Options
		wantErr string
	}{
		{Options{Mode: ModeClient, Size: 10}, "Invalid size 10 (valid range is 23 to 65536)\n"},
		{Options{Mode: ModeServer, Size: 65536}, "Invalid size 65536 (valid range is 23 to 65536)\n"},
		{Options{Mode: ModeServer, Size: 64, Count: -1}, "Invalid count -1\n"},
	} {
		var out, errOut bytes.Buffer
		c.o.IO = cli.Test(nil, &out, &errOut)
		err := Run(context.Background(), &c.o)
		if cli.ExitCode(err) != 22 || !cli.IsSilent(err) {
			t.Errorf("%+v: exit %d silent %v, want 22", c.o, cli.ExitCode(err), cli.IsSilent(err))
		}
		if errOut.String() != c.wantErr || out.Len() != 0 {
			t.Errorf("stderr %q stdout %q, want stderr %q", errOut.String(), out.String(), c.wantErr)
		}
	}
}

func TestRunBoundarySizesPassTheCheck(t *testing.T) {
	for _, size := range []int{MinSize, MaxSize} {
		var out, errOut bytes.Buffer
		o := Options{Mode: ModeClient, Size: size, Addr: "no.such.host.invalid", IO: cli.Test(nil, &out, &errOut), CM: fabric()}
		_ = Run(context.Background(), &o) // fails later, at the name lookup
		if bytes.Contains(errOut.Bytes(), []byte("Invalid size")) {
			t.Errorf("size %d rejected", size)
		}
		if !bytes.HasPrefix(out.Bytes(), []byte("getaddrinfo failed (")) {
			t.Errorf("size %d: stdout %q", size, out.String())
		}
	}
}
