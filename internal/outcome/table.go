package outcome

import "github.com/rocm/sgpu-queue/internal/exitcode"

// ownRC stands, in the table, for "the rc recorded is the item's own exit code".
const ownRC = -1

// row is what one outcome means in words and exit codes: docs/outcomes.md's table. Callers ask it, never switch.
type row struct {
	note  string // the verdict line's note; "" when the rc says it all
	ended string // how a retried attempt ended, for the console
	rc    int    // the rc an attempt is recorded with, or ownRC
	// stopped: sgpu-queue ended the item, so its rc is the tool's own (143, 137) and counts as it is.
	stopped bool
}

func (o Outcome) row() row {
	switch o {
	case Timeout:
		return row{note: "timed out", ended: "timed out", rc: exitcode.HangTimeout}
	case Cancelled:
		return row{note: "cancelled", ended: "failed", rc: ownRC, stopped: true}
	case CutOff:
		return row{note: "cut off", ended: "was cut off", rc: ownRC}
	case Unavailable:
		// 137, as TE's readers know a row killed from outside.
		return row{note: "unavailable: where it ran went away", ended: "failed", rc: exitcode.Killed}
	case NoRun:
		return row{note: "no-run: its re-entry ran nothing", ended: "failed", rc: ownRC}
	case BadJUnit:
		return row{note: "bad JUnit: its JUnit XML cannot be parsed", ended: "wrote JUnit that cannot be parsed", rc: ownRC}
	}
	return row{ended: "failed", rc: ownRC} // OK, Failed, and a legacy row's ""
}

// Note is the verdict line's word on the outcome; "" for OK and Failed, whose rc says it.
func (o Outcome) Note() string { return o.row().note }

// Ended says how a retried attempt ended, for the console.
func (o Outcome) Ended() string { return o.row().ended }

// Named reports whether the outcome is named beside the rc, which alone says only ok or failed.
func (o Outcome) Named() bool { return o != OK && o != Failed }

// RC is the rc an attempt is recorded with: the tool's for an end it caused or saw, else own. An item that could
// not be started is recorded as the shell's "command not found".
func (o Outcome) RC(own int, started bool) int {
	switch r := o.row(); {
	case r.rc != ownRC:
		return r.rc
	case o == Failed && !started:
		return exitcode.NotFound
	}
	return own
}

// ExitCode is what a failed attempt adds to its suite's rc: 1 when rc says nothing, the tool's codes as they are,
// an item's own through exitcode.FromItem, so the rc and exit code keep their meaning.
func (o Outcome) ExitCode(rc int) int {
	if o.row().stopped {
		return max(rc, exitcode.Failed)
	}
	return exitcode.FromItem(rc)
}

// Word names a stop reason for the console ("" is a log dir's unknown one).
func (s Stop) Word() string {
	if s == "" {
		return "unknown reason"
	}
	return string(s)
}

// NeverRanRC is the rc of an item its run's stop kept from running: 130 after a cancel, else 1.
func (s Stop) NeverRanRC() int {
	if s == StopCancelled {
		return exitcode.Interrupted
	}
	return exitcode.Failed
}

// RunExitCode is the run's exit code (docs/exit-codes.md): the suites', unless an internal error (70) or a cancel
// with no failed suite (130).
func RunExitCode(fromSuites int, internal, cancelled bool) int {
	switch {
	case internal:
		return exitcode.Internal
	case cancelled && fromSuites == exitcode.OK:
		return exitcode.Interrupted
	}
	return fromSuites
}
