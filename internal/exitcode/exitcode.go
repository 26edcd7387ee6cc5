// Package exitcode names the exit codes of sgpu-queue, so that no package re-reads a
// bare number another one chose (docs/exit-codes.md is the user's table).
package exitcode

import "errors"

const (
	// OK: every suite passed.
	OK = 0
	// Failed: a test item failed (when its own code is reserved or unknown), or a
	// suite's listing or setup failed and the run stopped before its items.
	Failed = 1
	// Usage: bad flags, inputs or config, no GPU: nothing ran. An item's own 2 is
	// reported as Failed.
	Usage = 2
	// Internal: a bug in sgpu-queue itself (EX_SOFTWARE); an item's own 70 is
	// reported as Failed.
	Internal = 70
	// Interrupted: the run was cancelled (128 + SIGINT) and no item failed; also
	// the code of a command cancelled before it started.
	Interrupted = 130
)

// The codes, in the shell's convention, that sgpu-queue gives an item it ended or
// saw end (docs/exit-codes.md#what-a-suites-rc-holds).
const (
	// HangTimeout: killed at its hang deadline, as timeout(1) exits.
	HangTimeout = 124
	// CannotRun: a shell found the program but could not execute it.
	CannotRun = 126
	// NotFound: the program could not be started (a shell's "command not found").
	NotFound = 127
	// Killed: ended by SIGKILL (128 + 9), also an item whose container went away.
	Killed = 137
	// Terminated: an item sgpu-queue stopped with TERM when the run was cancelled
	// (128 + SIGTERM); an item's own 143 is reported as Failed.
	Terminated = 143
)

// Reserved reports whether code means something of its own for sgpu-queue, so an
// item exiting with it is reported as Failed: 130 would read as cancelled.
func Reserved(code int) bool {
	return code == Usage || code == Internal || code == Interrupted || code == Terminated
}

// FromItem is the run's exit code for a failed item's: its own, unless reserved or
// outside 1–255.
func FromItem(code int) int {
	switch {
	case code <= 0 || Reserved(code):
		return Failed
	case code > 255:
		return 255
	}
	return code
}

// FromSuite is the run's exit code for a failed suite's rc, already mapped by
// FromItem; 2 and 70, which no item is given, never become the run's.
func FromSuite(code int) int {
	if code == Usage || code == Internal {
		return Failed
	}
	return min(max(code, Failed), 255)
}

// Error is a failure that decides the process's exit code, so the CLI and the
// action take it by Of instead of each choosing one again.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New returns err as an *Error that exits with code.
func New(code int, err error) error { return &Error{Code: code, Err: err} }

// Of is the exit code for err: OK for nil, the code of the *Error it wraps, else
// otherwise.
func Of(err error, otherwise int) int {
	var e *Error
	switch {
	case err == nil:
		return OK
	case errors.As(err, &e):
		return e.Code
	}
	return otherwise
}
