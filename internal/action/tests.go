package action

// What the step says of a run's tests (docs/action.md#what-appears-on-the-pr).

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/publish"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/tests"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// errorAnnotation is one ::error of the step: a failed test's, or a suite's.
type errorAnnotation struct {
	fields map[string]string
	msg    string
	suite  bool
	label  string // the suite's
}

// errorAnnotations are the step's errors, per failed test, then per failed suite;
// past GitHub's maxAnnotations the last counts the rest.
func (a *act) errorAnnotations(res *engine.Result) []errorAnnotation {
	var out []errorAnnotation
	for _, t := range a.checkTests(res) {
		f := map[string]string{"title": textfmt.OneLine(t.Title)}
		if t.Path != "" {
			f["file"] = t.Path
			if t.Line > 0 {
				f["line"] = strconv.Itoa(t.Line)
			}
		}
		out = append(out, errorAnnotation{fields: f, msg: t.Message})
	}
	untested := untestedFailure(res.Stats.Tests)
	for _, s := range res.Suites {
		if s.Passed() {
			continue
		}
		if msg, ok := suiteMessage(s, res.LogDir, a, untested); ok {
			f := map[string]string{"title": "suite " + s.Label + " failed"}
			if file, line := a.configLine(res, s.Label); file != "" {
				f["file"], f["line"] = file, strconv.Itoa(line)
			}
			out = append(out, errorAnnotation{fields: f, msg: msg, suite: true, label: s.Label})
		}
	}
	if len(out) <= maxAnnotations {
		return out
	}
	tests := 0
	var suites []string
	for _, e := range out[maxAnnotations-1:] {
		if e.suite {
			suites = append(suites, e.label)
		} else {
			tests++
		}
	}
	var rest []string
	if tests > 0 {
		rest = append(rest, fmt.Sprintf("%d more failed tests (the failed-tests output names them all)", tests))
	}
	if len(suites) > 0 {
		rest = append(rest, fmt.Sprintf("%d more suites failed: %s", len(suites), strings.Join(suites, ", ")))
	}
	more := errorAnnotation{fields: map[string]string{"title": "and more"},
		msg: fmt.Sprintf("%s (GitHub shows %d annotations per step; see the summary)", strings.Join(rest, "; "), maxAnnotations)}
	return append(out[:maxAnnotations-1], more)
}

// untestedFailure keeps the failed items no failed test of the run stands for: those
// are annotated by item, the others by their tests.
func untestedFailure(t tests.Result) func(verdict.Item) bool {
	covered := map[string]bool{}
	for _, b := range t.Bad {
		covered[b.Item] = true
	}
	return func(it verdict.Item) bool { return it.Failed && !covered[it.Key()] }
}

// configLine is where a suite's config names it, "" when unknown.
func (a *act) configLine(res *engine.Result, label string) (string, int) {
	if c, ok := res.Configs[label]; ok && c.File != "" {
		return a.rel(a.path(c.File)), max(c.Line, 1)
	}
	return "", 0
}

// itemLog is an item's log, "" when it never started and has none.
func (a *act) itemLog(logDir string, it verdict.Item) string {
	if !it.Started {
		return ""
	}
	return a.rel(filepath.Join(logDir, it.LogRel))
}

// place is where a failed test is annotated: its file when the checkout has it,
// else its suite's config line.
func (a *act) place(res *engine.Result, t tests.Test) (string, int) {
	exists := func(p string) bool {
		fi, err := os.Stat(filepath.Join(a.root, filepath.FromSlash(p)))
		return err == nil && fi.Mode().IsRegular()
	}
	roots := append(append([]string(nil), res.Stats.Tests.Roots...), a.root, a.ws)
	if w := t.Where(roots, exists); w.From != tests.FromItem {
		return a.rel(filepath.Join(a.root, filepath.FromSlash(w.File))), w.Line
	}
	return a.configLine(res, t.Suite)
}

// testMessage is a failed test's annotation text.
func (a *act) testMessage(res *engine.Result, t tests.Test) string {
	var b strings.Builder
	what := t.Result.String()
	if t.Result == junit.CaseUnfinished {
		what = "started and never finished (its item died in it)"
	}
	fmt.Fprintf(&b, "%s in %s", what, t.Item)
	if its := verdict.Select(res.Suites, func(it verdict.Item) bool { return it.Key() == t.Item && it.Started }); len(its) > 0 {
		fmt.Fprintf(&b, " (log %s)", a.itemLog(res.LogDir, its[0]))
	}
	lines := nonBlank(t.Message)
	if len(lines) == 0 {
		lines = nonBlank(t.Body)
		lines = lines[max(0, len(lines)-5):]
	}
	for _, l := range lines[:min(len(lines), 5)] {
		b.WriteString("\n" + textfmt.OneLine(l))
	}
	return a.scrub(relTo(b.String(), append(append([]string(nil), res.Stats.Tests.Roots...), a.root, a.ws)))
}

func nonBlank(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
	}
	return out
}

// relTo takes each of roots off the paths in s that start with it.
func relTo(s string, roots []string) string {
	for _, r := range roots {
		if r = strings.TrimRight(r, "/"); len(r) > 1 {
			s = strings.ReplaceAll(s, r+"/", "")
		}
	}
	return s
}

// checkTests are the failed tests as check-run annotations.
func (a *act) checkTests(res *engine.Result) []publish.TestFailure {
	var out []publish.TestFailure
	for _, t := range res.Stats.Tests.Bad {
		file, line := a.place(res, t)
		out = append(out, publish.TestFailure{Path: file, Line: line, Title: t.ID, Message: a.testMessage(res, t)})
	}
	return out
}

// maxFailedTests bounds the failed-tests output; the tests output counts them all.
const maxFailedTests = 1000

// testsOutput is the tests output: the counts, per suite, and against the base.
type testsOutput struct {
	record.TestCounts
	Suites map[string]record.TestCounts `json:"suites"`
	Base   *baseOutput                  `json:"base,omitempty"`
}

type baseOutput struct {
	Ref   string            `json:"ref"`
	SHA   string            `json:"sha"`
	Level string            `json:"level"`
	Tests record.TestCounts `json:"tests"`
	New   int               `json:"new"`   // failed tests the base did not fail
	Fixed int               `json:"fixed"` // tests the base failed that passed
}

// testOutputs sets the outputs tests and failed-tests in out.
func testOutputs(res *engine.Result, out map[string]string) {
	t := res.Stats.Tests
	o := testsOutput{TestCounts: t.Counts, Suites: t.Suites}
	if o.Suites == nil {
		o.Suites = map[string]record.TestCounts{}
	}
	if ch := res.Stats.Change; ch != nil {
		o.Base = &baseOutput{Ref: ch.Base.Ref, SHA: ch.Base.SHA, Level: ch.Base.Level, Tests: ch.Base.Tests, New: len(ch.New),
			Fixed: len(ch.Fixed)}
	}
	out["tests"] = mustJSON(o)
	ids := []string{}
	seen := map[string]bool{}
	for _, b := range t.Bad {
		if !seen[b.ID] && len(ids) < maxFailedTests {
			seen[b.ID] = true
			ids = append(ids, b.ID)
		}
	}
	out["failed-tests"] = mustJSON(ids)
}
