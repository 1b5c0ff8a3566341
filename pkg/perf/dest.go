package perf

import (
	"bytes"
	"fmt"
	"strconv"
)

// Dest is what each side tells the other about one QP in perftest's
// out-of-band exchange (struct pingpong_dest): where to send, the starting
// PSN, and the memory the peer may read or write.
type Dest struct {
	LID      uint16
	OutReads uint32 // RDMA reads this side accepts in flight
	QPN      uint32
	PSN      uint32
	RKey     uint32
	VAddr    uint64
	GID      [16]byte
	SRQN     uint32
}

// Record sizes on the wire: a NUL-terminated line of hex fields. The GID
// form is used whenever the sender has a GID index (-x, RoCE).
const (
	destLen    = 59  // "llll:oooo:qqqqqq:pppppp:rrrrrrrr:vvvvvvvvvvvvvvvv:ssssssss\0"
	destGIDLen = 108 // same fields with 16 GID bytes "gg:" before the SRQ number
)

// destSize is the record's length with or without the GID.
func destSize(withGID bool) int {
	if withGID {
		return destGIDLen
	}
	return destLen
}

// Encode lays d out as perftest does: fixed-width lower-case hex fields
// joined by ':', NUL-padded to the record size.
func (d Dest) Encode(withGID bool) []byte {
	b := make([]byte, 0, destGIDLen)
	b = fmt.Appendf(b, "%04x:%04x:%06x:%06x:%08x:%016x:", d.LID, d.OutReads, d.QPN, d.PSN, d.RKey, d.VAddr)
	if withGID {
		for _, g := range d.GID {
			b = fmt.Appendf(b, "%02x:", g)
		}
		b = fmt.Appendf(b, "%08x:", d.SRQN)
	} else {
		b = fmt.Appendf(b, "%08x", d.SRQN)
	}
	out := make([]byte, destSize(withGID))
	copy(out, b)
	return out
}

// DecodeDest parses a record Encode (or perftest) wrote. Fields may be
// shorter or longer than their usual width, as perftest's parser allows,
// but each must be hex that fits its type.
func DecodeDest(rec []byte, withGID bool) (Dest, error) {
	if len(rec) != destSize(withGID) {
		return Dest{}, fmt.Errorf("peer's QP record is %d bytes, want %d", len(rec), destSize(withGID))
	}
	if i := bytes.IndexByte(rec, 0); i >= 0 {
		rec = rec[:i]
	}
	fields := bytes.Split(rec, []byte(":"))
	want := 7
	if withGID {
		want = 6 + 16 + 1
		// The GID form ends with ':' after the SRQ number.
		if len(fields) == want+1 && len(fields[want]) == 0 {
			fields = fields[:want]
		}
	}
	if len(fields) != want {
		return Dest{}, fmt.Errorf("peer's QP record %q: %d fields, want %d", rec, len(fields), want)
	}
	var d Dest
	var err error
	num := func(i, bits int) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = strconv.ParseUint(string(fields[i]), 16, bits)
		if err != nil {
			err = fmt.Errorf("peer's QP record %q: field %d: %v", rec, i+1, err)
		}
		return v
	}
	// QP numbers and PSNs are 24 bits, and perftest writes the reads in
	// flight in 4 digits: a wider value is no record perftest sends (nor
	// one Encode could write back in the record's size).
	d.LID = uint16(num(0, 16))
	d.OutReads = uint32(num(1, 16))
	d.QPN = uint32(num(2, 24))
	d.PSN = uint32(num(3, 24))
	d.RKey = uint32(num(4, 32))
	d.VAddr = num(5, 64)
	next := 6
	if withGID {
		for i := range d.GID {
			d.GID[i] = uint8(num(next+i, 8))
		}
		next += 16
	}
	d.SRQN = uint32(num(next, 32))
	return d, err
}
