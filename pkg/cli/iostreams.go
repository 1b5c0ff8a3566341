// Package cli holds what every rdmactl command shares: where output goes,
// whether it may be coloured, how configuration is layered and how errors
// become exit codes.
package cli

import (
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// IOStreams is where a command reads and writes; tests swap in buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// colorEnabled is true only when Out is a terminal, NO_COLOR is unset
	// and --no-color was not given.
	colorEnabled bool
	// outTerminal is true when Out is a terminal (someone is watching).
	outTerminal bool
}

// System returns streams on the process's stdin/stdout/stderr.
func System() *IOStreams {
	_, noColor := os.LookupEnv("NO_COLOR")
	tty := isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd())
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, colorEnabled: tty && !noColor, outTerminal: tty}
}

// OutIsTerminal reports whether Out is a terminal: output may then come
// as it happens rather than in one piece.
func (s *IOStreams) OutIsTerminal() bool { return s.outTerminal }

// Test returns streams backed by the given buffers, with colour off.
func Test(in io.Reader, out, errOut io.Writer) *IOStreams {
	return &IOStreams{In: in, Out: out, ErrOut: errOut}
}

// DisableColor turns colour off (the --no-color flag).
func (s *IOStreams) DisableColor() { s.colorEnabled = false }

// Palette returns colour functions that are no-ops when colour is off.
func (s *IOStreams) Palette() Palette {
	mk := func(attrs ...color.Attribute) func(string) string {
		c := color.New(attrs...)
		if s.colorEnabled {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return func(v string) string { return c.Sprint(v) }
	}
	return Palette{
		Green:  mk(color.FgGreen),
		Yellow: mk(color.FgYellow),
		Red:    mk(color.FgRed),
		Bold:   mk(color.Bold),
	}
}

// Palette is a small set of colour functions for status words.
type Palette struct {
	Green, Yellow, Red, Bold func(string) string
}
