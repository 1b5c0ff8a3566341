package cli

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestTimeoutErrorNamesTheFlag: the line names the bound and --timeout,
// and a wrapped one is still a net.Error timeout, which is how serve and
// oob.IsTimeout tell a silent peer from a broken one.
func TestTimeoutErrorNamesTheFlag(t *testing.T) {
	err := fmt.Errorf("exchange with the peer failed: %w", &TimeoutError{After: 3 * time.Second, Doing: "waiting for the peer"})
	if want := "exchange with the peer failed: timed out after 3s waiting for the peer (--timeout)"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v is not a net.Error timeout", err)
	}
}
