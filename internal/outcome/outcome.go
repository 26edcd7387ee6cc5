// Package outcome names how one attempt of one work item ended, and why a run
// stopped early. An outcome is decided once, where it is known (phase 4, from the
// executor's result, the hang deadline, the cancel, the JUnit files), written into
// the run's files, and read by verdicts, learning, the report and the console: no
// reader re-derives it from an exit code. docs/outcomes.md is the user's table.
package outcome

import (
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"
)

// Outcome is how one attempt ended. The zero value is "not recorded" (a row of an
// older log dir, or one whose outcome row was lost): see Legacy.
type Outcome string

const (
	// OK: the item exited 0 and there is no evidence that it ran nothing or was
	// cut off.
	OK Outcome = "ok"
	// Failed: the item exited non-zero by itself (124 and 137 included), or could
	// not be started.
	Failed Outcome = "failed"
	// Timeout: sgpu-queue killed it at its hang deadline (--item-timeout-factor).
	Timeout Outcome = "timeout"
	// Cancelled: sgpu-queue stopped it because the run was cancelled (a signal, or
	// an internal error that stopped the other items).
	Cancelled Outcome = "cancelled"
	// CutOff: a .partial JUnit sidecar outlived it, or its own process was killed
	// by a SIGKILL that sgpu-queue did not send.
	CutOff Outcome = "cut-off"
	// Unavailable: where it ran went away under it (the target container stopped).
	Unavailable Outcome = "unavailable"
	// NoRun: its re-entry ran nothing: it exited 0, JUnit was requested, and it
	// wrote neither its XML file nor a .partial sidecar.
	NoRun Outcome = "no-run"
	// BadJUnit: it exited 0 and wrote its JUnit XML file, which cannot be parsed
	// (cut off mid-element, not JUnit, over the size limit): its tests' results
	// are not known, and the merged JUnit holds an error case for it.
	BadJUnit Outcome = "bad-junit"
)

// All is every outcome, in the order the docs list them.
var All = []Outcome{OK, Failed, Timeout, Cancelled, CutOff, Unavailable, NoRun, BadJUnit}

func (o Outcome) String() string { return string(o) }

// Parse reads an outcome as written in outcomes.tsv.
func Parse(s string) (Outcome, error) { return parse("outcome", s, All) }

// parse finds s among all; its error names them from all, so a new value cannot
// be missing from the message.
func parse[T ~string](what, s string, all []T) (T, error) {
	names := make([]string, len(all))
	for i, v := range all {
		if string(v) == s {
			return v, nil
		}
		names[i] = string(v)
	}
	return "", fmt.Errorf("%s %q is not one of %s", what, s, strings.Join(names, ", "))
}

// Valid reports whether o is one of All.
func (o Outcome) Valid() bool {
	_, err := Parse(string(o))
	return err == nil
}

// Passed reports whether the attempt passes its item: only OK does.
func (o Outcome) Passed() bool { return o == OK }

// Failed reports whether the attempt fails its item. A NoRun, CutOff or BadJUnit
// attempt fails even when its exit code was 0: its tests did not (all) run, or
// what they said cannot be read.
func (o Outcome) Failed() bool { return o != OK }

// Learnable reports whether the attempt's duration is a measurement of what the
// item costs: OK, Failed and BadJUnit (it ran to its end) teach a duration.
func (o Outcome) Learnable() bool { return o == OK || o == Failed || o == BadJUnit }

// AtLeast reports whether the attempt only says "the item takes at least this
// long": it was stopped before its end (Timeout, Cancelled, CutOff, Unavailable).
// Such a duration never creates a weight and never lowers one; it may raise one.
func (o Outcome) AtLeast() bool {
	return o == Timeout || o == Cancelled || o == CutOff || o == Unavailable
}

// Teaches reports whether the attempt teaches anything at all: NoRun ran nothing,
// so its duration says nothing about the item.
func (o Outcome) Teaches() bool { return o.Learnable() || o.AtLeast() }

// Exercised reports whether the attempt says anything about the GPU it ran on (for
// quarantine): a NoRun never touched it and a Cancelled one was stopped by us.
func (o Outcome) Exercised() bool { return o != NoRun && o != Cancelled }

