package pingpong

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Dest is one QP's address as the pingpong tools swap it: LID, QP
// number, starting PSN and GID.
type Dest struct {
	LID uint32
	QPN uint32
	PSN uint32
	GID rdma.GID
}

// RecordSize is the size of one record on the wire: the text
// "LLLL:QQQQQQ:PPPPPP:" and 32 hex digits of GID, NUL-terminated.
const RecordSize = len("0000:000000:000000:00000000000000000000000000000000") + 1

// done is what the client writes after it read the server's records.
var done = []byte("done\x00")

// MarshalRecord is d as the tools write it: "%04x:%06x:%06x:%s" and the
// wire GID (each 32-bit word of the GID as 8 hex digits), in a
// RecordSize buffer.
func (d Dest) MarshalRecord() []byte {
	b := make([]byte, RecordSize)
	s := fmt.Sprintf("%04x:%06x:%06x:%s", d.LID, d.QPN, d.PSN, wireGID(d.GID))
	copy(b, s)
	return b
}

func wireGID(g rdma.GID) string {
	b := make([]byte, 0, 32)
	for i := 0; i < 16; i += 4 {
		b = fmt.Appendf(b, "%08x", binary.BigEndian.Uint32(g[i:]))
	}
	return string(b)
}

// ParseRecord reads a record as the tools' sscanf("%x:%x:%x:%s") and
// wire_gid_to_gid do: three hex numbers separated by colons, then the
// GID's 32 hex digits, 8 per word. A record the tools would read only in
// part (a missing field, a GID shorter than 32 digits) is an error here:
// the C tools would go on with whatever the memory held.
func ParseRecord(b []byte) (Dest, error) {
	if i := indexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	s := string(b)
	var d Dest
	fields := [3]*uint32{&d.LID, &d.QPN, &d.PSN}
	for i, f := range fields {
		j := 0
		for j < len(s) && s[j] != ':' {
			j++
		}
		if j == len(s) {
			return Dest{}, fmt.Errorf("record %q: field %d has no ':' after it", b, i+1)
		}
		v, err := strconv.ParseUint(s[:j], 16, 32)
		if err != nil {
			return Dest{}, fmt.Errorf("record %q: field %d is not a hex number", b, i+1)
		}
		*f = uint32(v)
		s = s[j+1:]
	}
	if len(s) < 32 {
		return Dest{}, fmt.Errorf("record %q: the GID has %d hex digits, want 32", b, len(s))
	}
	for w := 0; w < 4; w++ {
		v, err := strconv.ParseUint(s[w*8:w*8+8], 16, 32)
		if err != nil {
			return Dest{}, fmt.Errorf("record %q: the GID is not hex", b)
		}
		binary.BigEndian.PutUint32(d.GID[w*4:], uint32(v))
	}
	return d, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
