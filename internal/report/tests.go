package report

// The report's test sections (docs/report.md, "Tests first"), read from Stats.Tests.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/mdcut"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/tests"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Bounds on the test rows shown; the merged JUnit files hold them all.
const (
	openTests  = 10  // failed tests shown open
	shownTests = 50  // failed tests shown in all
	testRunes  = 100 // runes of a message in a test row
)

// testVerdict is the headline's first words: "96 of 1310 tests failed".
func testVerdict(c record.TestCounts) string {
	if c.Bad() == 0 {
		return fmt.Sprintf("%d tests, none failed", c.Total)
	}
	return fmt.Sprintf("%d of %d tests failed", c.Bad(), c.Total)
}

// countsLine is the tests' counts in one line.
func countsLine(c record.TestCounts) string {
	bold := func(n int, what string) string {
		if n > 0 {
			return fmt.Sprintf("**%d %s**", n, what)
		}
		return fmt.Sprintf("%d %s", n, what)
	}
	errored := bold(c.Errored, "errored")
	if c.Unfinished > 0 {
		errored += fmt.Sprintf(" (%d unfinished)", c.Unfinished)
	}
	line := fmt.Sprintf("**%d tests**: %d passed · %s · %s · %d skipped", c.Total, c.Passed, bold(c.Failed, "failed"), errored, c.Skipped)
	if c.Flaky > 0 {
		line += fmt.Sprintf(" · %d flaky", c.Flaky)
	}
	return line
}

// changeLine says the change against the base branch's last run; "" without one.
func changeLine(ch *tests.Change) string {
	if ch == nil {
		return ""
	}
	b := ch.Base
	var parts []string
	if ch.SameLevel {
		d := ch.Delta
		for _, p := range []struct {
			n    int
			what string
		}{{d.Total, "tests"}, {d.Failed, "failed"}, {d.Errored, "errored"}, {d.Skipped, "skipped"}} {
			if p.n != 0 {
				parts = append(parts, signedInt(p.n)+" "+p.what)
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "the same counts")
		}
	} else {
		parts = append(parts, fmt.Sprintf("it ran at level %s (%d tests, %d failed): counts not compared", plain(shorten(b.Level, 40)),
			b.Tests.Total, b.Tests.Bad()))
	}
	if len(ch.New) > 0 {
		parts = append(parts, fmt.Sprintf("**%d new failure(s)**", len(ch.New)))
	}
	if len(ch.Fixed) > 0 {
		parts = append(parts, fmt.Sprintf("%d fixed", len(ch.Fixed)))
	}
	sha := ""
	if len(b.SHA) >= 7 {
		sha = ", " + code(b.SHA[:7])
	}
	return fmt.Sprintf("**Since %s's last run**%s: %s", code(b.Ref), sha, strings.Join(parts, " · "))
}

// signedInt is "+3" or "−3".
func signedInt(n int) string {
	if n < 0 {
		return fmt.Sprintf("−%d", -n)
	}
	return fmt.Sprintf("+%d", n)
}

// fixedLine names the first tests the base branch failed that passed here; "" when none.
func fixedLine(ch *tests.Change, o Options) string {
	if ch == nil || len(ch.Fixed) == 0 {
		return ""
	}
	var names []string
	for _, t := range ch.Fixed[:min(len(ch.Fixed), 5)] {
		names = append(names, code(relText(t.ID, o))+" ("+code(t.Item)+")")
	}
	if len(ch.Fixed) > 5 {
		names = append(names, fmt.Sprintf("and %d more", len(ch.Fixed)-5))
	}
	return fmt.Sprintf("**Fixed**: %s.\n\n", strings.Join(names, ", "))
}

// testsHead is the counts under the headline; "" when the run's tests are not known.
func testsHead(s Stats, suites []verdict.Suite) string {
	t := s.Tests
	if !t.Known {
		return ""
	}
	var b strings.Builder
	b.WriteString(countsLine(t.Counts))
	if c := changeLine(s.Change); c != "" {
		b.WriteString("  \n" + c)
	}
	b.WriteString("\n\n| suite | tests | passed | failed | errored | skipped | items | failed items |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, su := range suites {
		c, ok := t.Suites[su.Label]
		if !ok {
			continue
		}
		mark := ""
		if !su.Passed() {
			mark = " ✗"
		}
		fmt.Fprintf(&b, "| %s%s | %d | %d | %d | %d | %d | %d | %d |\n", cell(su.Label), mark, c.Total, c.Passed, c.Failed, c.Errored,
			c.Skipped, len(su.Items), su.Failed)
	}
	b.WriteString("\n")
	return b.String()
}

// statusWord is a bad test's status, with "new" when the base branch did not fail it.
func statusWord(t tests.Test, isNew bool) string {
	w := t.Result.String()
	if t.Result == junit.CaseUnfinished {
		w = "died in it"
	}
	if isNew {
		w += ", **new**"
	}
	return w
}

// newSet is the tests the change calls new.
func newSet(ch *tests.Change) map[record.TestRef]bool {
	out := map[record.TestRef]bool{}
	if ch != nil {
		for _, t := range ch.New {
			out[t] = true
		}
	}
	return out
}

// testRow is one test as a table row: test, status, item, place, message.
func testRow(t tests.Test, isNew bool, o Options) string {
	where := "–"
	if w := t.Where(o.Roots, nil); w.From != tests.FromItem {
		where = w.File
		if w.Line > 0 {
			where += fmt.Sprintf(":%d", w.Line)
		}
		where = cell(where)
	}
	msg := firstLine(t)
	return fmt.Sprintf("| %s | %s | %s | %s | %s |\n", cell(relText(t.ID, o)), statusWord(t, isNew), cell(t.Item), where,
		plain(shorten(relText(msg, o), testRunes)))
}

