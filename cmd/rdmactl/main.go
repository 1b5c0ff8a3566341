// Command rdmactl brings up and checks RDMA: rping, ibv_devinfo,
// ibv_devices, show_gids, Soft-RoCE setup and the RC verbs demo in one tool.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/rdmactl/rdmactl/pkg/cgoverbs"
	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func main() {
	keepAnIdleP()
	f := &cli.Factory{IO: cli.System(), Version: buildVersion(),
		RDMA: func() rdma.Stack { return cgoverbs.Stack{} },
		Host: host.System, Interrupted: cli.NotifyInterrupt,
	}
	os.Exit(run(f, os.Args[1:]))
}

// keepAnIdleP gives the scheduler a second P on a one-CPU machine. Every
// verbs and rdma_cm call is a cgo call, and while one lasts longer than
// sysmon's tick the runtime hands a lone P over to a fresh spinning
// thread: on one CPU that costs context switches on every such call. With
// an idle P to spare, sysmon leaves short calls alone. A GOMAXPROCS the
// user set is kept.
func keepAnIdleP() {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
}

// run executes one command line and returns the exit code. Whether JSON
// was asked for is read from args before cobra parses them, so that every
// failure, a bad flag before --json included, answers in the same form.
func run(f *cli.Factory, args []string) int {
	stdout := &countingWriter{w: f.IO.Out}
	f.IO.Out = stdout
	root := newCmdRoot(f)
	root.SetArgs(args)
	f.JSON = cli.JSONRequested(args)
	err := root.Execute()
	reportError(f, err, stdout.n > 0)
	return cli.ExitCode(err)
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
		if hint := cli.HintOf(err); hint != "" {
			fmt.Fprintf(f.IO.ErrOut, "hint: %s\n", hint)
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
