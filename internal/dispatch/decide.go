package dispatch

import (
	"errors"
	"fmt"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// evidence is what phase 4 knows when an attempt ends; decide turns it into the
// attempt's outcome (docs/outcomes.md is the table of rules).
type evidence struct {
	runErr error           // the executor's error: could not start, or unavailable
	res    executor.Result // its result when it ran
	hang   bool            // the item's own hang deadline ended it, not the run's cancel
	// partial: a .partial JUnit sidecar of this item outlived it.
	partial bool
	// junit: this item must write a known XML file (xmlFile); wroteXML: it did
	// during the attempt.
	junit, wroteXML bool
	// badXML: why the XML file the item wrote during the attempt cannot be read;
	// nil when it can or when it wrote none.
	badXML error
}

// decide is the outcome of an attempt. The order matters: what sgpu-queue did to
// the item (its deadline, the cancel) explains it before what the item left
// behind, and an exit code of 124 or 137 alone is never a timeout.
func decide(e evidence) outcome.Outcome {
	switch {
	case errors.Is(e.runErr, executor.ErrUnavailable):
		return outcome.Unavailable
	case e.runErr != nil:
		return outcome.Failed // it could not start
	case e.res.Cancelled && e.hang:
		return outcome.Timeout
	case e.res.Cancelled:
		return outcome.Cancelled
	case e.partial:
		return outcome.CutOff
	case e.res.Signaled && e.res.ExitCode == exitcode.Killed:
		// Its own process died of a SIGKILL we did not send (ours come only
		// with a cancel or a deadline): the OOM killer, kill -9, the runner.
		return outcome.CutOff
	case e.res.ExitCode != 0:
		return outcome.Failed
	case e.junit && !e.wroteXML:
		return outcome.NoRun
	case e.badXML != nil:
		return outcome.BadJUnit
	}
	return outcome.OK
}

// explain is the line an attempt's log ends with when its own output cannot tell
// its outcome; "" for none.
func (d *dispatcher) explain(it expand.Item, a Attempt, e evidence, limit time.Duration, why string) string {
	switch a.Outcome {
	case outcome.Unavailable, outcome.Failed:
		if e.runErr != nil {
			return fmt.Sprintf("sgpu-queue: %v", e.runErr)
		}
	case outcome.Timeout:
		return fmt.Sprintf("sgpu-queue: killed after %.1fs: past its hang deadline of %s (%s)", a.Seconds(), limit, why)
	case outcome.Cancelled:
		return fmt.Sprintf("sgpu-queue: cancelled after %.1fs (run stopped)", a.Seconds())
	case outcome.CutOff:
		if !e.partial {
			return "sgpu-queue: cut off: its process was killed by SIGKILL, which sgpu-queue did not send (the OOM killer? kill -9 from outside?)"
		}
	case outcome.NoRun:
		if adapter.JUnitOf(it.Adapter) != adapter.JUnitUnderPrefix {
			return fmt.Sprintf("sgpu-queue: no-run: this item ran nothing: %s exited 0 without writing the JUnit XML it was given (%s); the item "+
				"fails (is its test still in the tree or the build? sgpu-queue verify checks each item's selection)",
				it.Suite.Mode, d.xmlFile(it))
		}
		return fmt.Sprintf("sgpu-queue: no-run: this item ran nothing: it exited 0 without writing its JUnit XML (%s) or a .partial sidecar, "+
			"so its re-entry (%s) selected no call line for tag %q; the item fails (check the tag round trip: sgpu-queue verify)",
			d.xmlFile(it), d.cfg.Hooks.Filter, it.Tag)
	case outcome.BadJUnit:
		return fmt.Sprintf("sgpu-queue: bad JUnit: it exited 0, but its JUnit XML %s cannot be parsed: %v; the item fails (its tests' "+
			"results are not known; the merged JUnit holds an error case for it)", d.xmlFile(it), e.badXML)
	}
	return ""
}

// junitEvidence says whether the item must write its JUnit XML, whether it did
// since the attempt started (with partialLeft's slack for coarse file-system
// clocks, erring towards "it ran"), and why that file cannot be parsed
// (docs/outcomes.md).
func (d *dispatcher) junitEvidence(it expand.Item, start time.Time) (known, written bool, bad error) {
	p := d.xmlFile(it)
	if p == "" {
		return false, false, nil
	}
	written = newer(p, start.Add(-time.Second))
	if written {
		bad = junit.CheckFile(p)
	}
	known = adapter.JUnitOf(it.Adapter) != adapter.JUnitOffered && !junitOptional(d.cfg.JUnitOptional, it.Key())
	return known, written, bad
}

// junitOptional says whether key matches one of patterns.
func junitOptional(patterns []weights.KeyPattern, key string) bool {
	for _, p := range patterns {
		if p.Match(key) {
			return true
		}
	}
	return false
}
