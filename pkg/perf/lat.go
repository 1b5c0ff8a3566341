package perf

// The latency tests' flows, in the order of perftest's send_lat.c,
// write_lat.c and read_lat.c.

// runSendLat is send_lat: SEND ping-pong, the client sends first.
func (s *session) runSendLat() error {
	if err := s.connectPeer(); err != nil {
		return err
	}
	if err := s.sync(); err != nil {
		return err
	}
	if err := s.printAddresses(); err != nil {
		return err
	}
	WriteLatTableHead(s.out, false)
	for _, size := range s.r.Sizes {
		if err := s.ep.PostRecvs(s.r.RxDepth, s.r.BufSize, size); err != nil {
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
	if err := s.sync(); err != nil {
		return err
	}
	if err := s.connectPeer(); err != nil {
		return err
	}
	if err := s.printAddresses(); err != nil {
		return err
	}
	if err := s.sync(); err != nil {
		return err
	}
	WriteLatTableHead(s.out, false)
	for _, size := range s.r.Sizes {
		if err := s.pingPong(size); err != nil {
			return err
		}
	}
	WriteResultLine(s.out)
	// ib_write_lat just exits here, without the closing handshake.
	s.oob.conn.Close()
	return nil
}

// runReadLat is read_lat: only the client works, reading the server's
// buffer one read at a time.
func (s *session) runReadLat() error {
	if err := s.sync(); err != nil {
		return err
	}
	if err := s.connectPeer(); err != nil {
		return err
	}
	if err := s.printAddresses(); err != nil {
		return err
	}
	if err := s.sync(); err != nil {
		return err
	}
	if s.r.Server == "" {
		if err := s.oob.Close(s.local); err != nil {
			return s.peerErr(err)
		}
		WriteResultLine(s.out)
		return nil
	}
	WriteLatTableHead(s.out, false)
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
	posted, err := s.ep.PingPong(PingPong{
		Test: s.r.Test, Client: s.r.Server != "", Size: size, Iters: s.r.Iters, RxDepth: s.r.RxDepth,
		LocalOff: s.r.BufSize, RemoteAddr: s.remote.VAddr, RKey: s.remote.RKey,
		BusyPoll: s.r.BusyPoll, Timeout: s.r.Timeout,
	})
	if err != nil {
		return s.dataErr(err)
	}
	rep := LatencyReport(uint64(size), posted, s.r.Test.rttFactor())
	WriteLatRow(s.out, rep)
	s.result.addLat(rep)
	s.result.addCPU(cpu.since(), rep.Iters)
	return nil
}
