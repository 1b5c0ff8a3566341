// Package doctor diagnoses why RDMA does not work on this host: each check
// is a pure function of Facts gathered once, and says ok, warn or fail
// with the fix.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Options are the inputs of `rdmactl doctor`.
type Options struct {
	IO   *cli.IOStreams
	JSON bool
	// IP narrows the address checks to one address ("" for all).
	IP string
	// DumpFacts prints the gathered facts as JSON instead of checking.
	DumpFacts bool
	// Host and Verbs are where the facts come from (the factory's).
	Host  host.Host
	Verbs rdma.Verbs
	// Gather overrides reading the facts from Host and Verbs (tests).
	Gather func(target netip.Addr) *Facts
}

// Run gathers the facts, runs the checks and prints one line per check.
// It fails (exit 1) when any check fails.
func Run(_ context.Context, opts *Options) error {
	var target netip.Addr
	if opts.IP != "" {
		a, err := netip.ParseAddr(opts.IP)
		if err != nil {
			return cli.Usagef("--ip %q is not an IP address", opts.IP)
		}
		target = a.Unmap()
	}
	gather := opts.Gather
	if gather == nil {
		gather = func(target netip.Addr) *Facts { return Gather(opts.Host, opts.Verbs, target) }
	}
	facts := gather(target)
	if opts.DumpFacts {
		return cli.WriteJSON(opts.IO.Out, facts)
	}
	results := RunChecks(facts, target)
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, results); err != nil {
			return err
		}
	} else if err := writeText(opts.IO.Out, opts.IO.Palette(), results); err != nil {
		return err
	}
	if n := failed(results); n > 0 {
		return cli.SilentExit(cli.ExitFailed)
	}
	return nil
}

func failed(results []Result) int {
	n := 0
	for _, r := range results {
		if r.Status == Fail {
			n++
		}
	}
	return n
}

func writeJSON(w io.Writer, results []Result) error {
	return cli.WriteJSON(w, struct {
		OK     bool     `json:"ok"`
		Checks []Result `json:"checks"`
	}{failed(results) == 0, results})
}

// writeText prints "status  name  detail; fix: …" with the status word
// coloured when the palette allows.
func writeText(w io.Writer, pal cli.Palette, results []Result) error {
	width := 0
	for _, r := range results {
		width = max(width, len(r.Name))
	}
	for _, r := range results {
		word := fmt.Sprintf("%-4s", r.Status)
		switch r.Status {
		case OK:
			word = pal.Green(word)
		case Warn:
			word = pal.Yellow(word)
		case Fail:
			word = pal.Red(word)
		}
		line := fmt.Sprintf("%s  %-*s  %s", word, width, r.Name, r.Detail)
		if r.Fix != "" {
			line += "; fix: " + r.Fix
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(line, " ")); err != nil {
			return err
		}
	}
	return nil
}
