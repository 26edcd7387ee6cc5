package outcome

import "github.com/rocm/sgpu-queue/internal/exitcode"

// ownRC stands, in the table, for "the rc recorded is the item's own exit code".
const ownRC = -1

// row is what follows from one outcome in words and exit codes: the one table
// docs/outcomes.md prints (its "rc recorded" and "verdict" columns). Every package
// asks an outcome for these; none switches on it to find them again.
type row struct {
	note  string // the verdict line's note; "" when the rc says it all
	ended string // how a retried attempt ended, for the console
	rc    int    // the rc an attempt is recorded with, or ownRC
	// stopped: sgpu-queue ended the item (a cancel), so its rc is one the tool
	// gave it (143, 137), which counts in its suite as it is.
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
		// Its container went away under it: 137, as TE's readers know a row
		// killed from outside.
		return row{note: "unavailable: where it ran went away", ended: "failed", rc: exitcode.Killed}
	case NoRun:
		return row{note: "no-run: its re-entry ran nothing", ended: "failed", rc: ownRC}
	case BadJUnit:
		return row{note: "bad JUnit: its JUnit XML cannot be parsed", ended: "wrote JUnit that cannot be parsed", rc: ownRC}
	}
	return row{ended: "failed", rc: ownRC} // OK, Failed, and a legacy row's ""
}

// Note is what the item's verdict line says about its last attempt's outcome; ""
// for OK and Failed, whose rc says it.
func (o Outcome) Note() string { return o.row().note }

// Ended says how a retried attempt ended, for the console ("timed out", "was cut
// off", "failed").
func (o Outcome) Ended() string { return o.row().ended }

// Named reports whether the console and the report name the outcome beside the
// attempt's rc: the rc alone says ok or failed, not the others.
func (o Outcome) Named() bool { return o != OK && o != Failed }

// RC is the rc an attempt with this outcome is recorded with (its .rc file, its
// timings row): the code for an end sgpu-queue caused or saw, else own, the
// item's exit code. started is false for an item that could not be started: a
// Failed one is recorded as a shell's "command not found".
func (o Outcome) RC(own int, started bool) int {
	switch r := o.row(); {
	case r.rc != ownRC:
		return r.rc
	case o == Failed && !started:
		return exitcode.NotFound
	}
	return own
}

// ExitCode is what a failed attempt with this outcome, recorded with rc, adds to
// its suite's rc: 1 when rc says nothing (0: a no-run, cut-off or bad-junit item); the codes
// the tool gave an item it stopped as they are; an item's own code through
// exitcode.FromItem, so that the suite's rc and the run's exit code keep their
// meaning.
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

// NeverRanRC is the rc an item counts with that never ran because its run stopped
// for s: 130 after a cancel, else 1.
func (s Stop) NeverRanRC() int {
	if s == StopCancelled {
		return exitcode.Interrupted
	}
	return exitcode.Failed
}

// RunExitCode is the run's exit code (docs/exit-codes.md): fromSuites, the one its
// suites' verdicts give, unless sgpu-queue stopped on an internal error (70), or
// the run was cancelled with no suite failed (130).
func RunExitCode(fromSuites int, internal, cancelled bool) int {
	switch {
	case internal:
		return exitcode.Internal
	case cancelled && fromSuites == exitcode.OK:
		return exitcode.Interrupted
	}
	return fromSuites
}
