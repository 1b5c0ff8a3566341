package pollwait

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestRawPoll(t *testing.T) {
	var a, b [2]int
	if err := unix.Pipe(a[:]); err != nil {
		t.Fatal(err)
	}
	if err := unix.Pipe(b[:]); err != nil {
		t.Fatal(err)
	}
	// a signal may end a sleep early; nothing written is never ready
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		if ra, rb, err := RawPoll(a[0], b[0], time.Until(end)); ra || rb || err != nil {
			t.Fatalf("nothing written: ready %v %v, err %v", ra, rb, err)
		}
	}
	// written before: a goroutine could not write meanwhile on one P
	unix.Write(b[1], []byte{1})
	if ra, rb, err := RawPoll(a[0], b[0], 5*time.Second); ra || !rb || err != nil {
		t.Fatalf("second fd written: ready %v %v, err %v", ra, rb, err)
	}
	unix.Write(a[1], []byte{1})
	if ra, rb, err := RawPoll(a[0], -1, 0); !ra || rb || err != nil {
		t.Fatalf("first fd alone: ready %v %v, err %v", ra, rb, err)
	}
	unix.Close(b[0])
	if _, _, err := RawPoll(a[0], b[0], time.Second); err != unix.EBADF {
		t.Fatalf("closed fd: %v, want EBADF", err)
	}
}