// firstLine is the first non-blank line of a test's message, else of its body's end.
func firstLine(t tests.Test) string {
	if l := nonEmpty(t.Message); len(l) > 0 {
		return l[0]
	}
	if l := nonEmpty(t.Body); len(l) > 0 {
		return l[len(l)-1]
	}
	return ""
}

const testHeader = "| test | status | item | at | message |\n|---|---|---|---|---|\n"

// failedTests are the failed, errored and unfinished tests: some open, more folded, the rest counted.
func failedTests(s Stats, o Options) []*block {
	bad := s.Tests.Bad
	if len(bad) == 0 {
		return nil
	}
	isNew := newSet(s.Change)
	rows := make([]string, 0, min(len(bad), shownTests))
	for _, t := range bad[:min(len(bad), shownTests)] {
		rows = append(rows, testRow(t, isNew[t.TestRef], o))
	}
	title := fmt.Sprintf("### Failed tests (%d)\n\n", len(bad))
	open := min(len(rows), openTests)
	out := []*block{table(title+testHeader, rows[:open], "\n", "failed tests")}
	if len(rows) > open {
		out = append(out, table(fmt.Sprintf("<details><summary>%d more failed tests</summary>\n\n%s", len(rows)-open, testHeader),
			rows[open:], "\n</details>\n\n", "failed tests"))
	}
	if more := len(bad) - len(rows); more > 0 {
		out = append(out, fixed(fmt.Sprintf("*and %d more failed tests: %s.*\n\n", more, junitFiles(s.Tests, bad[len(rows):]))))
	}
	return out
}

// junitFiles names the merged JUnit files that hold tests.
func junitFiles(res tests.Result, list []tests.Test) string {
	seen := map[string]bool{}
	var files []string
	for _, t := range list {
		if f := res.Files[t.Suite]; f != "" && !seen[f] {
			seen[f] = true
			files = append(files, code(f))
		}
	}
	sort.Strings(files)
	return strings.Join(files, ", ")
}

// flakyTests are the tests that failed, then passed on a retry of their item.
func flakyTests(s Stats, o Options) *block {
	if len(s.Tests.Flaky) == 0 {
		return nil
	}
	var rows []string
	for _, t := range s.Tests.Flaky {
		rows = append(rows, fmt.Sprintf("| %s | %s |\n", cell(relText(t.ID, o)), cell(t.Item)))
	}
	return collapsible(fmt.Sprintf("### Flaky tests (%d)\n\nFailed on an earlier attempt of their item, then passed.\n\n", len(rows)),
		fmt.Sprintf("%d flaky tests", len(rows)), "| test | item |\n|---|---|\n", rows, "flaky tests")
}

// CommentBytes bounds the PR comment's report (docs/report.md, "The PR comment").
const CommentBytes = 6 << 10

// commentTests are the failed tests the PR comment shows.
const commentTests = 10

// Comment is the sticky PR comment: verdict, test counts, first failed and flaky tests, at most CommentBytes.
func Comment(r *record.Run, suites []verdict.Suite, s Stats, o Options) string {
	o.Roots = append(append([]string(nil), r.Meta.Roots...), o.Roots...)
	var b strings.Builder
	b.WriteString(headline(r, s, o))
	b.WriteString(testsHead(s, suites))
	b.WriteString(fixedLine(s.Change, o))
	b.WriteString(brokenSuites(suites, o))
	isNew := newSet(s.Change)
	if bad := s.Tests.Bad; len(bad) > 0 {
		b.WriteString(testHeader)
		for _, t := range bad[:min(len(bad), commentTests)] {
			b.WriteString(testRow(t, isNew[t.TestRef], o))
		}
		if more := len(bad) - commentTests; more > 0 {
			fmt.Fprintf(&b, "\n*and %d more failed tests: %s.*\n", more, whereReport(o))
		}
		b.WriteString("\n")
	} else if failed := failedItems(suites); len(failed) > 0 {
		for _, it := range failed[:min(len(failed), commentTests)] {
			fmt.Fprintf(&b, "* ✗ %s %s\n", code(it.Key()), plain(itemHow(it)))
		}
		if more := len(failed) - commentTests; more > 0 {
			fmt.Fprintf(&b, "\n*and %d more failed items: %s.*\n", more, whereReport(o))
		}
		b.WriteString("\n")
	}
	if fl := s.Tests.Flaky; len(fl) > 0 {
		var names []string
		for _, t := range fl[:min(len(fl), 5)] {
			names = append(names, code(relText(t.ID, o))+" ("+code(t.Item)+")")
		}
		if len(fl) > 5 {
			names = append(names, fmt.Sprintf("and %d more", len(fl)-5))
		}
		fmt.Fprintf(&b, "**%d flaky test(s)** (failed, then passed on a retry): %s.\n\n", len(fl), strings.Join(names, ", "))
	}
	if o.RunURL != "" {
		fmt.Fprintf(&b, "The whole report: %s.\n", whereReport(o))
	}
	return mdcutComment(b.String())
}

// itemHow is a failed item's end in a few words: "rc 139, cut off".
func itemHow(it verdict.Item) string {
	if !it.Finished {
		return "never finished"
	}
	how := fmt.Sprintf("rc %d", it.RC)
	if it.Note != "" {
		how += ", " + it.Note
	}
	return how
}

// whereReport is where the whole report is read.
func whereReport(o Options) string {
	if o.RunURL != "" {
		return fmt.Sprintf("[the job summary](%s)", o.RunURL)
	}
	return "report/schedule.md in the log dir"
}

func mdcutComment(md string) string {
	return mdcut.Cut(md, CommentBytes, "\n\n*… cut to keep this comment short: the job summary has it all.*\n")
}
