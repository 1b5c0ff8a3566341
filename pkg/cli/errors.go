package cli

import (
	"errors"
	"fmt"
)

// Exit codes documented in the README.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// ExitError carries the process exit code for a failure. When Silent is set
// the command has already printed its message (as an emulated tool does)
// and main must print nothing more.
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Failf returns an operation failure (exit 1) with a one-line message.
func Failf(format string, args ...any) error {
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf(format, args...)}
}

// Usagef returns a usage error (exit 2) with a one-line message.
func Usagef(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// SilentExit ends the process with code after the command printed its own
// diagnostics in the emulated tool's words.
func SilentExit(code int) error { return &ExitError{Code: code, Silent: true} }

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailed
}

// IsSilent reports whether the error's message was already printed.
func IsSilent(err error) bool {
	var ee *ExitError
	return errors.As(err, &ee) && ee.Silent
}

// AsFailure keeps err's exit code when it carries one (an *ExitError
// inside), else makes it an operation failure (exit 1).
func AsFailure(err error) error {
	var ee *ExitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitFailed, Err: err}
}
