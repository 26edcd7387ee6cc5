// Package outcome names how an attempt ended and why a run stopped. An outcome is decided once where it is known,
// recorded, and read by everyone else: no reader re-derives it from an exit code (docs/outcomes.md).
package outcome

import (
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"
)

// Outcome is how one attempt ended; "" is not recorded (an older log dir): see Legacy.
type Outcome string

const (
	// OK: exit 0 with no evidence it ran nothing or was cut off.
	OK Outcome = "ok"
	// Failed: a non-zero exit of its own (124 and 137 included), or it could not be started.
	Failed Outcome = "failed"
	// Timeout: sgpu-queue killed it at its hang deadline (--item-timeout-factor).
	Timeout Outcome = "timeout"
	// Cancelled: sgpu-queue stopped it because the run was cancelled.
	Cancelled Outcome = "cancelled"
	// CutOff: a .partial sidecar outlived it, or a SIGKILL we did not send killed it.
	CutOff Outcome = "cut-off"
	// Unavailable: where it ran went away under it (the target container stopped).
	Unavailable Outcome = "unavailable"
	// NoRun: exit 0 with JUnit requested, and neither its XML nor a .partial written.
	NoRun Outcome = "no-run"
	// BadJUnit: exit 0 with an unparsable JUnit file, so its tests' results are unknown.
	BadJUnit Outcome = "bad-junit"
)

// All is every outcome, in the order the docs list them.
var All = []Outcome{OK, Failed, Timeout, Cancelled, CutOff, Unavailable, NoRun, BadJUnit}

func (o Outcome) String() string { return string(o) }

// Parse reads an outcome as written in outcomes.tsv.
func Parse(s string) (Outcome, error) { return parse("outcome", s, All) }

// parse finds s among all; its error lists all, so a new value is never missing from it.
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

// Failed reports whether the attempt fails its item; NoRun, CutOff and BadJUnit fail even with exit 0.
func (o Outcome) Failed() bool { return o != OK }

// Learnable reports whether the duration measures the item: it ran to its end.
func (o Outcome) Learnable() bool { return o == OK || o == Failed || o == BadJUnit }

// AtLeast reports whether the attempt was stopped before its end, so its duration may raise a weight, never lower
// or create one.
func (o Outcome) AtLeast() bool {
	return o == Timeout || o == Cancelled || o == CutOff || o == Unavailable
}

// Teaches reports whether the attempt teaches anything; a NoRun ran nothing.
func (o Outcome) Teaches() bool { return o.Learnable() || o.AtLeast() }

// Exercised reports whether the attempt says anything about its GPU, for quarantine.
func (o Outcome) Exercised() bool { return o != NoRun && o != Cancelled }

// Retryable reports whether --retries may run the item again; a NoRun's filter would select nothing again.
func (o Outcome) Retryable() bool { return o.Failed() && o != NoRun && o != Cancelled }

// Incomplete is timings.tsv's "incomplete" column: set when the duration is no full measurement, so TE's readers
// learn nothing from it either.
func (o Outcome) Incomplete() bool { return !o.Learnable() }

// Legacy is the outcome of a row that records none, by TE's readers' rule: rc 124 and 137 meant killed from
// outside, so CutOff, never Timeout.
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
	// StopUnavailable: where commands run went away (the target container stopped).
	StopUnavailable Stop = "unavailable"
	// StopCancelled: the run was cancelled (SIGINT, SIGTERM, SIGHUP).
	StopCancelled Stop = "cancelled"
	// StopInternal: a bug in sgpu-queue; what finished is still written, and the run exits 70.
	StopInternal Stop = "internal-error"
	// StopNotReported: in a merge, a shard whose log dir was not given: none of its items ran.
	StopNotReported Stop = "not-reported"
	// StopListingFailed: a suite's listing or setup= failed in phase 1, before any item; exit 1 (docs/outcomes.md).
	StopListingFailed Stop = "listing-failed"
	// StopSetupFailed: a list suite's setup failed in phase 3, before any item.
	StopSetupFailed Stop = "setup-failed"
	// StopBeforeFailed: the --before command failed in phase 3 (docs/hooks.md "Once per run").
	StopBeforeFailed Stop = "before-failed"
)

// Stops is every stop reason.
var Stops = []Stop{StopQuarantined, StopUnavailable, StopCancelled, StopInternal, StopNotReported, StopListingFailed, StopSetupFailed,
	StopBeforeFailed}

// SuiteFailed reports whether a suite's listing or setup failed, failing that suite whatever its items did.
func (s Stop) SuiteFailed() bool { return s == StopListingFailed || s == StopSetupFailed }

func (s Stop) String() string { return string(s) }

// ParseStop reads a stop reason as written in run.json.
func ParseStop(s string) (Stop, error) { return parse("stop reason", s, Stops) }

// Skip is why a suite did not run this time and passes ("" it ran): its verdict file is its Line and rc 0,
// as TE's gate fails a missing file; its census and weights are kept.
type Skip string

const (
	// NotSelected: --suites (or TE_CI_SUITES) left it out (docs/config.md).
	NotSelected Skip = "not-selected"
	// NotRerun: a re-run had none of the suite's items to run again (docs/reruns.md).
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
