package cgoverbs

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size huge page buffers are rounded up to.
const hugePage = 2 << 20

// AllocHugeBuffer maps n bytes (rounded up to whole 2 MiB pages) of
// anonymous huge pages, as perftest's --use_hugepages; it fails when the
// host has none reserved.
func AllocHugeBuffer(n int) (*Buffer, error) {
	size := (n + hugePage - 1) / hugePage * hugePage
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_HUGETLB)
	if err != nil {
		return nil, fmt.Errorf("mmap of %d bytes of huge pages: %w", size, err)
	}
	return mappedBuffer(m, n), nil
}

// MapFileBuffer maps n bytes of the file at path from offset off, shared,
// as perftest's --mmap: what the peer writes lands in the file. The file
// must hold them all (a mapping past its end faults when touched).
func MapFileBuffer(path string, off int64, n int) (*Buffer, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < off+int64(n) {
		return nil, fmt.Errorf("%s holds %d bytes, and the test's buffer needs %d from offset %d", path, st.Size(), n, off)
	}
	m, err := unix.Mmap(int(f.Fd()), off, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap of %s: %w", path, err)
	}
	return mappedBuffer(m, n), nil
}

func mappedBuffer(m []byte, n int) *Buffer {
	return &Buffer{p: unsafe.Pointer(&m[0]), bytes: m[:n:n], mapping: m}
}
