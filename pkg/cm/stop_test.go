package cm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// A server that no client reaches, with no --timeout, ends when its
// context does: its waits look at ctx.
func TestServerEndsWhenItsContextEnds(t *testing.T) {
	for _, tool := range []string{"ucmatose", "udaddy", "rdma_server"} {
		t.Run(tool, func(t *testing.T) {
			f, _, _ := newFabric()
			o := options(f, tool, func(o *Options) { o.Timeout = 0 })
			var out, errOut strings.Builder
			o.IO = cli.Test(nil, &out, &errOut)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- Run(ctx, o) }()
			port := uint16(7471)
			if tool == "udaddy" {
				port = 7174
			}
			waitUntil(t, "the server listens", func() bool { return f.Listening(o.PortSpace, port) })
			select {
			case err := <-done:
				t.Fatalf("the server ended before its context: %v\nstdout %q\nstderr %q", err, out.String(), errOut.String())
			case <-time.After(100 * time.Millisecond):
			}
			cancel()
			select {
			case err := <-done:
				if cli.ExitCode(err) == 0 {
					t.Errorf("exit 0 when stopped before any client; stdout %q stderr %q", out.String(), errOut.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the server still runs 10s after its context ended")
			}
		})
	}
}