// Retryable reports whether --retries may run the item again after this attempt.
// A NoRun is not retried: the same filter selects the same nothing again.
func (o Outcome) Retryable() bool { return o.Failed() && o != NoRun && o != Cancelled }

// Incomplete is the timings.tsv "incomplete" column for this outcome: 1 for every
// row whose duration is not a full measurement, so that TransformerEngine's own
// readers of timings.tsv (which know only that column and rc) learn nothing from
// it either.
func (o Outcome) Incomplete() bool { return !o.Learnable() }

// Legacy is the outcome of a timings row that carries none (a log dir written
// before outcomes were recorded, or a row whose outcome row was lost): the rule
// TransformerEngine's readers apply to the same row. rc 124 and 137 were "killed
// from outside" under that contract, so they are CutOff there, never Timeout.
func Legacy(rc int, incomplete, runCancelled bool) Outcome {
	switch {
	case incomplete && runCancelled && rc != 0:
		return Cancelled
	case incomplete, rc == exitcode.HangTimeout, rc == exitcode.Killed:
		return CutOff
	case rc != 0:
		return Failed
	}
	return OK
}

// Stop is why a run stopped before its queue was empty, recorded in run.json.
type Stop string

const (
	// StopQuarantined: every GPU was quarantined with items left to run.
	StopQuarantined Stop = "quarantined"
	// StopUnavailable: where commands run went away (the target container
	// stopped).
	StopUnavailable Stop = "unavailable"
	// StopCancelled: the run was cancelled (SIGINT, SIGTERM, SIGHUP).
	StopCancelled Stop = "cancelled"
	// StopInternal: a bug in sgpu-queue (a worker panicked); what finished is still
	// written, and the run exits 70.
	StopInternal Stop = "internal-error"
	// StopNotReported: in a merge (sgpu-queue merge), a shard of the matrix whose
	// log dir was not given: none of its items ran, as far as the merge can tell.
	StopNotReported Stop = "not-reported"
	// StopListingFailed: a suite's listing (or its adapter's setup= command)
	// failed, listed nothing or ran past its timeout, in phase 1: the run stopped
	// before any item, exit 1. Its run.json names the suite (docs/outcomes.md).
	StopListingFailed Stop = "listing-failed"
	// StopSetupFailed: a list suite's setup failed in phase 3, before any item.
	StopSetupFailed Stop = "setup-failed"
	// StopBeforeFailed: the once-per-run --before command failed in phase 3,
	// before any setup or item (docs/hooks.md "Once per run").
	StopBeforeFailed Stop = "before-failed"
)

// Stops is every stop reason.
var Stops = []Stop{StopQuarantined, StopUnavailable, StopCancelled, StopInternal, StopNotReported, StopListingFailed, StopSetupFailed,
	StopBeforeFailed}

// SuiteFailed reports whether the stop is a suite's own failure before its items
// ran (its listing or its setup): that suite fails, whatever its items.
func (s Stop) SuiteFailed() bool { return s == StopListingFailed || s == StopSetupFailed }

func (s Stop) String() string { return string(s) }

// ParseStop reads a stop reason as written in run.json.
func ParseStop(s string) (Stop, error) { return parse("stop reason", s, Stops) }

// Skip is why a whole suite did not run this time and passes all the same: the
// zero value is a suite that ran. Its verdict file holds its Line alone, its rc is
// 0 (TE's gate reads a missing file as a failure), and its census and weights are
// kept.
type Skip string

const (
	// NotSelected: --suites (or TE_CI_SUITES) left it out (docs/config.md).
	NotSelected Skip = "not-selected"
	// NotRerun: a re-run of what failed had none of its items to run again: each
	// passed the attempt being re-run (docs/reruns.md).
	NotRerun Skip = "not-rerun"
)

// Line is the whole of a skipped suite's verdict file.
func (s Skip) Line() string {
	switch s {
	case NotSelected:
		return "not run: not selected"
	case NotRerun:
		return "not re-run this attempt: no item of this suite failed the last one"
	}
	return ""
}
