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
		if ready, err := RawPoll(a[0], b[0], time.Until(end)); ready || err != nil {
			t.Fatalf("nothing written: ready %v, err %v", ready, err)
		}
	}
	// written before: a goroutine could not write meanwhile on one P
	unix.Write(b[1], []byte{1})
	if ready, err := RawPoll(a[0], b[0], 5*time.Second); !ready || err != nil {
		t.Fatalf("second fd written: ready %v, err %v", ready, err)
	}
	unix.Write(a[1], []byte{1})
	if ready, err := RawPoll(a[0], -1, 0); !ready || err != nil {
		t.Fatalf("first fd alone: ready %v, err %v", ready, err)
	}
	unix.Close(b[0])
	if _, err := RawPoll(a[0], b[0], time.Second); err != unix.EBADF {
		t.Fatalf("closed fd: %v, want EBADF", err)
	}
}
