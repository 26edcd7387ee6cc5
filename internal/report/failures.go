package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/tests"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Bounds on the failed test cases shown per failed item (docs/report.md); the merged JUnit has the rest.
const (
	detailItems  = 20  // failed items shown with their test cases (and log tails)
	caseCount    = 5   // failed test cases shown per item
	messageLines = 3   // lines of one message
	messageRunes = 200 // runes of one message line
)

// failedSuites is the table of the failed suites; nil when none failed.
func failedSuites(suites []verdict.Suite) *block {
	var rows []string
	for _, su := range suites {
		if su.Passed() {
			continue
		}
		why := fmt.Sprintf("%d of %d items failed", su.Failed, len(su.Items))
		switch {
		case su.Broken != "":
			why = "failed before its items ran (see above)"
		case su.Unlisted:
			why = "its items were never listed"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s |\n", cell(su.Label), cell(su.Mode), su.RC, why))
	}
	if len(rows) == 0 {
		return nil
	}
	return collapsible(fmt.Sprintf("### Failed suites (%d)\n\n", len(rows)), fmt.Sprintf("%d failed suites", len(rows)),
		"| suite | mode | rc | why |\n|---|---|---:|---|\n", rows, "failed suites")
}

// failedDetails shows each failed item's failed test cases; on github.com also its log tail, as a link
// would resolve nowhere.
func failedDetails(r *record.Run, failed []verdict.Item, s Stats, o Options) *block {
	if len(failed) == 0 {
		return nil
	}
	// Items that ran come first: one that never started has no log and no JUnit.
	failed = append([]verdict.Item(nil), failed...)
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].Log() != "" && failed[j].Log() == "" })
	var rows []string
	more := 0 // items past the bound that ran (the rest never started: no log)
	for i, it := range failed {
		if i >= detailItems {
			if it.Log() != "" {
				more++
			}
			continue
		}
		if d := itemDetail(r, it, s, o); d != "" {
			rows = append(rows, d)
		}
	}
	if len(rows) == 0 {
		return nil // nothing the table above does not say
	}
	tail := ""
	if more > 0 {
		where := "their logs are in the log dir's `items/`"
		if o.RunURL != "" {
			where = fmt.Sprintf("their logs are in [the run's artifacts](%s)", o.RunURL)
		}
		tail = fmt.Sprintf("*%d more failed items are in the table above; %s.*\n\n", more, where)
	}
	return table("", rows, tail, "failed items")
}

// itemDetail is one failed item's section; "" when the local report has nothing to add to its table row.
func itemDetail(r *record.Run, it verdict.Item, s Stats, o Options) string {
	var cases []tests.Test
	for _, t := range s.Tests.Bad {
		if t.Item == it.Key() {
			cases = append(cases, t)
		}
	}
	file, read := s.Tests.Files[it.Label]
	if it.Log() == "" && len(cases) == 0 || !read && o.RunURL == "" {
		return "" // never started, or nothing the table above does not say
	}
	var b strings.Builder
	how := "never finished"
	if it.Finished {
		how = fmt.Sprintf("rc %d", it.RC)
		if it.Note != "" {
			how += ", " + plain(it.Note)
		}
		how += fmt.Sprintf(", %s on GPU %s", textfmt.Dur(it.Seconds), gpuName(it.GPU))
	}
	fmt.Fprintf(&b, "#### ✗ %s: %s\n\n", code(it.Key()), how)
	switch {
	case len(cases) > 0:
		writeCases(&b, cases, file, o)
	case read:
		b.WriteString("Its JUnit records no failed test case: see its log.\n\n")
	}
	logTail(&b, r, it, o)
	return b.String()
}

// writeCases lists the first caseCount failed tests with their messages.
func writeCases(b *strings.Builder, cases []tests.Test, file string, o Options) {
	if o.RunURL != "" {
		fmt.Fprintf(b, "<details><summary>%d failed test case(s) in its JUnit</summary>\n\n", len(cases))
		defer b.WriteString("</details>\n\n")
	} else {
		fmt.Fprintf(b, "%d failed test case(s) in its JUnit:\n\n", len(cases))
	}
	for _, c := range cases[:min(len(cases), caseCount)] {
		kind := "failure"
		switch c.Result {
		case junit.CaseErrored:
			kind = "error"
		case junit.CaseUnfinished:
			kind = "started and never finished"
		}
		if c.Type != "" && c.Result != junit.CaseUnfinished {
			kind += ": " + plain(shorten(relText(c.Type, o), messageRunes))
		}
		fmt.Fprintf(b, "**%s** (%s)\n\n", code(relText(c.ID, o)), kind)
		if m := message(c, o); m != "" {
			b.WriteString(fence(m))
			b.WriteString("\n")
		}
	}
	if more := len(cases) - caseCount; more > 0 {
		fmt.Fprintf(b, "*and %d more failed test case(s): %s.*\n\n", more, code(file))
	}
}

// message is a test's message, else the end of its body (where a traceback ends).
func message(c tests.Test, o Options) string {
	lines := nonEmpty(c.Message)
	if len(lines) > messageLines {
		lines = append(lines[:messageLines], "…")
	}
	if len(lines) == 0 {
		lines = nonEmpty(c.Body)
		if len(lines) > messageLines {
			lines = append([]string{"…"}, lines[len(lines)-messageLines:]...)
		}
	}
	for i, l := range lines {
		lines[i] = shorten(relText(l, o), messageRunes)
	}
	return strings.Join(lines, "\n")
}

func nonEmpty(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
	}
	return out
}

// logTail is the item's log tail on github.com, a link to the log elsewhere.
func logTail(b *strings.Builder, r *record.Run, it verdict.Item, o Options) {
	if o.RunURL == "" {
		if it.Log() != "" {
			fmt.Fprintf(b, "Log: %s\n\n", logLink(it.Log(), o))
		}
		return
	}
	tail := ""
	if it.Log() != "" && r.Dir != "" {
		tail = textfmt.FileTail(filepath.Join(r.Dir, filepath.FromSlash(it.Log())), tailBytes, tailLines)
	}
	if tail == "" {
		tail = "(the log is empty or missing)\n"
	}
	// <summary> is raw HTML, where Markdown's code spans do not work.
	fmt.Fprintf(b, "<details><summary>Last %d lines of <code>%s</code></summary>\n\n%s\n</details>\n\n",
		tailLines, xmlText(it.Log(), maxShown), fence(relText(tail, o)))
}

// relText is s with o.Roots taken off its paths, so the report names no runner's absolute path.
func relText(s string, o Options) string {
	for _, root := range o.Roots {
		root = strings.TrimRight(root, "/")
		if len(root) > 1 {
			s = strings.ReplaceAll(s, root+"/", "")
		}
	}
	return s
}
