package cgoverbs

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

func TestAllocBufferIsZeroedAlignedCMemory(t *testing.T) {
	b, err := AllocBuffer(100)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Bytes()) != 100 || b.Addr()%uint64(syscall.Getpagesize()) != 0 {
		t.Fatalf("len %d addr %#x", len(b.Bytes()), b.Addr())
	}
	for i, c := range b.Bytes() {
		if c != 0 {
			t.Fatalf("byte %d is %d", i, c)
		}
	}
	b.Bytes()[0] = 7
	if b.Bytes()[0] != 7 {
		t.Fatal("Bytes does not alias the buffer")
	}
	if _, err := AllocBuffer(0); err == nil {
		t.Fatal("zero-size buffer allocated")
	}
}

func TestTimeoutMillis(t *testing.T) {
	for d, want := range map[time.Duration]int{
		-1:                      -1,
		0:                       0,
		time.Microsecond:        1, // rounds up: a short timeout still waits
		1500 * time.Microsecond: 2,
		2 * time.Second:         2000,
	} {
		if got := int(timeoutMillis(d)); got != want {
			t.Errorf("timeoutMillis(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestLibraryTexts(t *testing.T) {
	// The texts libibverbs, librdmacm and the C library give; rping
	// prints them, so must rdmactl.
	if got := rdma.WCRetryExcErr.String(); got != "transport retry counter exceeded" {
		t.Errorf("rdma.WCRetryExcErr = %q", got)
	}
	if got := rdma.CMEventRejected.String(); got != "RDMA_CM_EVENT_REJECTED" {
		t.Errorf("CMEventRejected = %q", got)
	}
	err := &rdma.Error{Op: "rdma_bind_addr", Errno: syscall.EADDRNOTAVAIL}
	if got := err.Error(); got != "rdma_bind_addr: Cannot assign requested address" {
		t.Errorf("CallError = %q", got)
	}
	if !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Error("CallError does not unwrap to its errno")
	}
}

func TestLookupHost(t *testing.T) {
	if a, err := (Stack{}).LookupHost("10.9.0.1"); err != nil || a.String() != "10.9.0.1" {
		t.Errorf("IPv4: %v %v", a, err)
	}
	if a, err := (Stack{}).LookupHost("fd09::1"); err != nil || a.String() != "fd09::1" {
		t.Errorf("IPv6: %v %v", a, err)
	}
	// getaddrinfo says "Name or service not known" (EAI_NONAME) with a
	// resolver, "Temporary failure in name resolution" without one.
	_, err := (Stack{}).LookupHost("no.such.host.invalid")
	var le *rdma.LookupError
	if !errors.As(err, &le) || le.Code >= 0 || le.Msg == "" {
		t.Errorf("unknown host: %#v", err)
	}
}

// rdma.Strerror must print what the C library prints: rping's messages
// carry it.
func TestStrerrorMatchesLibc(t *testing.T) {
	for e := syscall.Errno(1); e < 134; e++ {
		if got, want := rdma.Strerror(e), libcStrerror(e); got != want {
			t.Errorf("errno %d: rdma.Strerror %q, libc %q", int(e), got, want)
		}
	}
}

// The Go table must be libibverbs' own, whose words reach the user.
func TestWCStatusTextsMatchLibibverbs(t *testing.T) {
	for s := rdma.WCStatus(0); s < 30; s++ {
		if got, want := s.String(), libibverbsWCStatusText(s); got != want {
			t.Errorf("status %d: %q, libibverbs %q", s, got, want)
		}
	}
}

// TestOpenUnknownDeviceIsENODEV: the cgo boundary's one error convention —
// a failed call is an *rdma.Error naming the call, and errors.Is sees its
// errno (ENODEV for a name libibverbs does not list; ENOSYS and the like
// when this machine cannot list devices at all).
func TestOpenUnknownDeviceIsENODEV(t *testing.T) {
	_, err := Open("rdmactl-no-such-device")
	var re *rdma.Error
	if !errors.As(err, &re) {
		t.Fatalf("Open: %v (%T), want an *rdma.Error", err, err)
	}
	if re.Op == "ibv_open_device(rdmactl-no-such-device)" && !errors.Is(err, syscall.ENODEV) {
		t.Errorf("unknown device: %v, want ENODEV", err)
	}
	if re.Errno == 0 {
		t.Errorf("%v carries no errno", err)
	}
}
