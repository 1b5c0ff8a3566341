package cgoverbs

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestNoHugePagesFromTheStart(t *testing.T) {
	off, err := unix.PrctlRetInt(unix.PR_GET_THP_DISABLE, 0, 0, 0, 0)
	if err != nil || off != 1 {
		t.Fatalf("PR_GET_THP_DISABLE: %d, %v; want 1 (set by the constructor)", off, err)
	}
}
