package cm

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// output prints a tool's lines as the C tool does (printf on stdout,
// perror on stderr), or keeps the stdout lines for the JSON document.
type output struct {
	out, errOut io.Writer
	json        bool
	lines       []string
	partial     string
}

func newOutput(o *Options) *output {
	return &output{out: o.IO.Out, errOut: o.IO.ErrOut, json: o.JSON, lines: []string{}}
}

func (o *output) printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !o.json {
		io.WriteString(o.out, s)
		return
	}
	s = o.partial + s
	o.partial = ""
	for {
		i := indexNL(s)
		if i < 0 {
			o.partial = s
			return
		}
		o.lines = append(o.lines, s[:i])
		s = s[i+1:]
	}
}

func indexNL(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return i
		}
	}
	return -1
}

// perror is perror(3): what, then the errno's text.
func (o *output) perror(what string, err error) {
	fmt.Fprintf(o.errOut, "%s: %s\n", what, errnoText(err))
}

func (o *output) errorf(format string, args ...any) {
	fmt.Fprintf(o.errOut, format, args...)
}

func errnoOf(err error) syscall.Errno {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EINVAL
}

func errnoText(err error) string { return rdma.Strerror(errnoOf(err)) }

// exitFor ends a run with the C tool's status: main's return value, as
// the process sees it (its low byte).
func exitFor(status int) error {
	if code := status & 0xff; code != 0 {
		return cli.SilentExit(code)
	}
	return nil
}
