// Package demo is `rdmactl demo`: the RC verbs example from NVIDIA's "RDMA
// Aware Networks Programming User Manual" (RDMA_RC_example.c, often built as
// ibv_demo), with its output, its TCP exchange and its verbs flow, so that
// either side can be the C program.
package demo

import (
	"github.com/rdmactl/rdmactl/pkg/rdma"

	"encoding/binary"
	"fmt"
	"io"
)

// RecordSize is the size of the original's packed struct cm_con_data_t.
const RecordSize = 8 + 4 + 4 + 2 + 16

// Record is what each side tells the other to connect its QP and reach its
// buffer. On the wire every number is big-endian and the fields are packed.
type Record struct {
	Addr  uint64   // buffer address
	RKey  uint32   // remote key of the buffer's MR
	QPNum uint32   // QP number
	LID   uint16   // LID of the IB port (0 on RoCE)
	GID   rdma.GID // GID at the chosen index, zero when none was given
}

// MarshalBinary encodes r in the wire layout.
func (r Record) MarshalBinary() ([]byte, error) {
	b := make([]byte, RecordSize)
	binary.BigEndian.PutUint64(b[0:8], r.Addr)
	binary.BigEndian.PutUint32(b[8:12], r.RKey)
	binary.BigEndian.PutUint32(b[12:16], r.QPNum)
	binary.BigEndian.PutUint16(b[16:18], r.LID)
	copy(b[18:34], r.GID[:])
	return b, nil
}

// UnmarshalBinary decodes exactly RecordSize bytes.
func (r *Record) UnmarshalBinary(b []byte) error {
	if len(b) != RecordSize {
		return fmt.Errorf("connection record is %d bytes, want %d", len(b), RecordSize)
	}
	r.Addr = binary.BigEndian.Uint64(b[0:8])
	r.RKey = binary.BigEndian.Uint32(b[8:12])
	r.QPNum = binary.BigEndian.Uint32(b[12:16])
	r.LID = binary.BigEndian.Uint16(b[16:18])
	copy(r.GID[:], b[18:34])
	return nil
}

// Check refuses a record no RC demo sends. A QP number is 24 bits wide
// and 0 and 1 are the management QPs, never an RC QP: text (an HTTP
// request, a banner) fails the first test, since its bytes 12 to 15 are
// printable characters.
func (r Record) Check() error {
	switch {
	case r.QPNum > 1<<24-1:
		return fmt.Errorf("its QP number 0x%x is wider than 24 bits", r.QPNum)
	case r.QPNum < 2:
		return fmt.Errorf("its QP number %d is a management QP's", r.QPNum)
	}
	return nil
}

// ReadRecord reads one record; a peer that closes early is an error.
func ReadRecord(rd io.Reader) (Record, error) {
	var b [RecordSize]byte
	n, err := io.ReadFull(rd, b[:])
	if err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return Record{}, fmt.Errorf("peer closed the connection after %d of %d bytes of its connection record", n, RecordSize)
		}
		return Record{}, err
	}
	var r Record
	err = r.UnmarshalBinary(b[:])
	return r, err
}
