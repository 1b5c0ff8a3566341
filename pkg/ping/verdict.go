package ping

import (
	"fmt"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
)

// How a run ends: rping's exit code, or rdmactl's verdict when its own
// modes are on, with the summary, JSON document and hint.

// verdictModes reports whether rdmactl's own modes are on (--json,
// --stats, --timeout, a Probe): then a run that rping would call a success but
// that did not do every requested ping, validated, fails.
func (o *Options) verdictModes() bool {
	return o.Mode == ModeClient && (o.JSON || o.Stats || o.Timeout > 0 || o.probe != nil)
}

// shortfall says how a client run that rping counts as a success fell
// short of what was asked, or "" when it did not.
func (r *runner) shortfall() string {
	n, want := r.completed, r.o.Count
	switch {
	case r.mismatch > 0:
		return fmt.Sprintf("ping %d came back different from what was sent", r.mismatch-1)
	case want > 0 && n < want && r.interrupted:
		return fmt.Sprintf("interrupted after %d of %d pings", n, want)
	case want > 0 && n < want && r.peerLeft:
		return fmt.Sprintf("the server disconnected after %d of %d pings", n, want)
	case want > 0 && n < want:
		return fmt.Sprintf("only %d of %d pings completed", n, want)
	case want == 0 && !r.interrupted:
		return fmt.Sprintf("the server disconnected after %d pings", n)
	}
	return ""
}

// finish turns rping's return value into the process outcome, adding the
// summary, JSON document and hint.
func (r *runner) finish(code int) error {
	if f := r.fatal.Load(); f != 0 {
		code = int(f)
	}
	o := r.o
	hint := ""
	if code != 0 {
		hint = hintFor(r.failure, r.peer, r.dst.WithZone("").String(), o.Mode == ModeServer)
	}
	short := ""
	if code != 0 && o.verdictModes() && r.connected {
		// rping's failure code is rping's; in rdmactl's own modes a run
		// that ended early is a failed verdict (exit 1) with its reason.
		short = fmt.Sprintf("%s after %d of %s", r.failureText(), r.completed, pingsWanted(o.Count))
		r.errorf("rdmactl ping: %s\n", short)
	}
	if code == 0 && o.verdictModes() {
		if short = r.shortfall(); short != "" {
			r.errorf("rdmactl ping: %s\n", short)
			if r.peerLeft {
				hint = "the server ended the connection early; its own output says why (a smaller -S there is one cause)"
			}
		}
	}
	if o.JSON && o.Mode == ModeServer && !r.writeServerReport(code, hint) {
		return cli.SilentExit(cli.ExitFailed)
	}
	if r.stats != nil {
		res := r.stats.snapshot()
		rose := r.counters.End()
		r.out.Flush()
		if o.JSON || o.probe != nil {
			rep := newReport(o, res)
			rep.PortCounters = counters.Summarize(rose)
			rep.OK = code == 0 && short == ""
			switch {
			case short != "":
				rep.Error = &cli.ErrorBody{Message: short, Hint: hint, Code: cli.ExitFailed}
			case code != 0:
				rep.Error = &cli.ErrorBody{Message: r.failureText(), Hint: hint, Code: r.exitCode(code)}
			}
			if o.probe != nil {
				*o.probe = Outcome{Report: rep, Event: r.failure.event, Status: r.failure.status}
			} else {
				_ = cli.WriteJSON(o.IO.Out, rep)
			}
		} else {
			writeSummary(r.out, r.dst.WithZone("").String(), res)
			if l := counters.Line(rose, code == 0 && short == ""); l != "" {
				fmt.Fprintf(r.out, "%s\n", l)
			}
		}
	}
	if hint != "" {
		r.errorf("hint: %s\n", hint)
	}
	if short != "" {
		return cli.SilentExit(cli.ExitFailed)
	}
	if code == 0 {
		return nil
	}
	return cli.SilentExit(r.exitCode(code))
}

// exitCode is the process's exit code for rping's failure code: rping's
// own, except that a timeout (rdmactl's) is an operational failure.
func (r *runner) exitCode(code int) int {
	if r.failure.timeout != nil {
		return cli.ExitFailed
	}
	return code & 0xff
}

// pingsWanted is "N pings", or "an open-ended run" for -C 0.
func pingsWanted(count int) string {
	if count == 0 {
		return "pings (-C 0: until interrupted)"
	}
	return fmt.Sprintf("%d pings", count)
}

// failureText describes the run's failure for the JSON document.
func (r *runner) failureText() string { return r.failure.text() }

// text describes a failure in one line.
func (f failure) text() string {
	switch {
	case f.timeout != nil:
		return f.timeout.Error()
	case f.event != 0:
		return fmt.Sprintf("cma event %s, error %d", f.event, f.status)
	case f.wc != 0:
		return fmt.Sprintf("%s completion failed: %s", f.wcOp, f.wc)
	case f.call != nil:
		return f.call.Error()
	}
	return "ping failed"
}
