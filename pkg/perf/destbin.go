package perf

import (
	"encoding/binary"
	"fmt"
)

// destBinLen is the size of the QP record as perftest sends it over an
// rdma_cm control connection (-R): struct pingpong_dest itself on a 64-bit
// host, its integers in network order.
//
//	0 lid  4 out_reads  8 qpn  12 psn  16 rkey  (20 padding)
//	24 vaddr (8)  32 gid (16)  48 srqn  52 gid_index
const destBinLen = 56

// EncodeBinary lays d out as that struct; gidIndex fills its last field,
// which the receiver does not read.
func (d Dest) EncodeBinary(gidIndex int) []byte {
	b := make([]byte, destBinLen)
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(d.LID))
	be.PutUint32(b[4:], d.OutReads)
	be.PutUint32(b[8:], d.QPN)
	be.PutUint32(b[12:], d.PSN)
	be.PutUint32(b[16:], d.RKey)
	be.PutUint64(b[24:], d.VAddr)
	copy(b[32:48], d.GID[:])
	be.PutUint32(b[48:], d.SRQN)
	be.PutUint32(b[52:], uint32(int32(gidIndex)))
	return b
}

// DecodeDestBinary reads the fields perftest reads from such a record: the
// SRQ number and GID index it ignores, and so does this.
func DecodeDestBinary(rec []byte) (Dest, error) {
	if len(rec) != destBinLen {
		return Dest{}, fmt.Errorf("peer's QP record is %d bytes, want %d", len(rec), destBinLen)
	}
	be := binary.BigEndian
	lid := be.Uint32(rec[0:])
	if lid > 0xffff {
		return Dest{}, fmt.Errorf("peer's QP record: LID %#x does not fit 16 bits", lid)
	}
	d := Dest{
		LID: uint16(lid), OutReads: be.Uint32(rec[4:]), QPN: be.Uint32(rec[8:]),
		PSN: be.Uint32(rec[12:]), RKey: be.Uint32(rec[16:]), VAddr: be.Uint64(rec[24:]),
	}
	copy(d.GID[:], rec[32:48])
	return d, nil
}
