package ping

import (
	"encoding/binary"
	"fmt"
)

// InfoSize is the size of the buffer advertisement on the wire
// (struct rping_rdma_info: be64 addr, be32 rkey, be32 size).
const InfoSize = 16

// BufferInfo advertises a registered buffer to the peer so that it can
// RDMA-read from or write to it.
type BufferInfo struct {
	Addr uint64
	RKey uint32
	Size uint32
}

// Encode writes the advertisement in network byte order into dst, which
// must hold InfoSize bytes.
func (b BufferInfo) Encode(dst []byte) {
	_ = dst[InfoSize-1]
	binary.BigEndian.PutUint64(dst[0:8], b.Addr)
	binary.BigEndian.PutUint32(dst[8:12], b.RKey)
	binary.BigEndian.PutUint32(dst[12:16], b.Size)
}

// DecodeBufferInfo parses an advertisement; p must be exactly InfoSize
// bytes, as rping accepts nothing else.
func DecodeBufferInfo(p []byte) (BufferInfo, error) {
	if len(p) != InfoSize {
		return BufferInfo{}, fmt.Errorf("buffer advertisement is %d bytes, want %d", len(p), InfoSize)
	}
	return BufferInfo{
		Addr: binary.BigEndian.Uint64(p[0:8]),
		RKey: binary.BigEndian.Uint32(p[8:12]),
		Size: binary.BigEndian.Uint32(p[12:16]),
	}, nil
}
