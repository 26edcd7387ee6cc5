// Package exitcode names the exit codes of sgpu-queue, so that no package re-reads a
// bare number another one chose (docs/exit-codes.md is the user's table).
package exitcode

const (
	// OK: every suite passed.
	OK = 0
	// Failed: a test item failed (when its own code is reserved or unknown), or a
	// suite's listing or setup failed and the run stopped before its items.
	Failed = 1
	// Usage: bad flags, inputs or config lines, no GPU, an unusable log dir: nothing
	// ran. Usage keeps this one meaning, so an item's own 2 is reported as Failed.
	Usage = 2
	// Internal: a bug in sgpu-queue itself (EX_SOFTWARE); an item's own 70 is
	// reported as Failed.
	Internal = 70
	// Interrupted: the run was cancelled (128 + SIGINT) and no item failed.
	Interrupted = 130
)

// Reserved reports whether code has a meaning of its own for sgpu-queue, so that
// an item exiting with it must be reported as Failed instead.
func Reserved(code int) bool { return code == Usage || code == Internal }

// FromItem is the run's exit code for a failed item's exit code: the item's own,
// except a reserved one (Failed instead) or one outside 1–255 (capped at 255; a
// non-positive one is Failed).
func FromItem(code int) int {
	switch {
	case code <= 0 || Reserved(code):
		return Failed
	case code > 255:
		return 255
	}
	return code
}
