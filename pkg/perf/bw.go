package perf

import (
	"errors"
	"fmt"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The bandwidth tests' flows: the order of handshakes, prints and runs of
// perftest's write_bw.c, read_bw.c and send_bw.c, one direction, on -q QPs.

// runRDMABW is write_bw and read_bw: the client moves the data, the
// server's CPU stays out of it and prints the client's report at the end.
func (s *session) runRDMABW() error {
	if err := steps(s.connectPeer, s.printAddresses, s.sync /* after RTR */); err != nil {
		return err
	}
	WriteBWTableHead(s.out, s.r.Gbits, s.cpu != nil)
	if s.r.Bidirectional {
		return s.runRDMABWBoth()
	}
	if !s.r.active() {
		if s.r.RunInfinitely {
			return s.awaitClientLeaving()
		}
		if err := s.sync(); err != nil { // the client is done
			return err
		}
		rep, err := s.oob.Reports(BWReport{})
		if err != nil {
			return s.peerErr(err)
		}
		if err := rep.Check(); err != nil {
			return cli.WithHint(fmt.Errorf("the client's result is no bandwidth: %w", err), "these numbers are the client's own: read its output")
		}
		if err := s.printBW(rep); err != nil {
			return err
		}
		s.counted(rep)
		if err := s.oob.Close(s.local); err != nil {
			return s.peerErr(err)
		}
		WriteResultLine(s.out)
		return nil
	}
	if s.r.RunInfinitely {
		return s.streamForever(s.r.Size, 1)
	}
	var last BWReport
	for _, size := range s.r.Sizes {
		rep, err := s.stream(s.streamOf(size))
		if err != nil {
			return err
		}
		if err := s.printBW(rep); err != nil {
			return err
		}
		s.counted(rep)
		last = rep
	}
	WriteResultLine(s.out)
	if err := s.sync(); err != nil {
		return err
	}
	if _, err := s.oob.Reports(last); err != nil {
		return s.peerErr(err)
	}
	if err := s.oob.Close(s.local); err != nil {
		return s.peerErr(err)
	}
	return nil
}

// stream runs one size of a bandwidth test's active side.
func (s *session) stream(run Stream) (BWReport, error) {
	if s.r.WarmUp && !s.r.Test.IsSend() {
		if _, err := runStream(s.ep, warmUp(run)); err != nil {
			return BWReport{}, s.dataErr(fmt.Errorf("warm-up: %w", err))
		}
	}
	cpu := startCPU()
	s.openCPUWindow()
	t, err := runStream(s.ep, run)
	if err != nil {
		return BWReport{}, s.dataErr(err)
	}
	t.Gbits, t.NoPeak = s.r.Gbits, t.NoPeak || s.r.NoPeak
	rep := t.Report()
	s.result.addCPU(cpu.since(), rep.Iters)
	return rep, nil
}

// streamOf is the active side's run of one size. A timed one spins, as
// perftest's: a sender seldom waits (rxe sends inside its post calls),
// and perftest refuses -e with -D.
func (s *session) streamOf(size int) Stream {
	return Stream{
		Test: s.r.Test, Atomic: s.r.AtomicType, Size: size, Iters: s.r.Iters, TxDepth: s.r.TxDepth, CQMod: s.r.CQMod, PostList: s.r.PostList,
		Inline: s.r.inline(size), Span: qpSpan(s.r), Remotes: s.remotes, Duration: s.r.Duration, Margin: s.r.margin(), Idle: s.r.Timeout,
		Pace: s.r.pace(size), Events: s.sleeps && s.r.Duration == 0,
	}
}

// warmUp is perftest's perform_warm_up before run: one round of -t
// requests per QP (with a post list, one list), each completion asked for.
func warmUp(run Stream) Stream {
	w := run
	w.Iters, w.CQMod, w.Duration, w.Margin, w.Pace = run.TxDepth, 1, 0, 0, rdma.Pace{}
	if run.PostList > 1 {
		w.Iters, w.CQMod = run.PostList, run.PostList
	}
	return w
}

// runRDMABWBoth is write_bw, read_bw and atomic_bw with -b: both sides move data at
// once after a sync point (and with -a sync again after), trade their
// results and print the sum; --report-both adds each side's own row after.
func (s *session) runRDMABWBoth() error {
	if s.r.RunInfinitely {
		if err := s.sync(); err != nil { // both are ready
			return err
		}
		return s.streamForever(s.r.Size, 2)
	}
	var mine, theirs BWReport
	for _, size := range s.r.Sizes {
		if err := s.sync(); err != nil { // both are ready
			return err
		}
		var err error
		if mine, err = s.stream(s.streamOf(size)); err != nil {
			return err
		}
		if s.r.All { // perftest syncs after each size of -a only
			if err := s.sync(); err != nil {
				return err
			}
		}
		if theirs, err = s.bothSides(mine); err != nil {
			return err
		}
		sum := mine.plus(theirs)
		if err := s.printBW(sum); err != nil {
			return err
		}
		s.counted(sum)
	}
	if err := s.printEachSide(mine, theirs); err != nil {
		return err
	}
	WriteResultLine(s.out)
	if err := s.oob.Close(s.local); err != nil {
		return s.peerErr(err)
	}
	return nil
}

// bothSides trades this side's result of a -b run with the peer's.
func (s *session) bothSides(mine BWReport) (theirs BWReport, err error) {
	if theirs, err = s.oob.Reports(mine); err != nil {
		return theirs, s.peerErr(err)
	}
	if err := theirs.Check(); err != nil {
		return theirs, cli.WithHint(fmt.Errorf("the peer's result is no bandwidth: %w", err), "these numbers are the peer's own: read its output")
	}
	return theirs, nil
}

// printEachSide is --report-both after a -b run (not with -a): each
// side's own row after the sum.
func (s *session) printEachSide(mine, theirs BWReport) error {
	if !s.r.ReportBoth || s.r.All {
		return nil
	}
	for _, part := range []struct {
		title string
		rep   BWReport
	}{{"Local", mine}, {"Remote", theirs}} {
		WriteResultLine(s.out)
		fmt.Fprintf(s.out, "\n %s results:%s\n", part.title, s.reportBothTitleEnd())
		WriteBWTableHead(s.out, s.r.Gbits, s.cpu != nil)
		if err := s.printBW(part.rep); err != nil {
			return err
		}
	}
	return nil
}

// reportBothTitleEnd is what ends the titles of --report-both's rows
// before the newline: ib_atomic_bw's have no space there.
func (s *session) reportBothTitleEnd() string {
	if s.r.Test == AtomicBW {
		return ""
	}
	return " "
}

// runSendBW is send_bw: the server posts receives and counts arrivals;
// each side prints its own numbers. With -b both sides send and receive
// at once and print the sum (with -D each its own).
func (s *session) runSendBW() error {
	if err := steps(s.connectPeer, s.sync, s.printAddresses); err != nil {
		return err
	}
	WriteBWTableHead(s.out, s.r.Gbits, s.cpu != nil)
	server := !s.r.active()
	receives := server || s.r.Bidirectional
	var mine, theirs BWReport
	for _, size := range s.r.Sizes {
		// QP q receives into its span's second half, as write_bw's
		// QPs are written.
		var sges []rdma.SGE
		for q := 0; receives && q < s.r.QPs; q++ {
			sges = append(sges, sgeAt(s.ep, q, q*qpSpan(s.r)+s.r.BufSize, size+s.r.recvExtra()))
			if err := s.ep.PostRecvs(q, s.r.recvsPosted(), sges[q]); err != nil {
				return err
			}
		}
		if err := s.sync(); err != nil { // receives are posted
			return err
		}
		if s.r.RunInfinitely {
			if server {
				return s.receiveForever(size, sges)
			}
			return s.streamForever(size, 1)
		}
		var rep BWReport
		recv := recvRun{Iters: s.r.Iters, RxDepth: s.r.recvsPosted(), PostList: s.r.RecvPostList, Size: size, SGEs: sges, Timeout: s.r.Timeout, Events: s.sleeps}
		switch {
		case s.r.Bidirectional:
			run := s.streamOf(size)
			// the receiving beside a stream sleeps as the stream does
			duplex := recv
			duplex.Events = run.Events
			run.Receive, run.AfterFirstMessage = &duplex, server
			var err error
			if mine, err = s.stream(run); err != nil {
				return err
			}
			if s.r.Duration > 0 {
				// perftest trades no results in a timed run: each
				// side's row counts what it sent and received
				rep = mine
				s.counted(rep)
				break
			}
			if theirs, err = s.bothSides(mine); err != nil {
				return err
			}
			rep = mine.plus(theirs)
			s.counted(rep)
		case server:
			cpu := startCPU()
			run := recv
			var t BWTiming
			var err error
			if s.r.Duration > 0 {
				s.openCPUWindow()
				t, err = receiveFor(s.ep, s.clock, run, s.r.Duration, s.r.margin())
			} else {
				t, err = receive(s.ep, run)
			}
			if err != nil {
				return s.dataErr(err)
			}
			t.Gbits, t.NoPeak = s.r.Gbits, true
			rep = t.Report()
			s.counted(rep)
			s.result.addCPU(cpu.since(), rep.Iters)
		default:
			var err error
			if rep, err = s.stream(s.streamOf(size)); err != nil {
				return err
			}
			s.counted(rep)
		}
		if err := s.printBW(rep); err != nil {
			return err
		}
		if s.r.All { // ib_send_bw -a syncs after every size
			if err := s.sync(); err != nil {
				return err
			}
		}
	}
	if s.r.Bidirectional {
		if err := s.printEachSide(mine, theirs); err != nil {
			return err
		}
	}
	WriteResultLine(s.out)
	if err := s.oob.Close(s.local); err != nil {
		return s.peerErr(err)
	}
	return nil
}

// streamForever is --run_infinitely's active side (perftest's
// run_iter_bw_infinitely): one -D period's row after another until the
// process is stopped. With -b each side counts both directions, as
// perftest doubles its own numbers.
func (s *session) streamForever(size, directions int) error {
	run := s.streamOf(size)
	run.Continues = true
	from := s.clock()
	for {
		cpu := startCPU()
		s.openCPUWindow()
		t, err := runStream(s.ep, run)
		if err != nil {
			return s.dataErr(err)
		}
		// A period runs from one row to the next, as perftest's timer
		// thread measures it.
		to := s.clock()
		t.Posted, t.Completed, t.Gbits = []int64{from}, []int64{to}, s.r.Gbits
		run.Tail, from = t.Tail, to
		rep := t.Report()
		s.result.addCPU(cpu.since(), rep.Iters)
		rep.BWAvg *= float64(directions)
		rep.MsgRate *= float64(directions)
		if err := s.printBW(rep); err != nil {
			return err
		}
		s.counted(rep)
	}
}

// receiveForever is send_bw's server under --run_infinitely: it prints
// what arrived in each -D period, and ends when the client has left.
func (s *session) receiveForever(size int, sges []rdma.SGE) error {
	run := recvRun{RxDepth: s.r.recvsPosted(), PostList: s.r.RecvPostList, Size: size, SGEs: sges, Events: s.sleeps}
	err := receiveForever(s.ep, s.clock, run, s.r.Duration, func(t BWTiming) error {
		t.Gbits = s.r.Gbits
		rep := t.Report()
		s.counted(rep)
		return s.printBW(rep)
	}, s.oob.PeerLeft)
	if errors.Is(err, errPeerLeft) {
		return err
	}
	return s.dataErr(err)
}

// awaitClientLeaving is write_bw's and read_bw's server under
// --run_infinitely: perftest's waits for the client's end of the test,
// which never comes; the client leaving ends it.
func (s *session) awaitClientLeaving() error {
	s.oob.timeout = 0
	if _, err := s.oob.Handshake(s.local); errors.Is(err, ErrPeerClosed) {
		return errPeerLeft
	} else if err != nil {
		return s.peerErr(err)
	}
	return fmt.Errorf("the client sent a record during a --run_infinitely run, which has no end to sync")
}

// counted records a result row that counts: it goes into the --json
// document with its CPU share, and -w/-y check it (perftest passes a limit when any row
// reaches it).
func (s *session) counted(rep BWReport) {
	s.result.addBW(rep)
	s.recordCPUShare()
	if s.r.LimitBW == nil || rep.BWAvg >= *s.r.LimitBW {
		s.bwLimitPassed = true
	}
	if s.r.LimitMsgRate == nil || rep.MsgRate >= *s.r.LimitMsgRate {
		s.msgRateLimitPassed = true
	}
}

// limitsMissed is perftest's verdict on -w and -y after the run. The
// latency tests take both and check neither, and the server of write_bw,
// read_bw and atomic_bw gives none (without -b).
func (s *session) limitsMissed() error {
	if s.r.Test.Latency() || !s.r.active() && !s.r.Test.IsSend() && !s.r.Bidirectional {
		return nil
	}
	switch {
	case s.r.LimitBW != nil && !s.bwLimitPassed:
		return fmt.Errorf("Error: BW result is below bw limit (-w %g)", *s.r.LimitBW)
	case s.r.LimitMsgRate != nil && !s.msgRateLimitPassed:
		return fmt.Errorf("Error: Msg rate  is below msg_rate limit (-y %g)", *s.r.LimitMsgRate)
	}
	return nil
}

// openCPUWindow starts --cpu_util's samples as a -D run starts.
func (s *session) openCPUWindow() {
	if s.cpu != nil {
		s.cpu.open(s.r.Duration, s.r.margin())
	}
}

// printBW prints a bandwidth result: its row, or with --output the one
// number asked for.
func (s *session) printBW(rep BWReport) error {
	switch s.r.Output {
	case "bandwidth":
		fmt.Fprintf(s.numOut, "%f\n", rep.BWAvg)
	case "message_rate":
		fmt.Fprintf(s.numOut, "%f\n", rep.MsgRate)
	default:
		WriteBWRow(s.out, rep, s.r.Gbits, s.rowEnd())
	}
	s.writeOutJSON(outJSONBW(rep, s.r.Gbits, s.r.Output, s.cpuShare()))
	return s.printCounters(rep.Size)
}
