package cli

import (
	"fmt"
	"time"
)

// TimeoutError is a wait that --timeout ended where the emulated tool
// would have waited for ever. It answers net.Error's Timeout, so a caller
// that asks oob.IsTimeout sees a timeout in it too.
type TimeoutError struct {
	After time.Duration
	// Doing is what was under way, as it reads after the bound: "waiting
	// for a client on port 18515", "reading the server's address".
	Doing string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %v %s (--timeout)", e.After, e.Doing)
}

func (e *TimeoutError) Timeout() bool   { return true }
func (e *TimeoutError) Temporary() bool { return false }
