package rerun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// MaxFraction is the largest share of an item's tests a narrowed re-run may hold;
// half, as TE's rerun_tests.py.
const MaxFraction = 0.5

// Sidecar suffixes of an item's JUnit file, as TE's pytest plugin
// (ci/te_ci_result_sink.py) writes them.
const (
	FailedSuffix   = ".failed"   // every failing test id, kept after a clean end
	PartialSuffix  = ".partial"  // NDJSON progress; left only when the process died
	NarrowedSuffix = ".narrowed" // the attempt ran a narrowed list
)

// Evidence is what one failed attempt of an item left about its tests.
type Evidence struct {
	// Failed are the ids of its .failed sidecar; HasFailed says one was left (an
	// empty one means no test failed: the item failed outside its tests).
	Failed    []string
	HasFailed bool
	// Partial says a .partial sidecar was left: the process died part-way.
	Partial   bool
	Collected []string
	Done      map[string]bool
	// Narrowed: the attempt was itself narrowed, so its count is not the item's.
	Narrowed bool
	// Total is its JUnit file's test count (0: unknown); JUnitFailed its failed
	// ids, used when no .failed sidecar was left.
	Total       int
	JUnitFailed []string
	// Unnamed says why a failed JUnit test has no selectable id; then the item
	// re-runs whole unless a .failed sidecar names its failures.
	Unnamed string
}

// NotALine are the characters a test id cannot hold: a tests file holds one id a
// line, and TE's tools trim each line.
const NotALine = "\n\r\t"

// Tests is the test ids item's next attempt should run, or nil and why it runs
// whole: narrowing wrongly would pass tests nobody ran.
func Tests(ev Evidence) (tests []string, why string) {
	set := map[string]bool{}
	total := ev.Total
	switch {
	case ev.Partial && ev.Collected == nil:
		return nil, "it died before recording what it had collected"
	case ev.Partial:
		// The failures, the test running when it died and every test behind it.
		for _, id := range ev.Collected {
			if !ev.Done[id] {
				set[id] = true
			}
		}
		total = len(ev.Collected)
	}
	from := ev.Failed
	if !ev.HasFailed {
		if ev.Unnamed != "" {
			return nil, ev.Unnamed
		}
		from = ev.JUnitFailed
	}
	for _, id := range from {
		set[id] = true
	}
	delete(set, "")
	if len(set) == 0 {
		return nil, "nothing in it named a failing test"
	}
	tests = make([]string, 0, len(set))
	for id := range set {
		tests = append(tests, id)
	}
	slices.Sort(tests)
	for _, id := range tests {
		if strings.ContainsAny(id, NotALine) {
			return nil, fmt.Sprintf("its failed test %q holds a newline, CR or tab, so it cannot be a line of a tests file", id)
		}
	}
	if ev.Narrowed {
		// A narrowed attempt only ran its own list, so the set can only shrink.
		return tests, ""
	}
	if total == 0 {
		return nil, "its report does not say how many tests it has"
	}
	if float64(len(tests)) > float64(total)*MaxFraction {
		return nil, fmt.Sprintf("%d of its %d tests is more than half of it", len(tests), total)
	}
	return tests, ""
}

// ReadSidecars reads the sidecars of the JUnit file junit into an Evidence; the
// JUnit fields are the caller's.
func ReadSidecars(junit string) (Evidence, error) {
	var ev Evidence
	failed, err := safefs.ReadFile(junit + FailedSuffix)
	switch {
	case err == nil:
		ev.HasFailed, ev.Failed = true, Lines(failed)
	case !errors.Is(err, fs.ErrNotExist):
		return ev, err
	}
	partial, err := safefs.ReadFile(junit + PartialSuffix)
	switch {
	case err == nil:
		p := ParseProgress(partial)
		ev.Partial, ev.Collected, ev.Done = true, p.Collected, p.Done()
	case !errors.Is(err, fs.ErrNotExist):
		return ev, err
	}
	if _, err := os.Lstat(junit + NarrowedSuffix); err == nil {
		ev.Narrowed = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ev, err
	}
	return ev, nil
}

// Lines are the non-blank lines of a tests file (or sidecar), trimmed.
func Lines(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
