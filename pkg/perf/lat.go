package perf

import "fmt"

// The latency tests' flows, in the order of perftest's send_lat.c,
// write_lat.c and read_lat.c.

// runSendLat is send_lat: SEND ping-pong, the client sends first.
func (s *session) runSendLat() error {
	if err := steps(s.connectPeer, s.sync, s.printAddresses); err != nil {
		return err
	}
	WriteLatTableHead(s.out, s.r.Duration > 0, s.cpu != nil)
	for _, size := range s.r.Sizes {
		if err := s.ep.PostRecvs(0, s.r.RxDepth, sgeAt(s.ep, 0, s.r.BufSize, size+s.r.recvExtra())); err != nil {
			return err
		}
		if err := s.sync(); err != nil { // both have receives posted
			return err
		}
		if err := s.pingPong(size); err != nil {
			return err
		}
	}
	WriteResultLine(s.out)
	if err := s.oob.Close(s.local); err != nil {
		return s.peerErr(err)
	}
	return nil
}

// runWriteLat is write_lat: each side RDMA-writes a counter into the
// other's buffer and watches its own for the peer's.
func (s *session) runWriteLat() error {
	if err := steps(s.sync, s.connectPeer, s.printAddresses, s.sync); err != nil {
		return err
	}
	WriteLatTableHead(s.out, s.r.Duration > 0, s.cpu != nil)
	for _, size := range s.r.Sizes {
		if err := s.pingPong(size); err != nil {
			return err
		}
	}
	WriteResultLine(s.out)
	// ib_write_lat just exits here, without the closing handshake; an
	// rdma_cm exchange goes with the session.
	if s.oob.conn != nil {
		s.oob.Linger(writeLatLinger)
	}
	return nil
}

// runReadLat is read_lat: only the client works, reading the server's
// buffer one read at a time.
func (s *session) runReadLat() error {
	if err := steps(s.sync, s.connectPeer, s.printAddresses, s.sync); err != nil {
		return err
	}
	if !s.r.active() {
		if err := s.oob.Close(s.local); err != nil {
			return s.peerErr(err)
		}
		WriteResultLine(s.out)
		return nil
	}
	WriteLatTableHead(s.out, s.r.Duration > 0, s.cpu != nil)
	for _, size := range s.r.Sizes {
		if err := s.pingPong(size); err != nil {
			return err
		}
	}
	WriteResultLine(s.out)
	if err := s.oob.Close(s.local); err != nil {
		return s.peerErr(err)
	}
	return nil
}

// pingPong runs one size of a latency test and prints its row.
func (s *session) pingPong(size int) error {
	cpu := startCPU()
	if s.pinger == nil {
		s.pinger = newPinger(s.ep, s.clock, s.r.BusyPoll)
	}
	p := PingPong{
		Test: s.r.Test, Atomic: s.r.AtomicType, Client: s.r.active(), Size: size, Iters: s.r.Iters, RxDepth: s.r.RxDepth,
		LocalOff: s.r.BufSize, RecvExtra: s.r.recvExtra(), RemoteAddr: s.remote.VAddr, RKey: s.remote.RKey,
		BusyPoll: s.r.BusyPoll, Timeout: s.r.Timeout, Inline: s.r.inline(size),
	}
	if s.r.Duration > 0 {
		s.openCPUWindow()
		rep, err := s.pinger.runFor(p, s.r.Duration, s.r.margin())
		if err != nil {
			return s.dataErr(err)
		}
		if s.r.Output == "latency" {
			fmt.Fprintf(s.numOut, "%f\n", rep.TAvg)
		} else {
			WriteLatDurRow(s.out, rep, s.rowEnd())
		}
		s.writeOutJSON(outJSONLatDur(rep, s.r.Output, s.cpuShare()))
		s.result.LatencyDuration = append(s.result.LatencyDuration, rep)
		s.recordCPUShare()
		s.result.addCPU(cpu.since(), rep.Iters)
		return s.printCounters(rep.Size)
	}
	posted, err := s.pinger.run(p)
	if err != nil {
		return s.dataErr(err)
	}
	rtt := s.r.Test.rttFactor()
	rep := LatencyReport(uint64(size), posted, rtt)
	if s.r.PlotFile != "" {
		s.plotStamps = posted
	}
	// -C prints cycles (under perftest's [usec] headings, as it does);
	// --json keeps microseconds.
	shown, stamps, unit := rep, posted, usecUnit
	if s.r.Cycles {
		if s.cpuMHz == 0 {
			if s.cpuMHz, err = readCPUMHz(); err != nil {
				return err
			}
		}
		stamps, unit = toCycles(posted, s.cpuMHz), cyclesUnit
		shown = latencyReportIn(uint64(size), stamps, rtt, unit)
	}
	if s.r.Unsorted || s.r.Histogram {
		writeSamplesIn(s.out, stamps, rtt, unit, s.r.Unsorted, s.r.Histogram)
	}
	if s.r.Output == "latency" {
		fmt.Fprintf(s.numOut, "%f\n", shown.Avg)
	} else {
		WriteLatRow(s.out, shown)
	}
	s.writeOutJSON(outJSONLat(shown, s.r.Output, s.cpuShare()))
	if s.r.Histogram {
		rep.Histogram = histogramBuckets(posted, rtt)
	}
	s.result.addLat(rep)
	s.result.addCPU(cpu.since(), rep.Iters)
	return s.printCounters(rep.Size)
}
