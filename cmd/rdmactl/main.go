// Command rdmactl brings up and checks RDMA: rping, ibv_devinfo,
// ibv_devices, show_gids, Soft-RoCE setup and the RC verbs demo in one tool.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func main() {
	ios := cli.System()
	stdout := &countingWriter{w: ios.Out}
	ios.Out = stdout
	f := &cli.Factory{IO: ios, Version: buildVersion(),
		RDMA: func() rdma.Stack { return cgoverbs.Stack{} },
		Host: host.System,
	}
	root := newCmdRoot(f)
	err := root.Execute()
	reportError(f, err, stdout.n > 0)
	os.Exit(cli.ExitCode(err))
}

// reportError tells the user how the command failed: one line (and a
// hint line) on stderr unless the command already said it in its tool's
// words, and with --json the error document on stdout unless the command
// printed a document of its own — so stdout always holds exactly one.
func reportError(f *cli.Factory, err error, wroteStdout bool) {
	if err == nil {
		return
	}
	if !cli.IsSilent(err) {
		fmt.Fprintf(f.IO.ErrOut, "rdmactl: %v\n", err)
		var h cli.Hinted
		if errors.As(err, &h) {
			fmt.Fprintf(f.IO.ErrOut, "hint: %s\n", h.Hint())
		}
	}
	if f.JSON && !wroteStdout {
		_ = cli.WriteJSON(f.IO.Out, cli.NewErrorDocument(err))
	}
}

// countingWriter notes whether anything reached stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
