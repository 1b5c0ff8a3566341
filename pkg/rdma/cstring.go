package rdma

import "bytes"

// CString is buf up to its first NUL, as C's string functions read a
// buffer the peer filled (all of buf when there is none).
func CString(buf []byte) []byte {
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		return buf[:i]
	}
	return buf
}
