package report

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Bounds on the failed test cases shown under each failed item (docs/report.md): a
// reviewer needs the first few names and the first words of each message, and the
// merged JUnit file has the rest.
const (
	detailItems  = 20  // failed items shown with their test cases (and log tails)
	caseCount    = 5   // failed test cases shown per item
	messageLines = 3   // lines of one message
	messageRunes = 200 // runes of one message line
)

// caseSource is what the run's merged JUnit files say about its failed items.
type caseSource struct {
	files map[string]string                    // suite label → its merged file, relative to the log dir
	cases map[string]map[string][]junit.Failed // suite label → item name → failed cases
}

// readCases reads the merged JUnit files run.json lists (Meta.JUnitFiles); a file
// that is gone (a log dir downloaded without it) or unreadable shows no cases. The
// log dir may come from elsewhere (report-from reads a fork's artifact): only
// regular .xml files are read, never a link, a FIFO or a device.
func readCases(r *record.Run) caseSource {
	src := caseSource{files: map[string]string{}, cases: map[string]map[string][]junit.Failed{}}
	if r.Dir == "" {
		return src
	}
	for _, rel := range r.Meta.JUnitFiles() {
		p := filepath.Join(r.Dir, filepath.FromSlash(rel))
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || !strings.HasSuffix(p, ".xml") {
			continue
		}
		f, err := junit.ReadFailures(p)
		if err != nil {
			continue
		}
		label := f.Suite
		if label == "" {
			label = strings.TrimSuffix(path.Base(rel), ".xml")
		}
		src.files[label] = rel
		src.cases[label] = f.Items
	}
	return src
}

// failedSuites is the table of the suites that failed, first in the report; nil
// when none did.
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

// failedDetails shows, under each failed item, the test cases its JUnit records
// as failed, each with the first lines of its message; for github.com also the end
// of its log, folded (a link into the log dir would resolve nowhere there).
func failedDetails(r *record.Run, s Stats, o Options) *block {
	failed := failedItems(s)
	if len(failed) == 0 {
		return nil
	}
	src := readCases(r)
	// Items that ran come first: one that never started has no log and no JUnit.
	failed = append([]ItemStat(nil), failed...)
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].LogRel != "" && failed[j].LogRel == "" })
	var rows []string
	more := 0 // items past the bound that ran (the rest never started: no log)
	for i, it := range failed {
		if i >= detailItems {
			if it.LogRel != "" {
				more++
			}
			continue
		}
		if d := itemDetail(r, it, src, o); d != "" {
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

// itemDetail is one failed item: a heading, its failed test cases, its log; "" for
// the log dir's own report when its JUnit says nothing (the table links the log).
func itemDetail(r *record.Run, it ItemStat, src caseSource, o Options) string {
	name := it.Tag
	if name == "" {
		name = "whole" // as the merge names an opaque item (junit.Item)
	}
	cases, read := src.cases[it.Label][name], src.cases[it.Label] != nil
	if it.LogRel == "" && len(cases) == 0 || !read && o.RunURL == "" {
		return "" // never started, or nothing the table above does not say
	}
	var b strings.Builder
	how := "never finished"
	if it.Finished {
		how = fmt.Sprintf("rc %d", it.RC)
		if it.Note != "" {
			how += ", " + plain(it.Note)
		}
		how += fmt.Sprintf(", %s on GPU %s", textfmt.Dur(it.Actual), gpuName(it.GPU))
	}
	fmt.Fprintf(&b, "#### ✗ %s: %s\n\n", code(it.Key), how)
	switch {
	case len(cases) > 0:
		writeCases(&b, cases, src.files[it.Label], o)
	case read:
		b.WriteString("Its JUnit records no failed test case: see its log.\n\n")
	}
	logTail(&b, r, it, o)
	return b.String()
}

// writeCases lists the first caseCount cases, each by name with its message.
func writeCases(b *strings.Builder, cases []junit.Failed, file string, o Options) {
	fmt.Fprintf(b, "%d failed test case(s) in its JUnit:\n\n", len(cases))
	for _, c := range cases[:min(len(cases), caseCount)] {
		kind := "failure"
		if c.Error {
			kind = "error"
		}
		if c.Type != "" {
			kind += ": " + plain(shorten(relText(c.Type, o), messageRunes))
		}
		fmt.Fprintf(b, "**%s** (%s)\n\n", code(relText(c.Name, o)), kind)
		if m := message(c, o); m != "" {
			b.WriteString(fence(m))
			b.WriteString("\n")
		}
	}
	if more := len(cases) - caseCount; more > 0 {
		fmt.Fprintf(b, "*and %d more failed test case(s): %s.*\n\n", more, code(file))
	}
}

// message is the first lines of a case's message; without one, the last lines of
// its body (where a traceback ends with the assertion). Roots become relative.
func message(c junit.Failed, o Options) string {
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

// logTail is, for github.com, the end of the item's log folded below its cases;
// for the log dir's own report, a link to the log.
func logTail(b *strings.Builder, r *record.Run, it ItemStat, o Options) {
	if o.RunURL == "" {
		if it.LogRel != "" {
			fmt.Fprintf(b, "Log: %s\n\n", logLink(it.LogRel, o))
		}
		return
	}
	tail := ""
	if it.LogRel != "" && r.Dir != "" {
		tail = textfmt.FileTail(filepath.Join(r.Dir, filepath.FromSlash(it.LogRel)), tailBytes, tailLines)
	}
	if tail == "" {
		tail = "(the log is empty or missing)\n"
	}
	// <summary> is raw HTML, where Markdown's code spans do not work.
	fmt.Fprintf(b, "<details><summary>Last %d lines of <code>%s</code></summary>\n\n%s\n</details>\n\n",
		tailLines, xmlText(it.LogRel, maxShown), fence(relText(tail, o)))
}

// relText is s with each of o.Roots (the repo root, its path in the target
// container) taken off the paths it starts, so that the report names no runner's
// absolute path.
func relText(s string, o Options) string {
	for _, root := range o.Roots {
		root = strings.TrimRight(root, "/")
		if len(root) > 1 {
			s = strings.ReplaceAll(s, root+"/", "")
		}
	}
	return s
}
