package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// MaxBytes keeps the Markdown under GitHub's 1 MiB job summary limit, with room for the action's own line.
const MaxBytes = 1000 << 10

// Tables longer than these are collapsed in <details>.
const (
	openRows = 25 // a table of up to this many rows stays open
	topRows  = 10 // the "worst misses" tables
)

// Options say where the report will be read.
type Options struct {
	// RunURL, when set, renders for github.com, where relative links resolve nowhere; "" renders report/schedule.md.
	RunURL string
	// Roots are more roots than run.json's under which a path is shown relative (docs/report.md).
	Roots []string
}

// Limits of the log tails a report for github.com shows inline (detailItems of them).
const (
	tailLines = 30      // lines of one tail
	tailBytes = 4 << 10 // bytes of one tail
)

// Render is the report as o says it will be read (Options{}: report/schedule.md).
func Render(r *record.Run, suites []verdict.Suite, s Stats, o Options) string {
	return render(r, suites, s, MaxBytes, o)
}

// block is a piece of the report; a table block's rows may be cut to fit the size limit.
type block struct {
	head string
	rows []string
	tail string
	keep int    // rows kept
	what string // "rows", "items": what the note says was left out
	cum  []int  // cum[i]: bytes of rows[:i]
}

func fixed(s string) *block { return &block{head: s} }

func table(head string, rows []string, tail, what string) *block {
	b := &block{head: head, rows: rows, tail: tail, keep: len(rows), what: what, cum: make([]int, len(rows)+1)}
	for i, r := range rows {
		b.cum[i+1] = b.cum[i] + len(r)
	}
	return b
}

func (b *block) note() string {
	if left := len(b.rows) - b.keep; left > 0 {
		return fmt.Sprintf("\n*%d more %s left out to keep this report under 1 MiB; queue/timings.tsv and run.json in the log dir have them "+
			"all.*\n", left, b.what)
	}
	return ""
}

func (b *block) size() int {
	n := len(b.head) + len(b.tail) + len(b.note())
	if b.cum != nil {
		n += b.cum[b.keep]
	}
	return n
}

func (b *block) write(sb *strings.Builder) {
	sb.WriteString(b.head)
	for _, r := range b.rows[:b.keep] {
		sb.WriteString(r)
	}
	sb.WriteString(b.note())
	sb.WriteString(b.tail)
}

// fit cuts table rows, from the longest table, until the blocks total at most limit bytes; fixed blocks are never cut.
func fit(blocks []*block, limit int) {
	total := 0
	for _, b := range blocks {
		total += b.size()
	}
	for total > limit {
		var big *block
		for _, b := range blocks {
			if b.keep > 0 && (big == nil || b.size() > big.size()) {
				big = b
			}
		}
		if big == nil {
			return
		}
		before := big.size()
		excess := total - limit
		for cut, most := 0, max(1, big.keep/2); big.keep > 0 && cut < most && before-big.size() < excess; cut++ {
			big.keep--
		}
		total += big.size() - before
	}
}

// render builds the report within limit bytes, in the order a reviewer reads it (docs/report.md).
func render(r *record.Run, suites []verdict.Suite, s Stats, limit int, o Options) string {
	o.Roots = append(append([]string(nil), r.Meta.Roots...), o.Roots...)
	var blocks []*block
	add := func(b *block) {
		if b != nil {
			blocks = append(blocks, b)
		}
	}
	add(fixed(headline(r, s, o) + testsHead(s, suites) + itemsLine(r, s, o)))
	if b := brokenSuites(suites, o); b != "" {
		add(fixed(b))
	}
	for _, b := range failedTests(s, o) {
		add(b)
	}
	add(flakyTests(s, o))
	add(failedSuites(suites))
	failed := failedItems(suites)
	add(failedTable(failed, o))
	add(failedDetails(r, failed, s, o))
	if b := rerunNote(r) + skipped(suites); b != "" {
		add(fixed(b))
	}
	if o.RunURL != "" {
		// On the pull request the telemetry is folded (docs/report.md, "Tests first").
		add(fixed("<details><summary>How the run went: efficiency, timeline, suites, GPUs, estimates, weights</summary>\n\n"))
	}
	add(fixed(efficiency(r, s)))
	add(shardsSection(r, suites))
	add(fixed(timelineSection(r, s, o)))
	add(suitesTable(suites, s))
	add(gpuTable(s))
	for _, b := range badDayTables(r, suites, o) {
		add(b)
	}
	add(calibrationNote(r))
	for _, b := range estimateTables(s) {
		add(b)
	}
	add(unknownTable(s))
	add(missingTable(s))
	for _, b := range weightTables(r) {
		add(b)
	}
	if o.RunURL != "" {
		add(fixed("</details>\n\n"))
	}
	add(fixed("<sub>Built from the run's files; `sgpu-queue report LOGDIR` rebuilds it.</sub>\n"))
	fit(blocks, limit)
	var sb strings.Builder
	for _, b := range blocks {
		b.write(&sb)
	}
	return sb.String()
}

// headline is the verdict: tests first when known, then items and the level.
func headline(r *record.Run, s Stats, o Options) string {
	var b strings.Builder
	head := ""
	if s.Tests.Known {
		head = testVerdict(s.Tests.Counts) + "; "
	}
	switch {
	case r.Meta.Cancelled:
		fmt.Fprintf(&b, "## ✗ sgpu-queue: cancelled, %d of %d items finished, %d failed", s.Finished, s.Items, s.Failed)
	case !r.Meta.Finished:
		fmt.Fprintf(&b, "## ✗ sgpu-queue: interrupted, %d of %d items finished, %d failed", s.Finished, s.Items, s.Failed)
	case r.Meta.BeforeItems():
		b.WriteString("## ✗ sgpu-queue: stopped before any item ran")
	case s.Passed:
		fmt.Fprintf(&b, "## ✓ sgpu-queue: %sall %d items passed", head, s.Items)
	default:
		fmt.Fprintf(&b, "## ✗ sgpu-queue: %s%d of %d items failed", head, s.Failed, s.Items)
	}
	if r.Meta.Level != "" {
		// The level decides which tests ran: a green level 1 says nothing of level 3.
		fmt.Fprintf(&b, " at level %s", plain(shorten(r.Meta.Level, 40)))
	}
	b.WriteString("\n\n")
	return b.String()
}

// itemsLine is the items' figures and the alerts (cancelled, quarantined GPUs, no-run items…).
func itemsLine(r *record.Run, s Stats, o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**wall %s** · %d items on %d GPUs · %d failed · utilisation %.1f %% · %s above the lower bound\n\n",
		textfmt.Dur(s.Wall), s.Items, s.GPUs, s.Failed, 100*s.Utilisation, pct(s.AboveBound))
	b.WriteString(shardNote(r))
	switch {
	case r.Meta.Cancelled && r.Meta.BeforeItems():
		fmt.Fprintf(&b, "> [!WARNING]\n> **The run was cancelled before any item ran**: %s. "+
			"Every suite is marked failed; nothing was learned.\n\n",
			plain(shorten(relText(r.Meta.Stop.Message, o), 500)))
	case r.Meta.Cancelled:
		fmt.Fprintf(&b, "> [!WARNING]\n> **The run was cancelled** at t+%s. Items cut off are marked failed; the figures below cover what "+
			"ran, and only finished items were learned.\n\n", clock(s.Wall))
	case !r.Meta.Finished:
		b.WriteString("> [!WARNING]\n> **The item phase never ended**: run.json was not completed (was sgpu-queue killed?). The figures below " +
			"cover the timing rows written until then; nothing was learned.\n\n")
	}
	if st := r.Meta.Stop; st != nil {
		switch st.Reason {
		case outcome.StopCancelled, outcome.StopListingFailed, outcome.StopSetupFailed:
			// Said above, or by brokenSuites.
		case outcome.StopInternal:
			fmt.Fprintf(&b, "> [!CAUTION]\n> **sgpu-queue stopped on an internal error**: %s. "+
				"The other items were stopped; what finished is reported and learned; the run exits 70.\n\n",
				plain(shorten(relText(st.Message, o), 500)))
		default:
			fmt.Fprintf(&b, "> [!CAUTION]\n> **The run stopped early**: %s\n\n", plain(shorten(relText(st.Message, o), 500)))
		}
	}
	if n := len(r.Meta.Quarantined); n > 0 {
		var gpus []string
		for _, q := range r.Meta.Quarantined {
			gpus = append(gpus, gpuName(q.GPU))
		}
		fmt.Fprintf(&b, "> [!WARNING]\n> **%d GPU(s) quarantined** (%s): their items failed fast or with device errors while passing "+
			"elsewhere; see *Quarantined GPUs*.\n\n", n, strings.Join(gpus, ", "))
	}
	// A suite that wrote no JUnit at all: one cause, said once for the suite.
	whole := map[string]bool{}
	for _, su := range s.NoJUnit {
		whole[su.Label] = true
		fmt.Fprintf(&b, "> [!CAUTION]\n> **Suite %s wrote no JUnit XML**: none of its %s wrote its file, so each is no-run and fails. A "+
			"suite of plain scripts writes none: judge its items by their exit codes with `--junit-optional '%s/*'` (input "+
			"`junit-optional`). If it should write JUnit, check the tag round trip with `sgpu-queue verify`.\n\n",
			code(su.Label), textfmt.Count(su.Items, "item"), su.Label)
	}
	var norun []verdict.Item
	for _, it := range s.NoRun {
		if !whole[it.Label] {
			norun = append(norun, it)
		}
	}
	if n := len(norun); n > 0 {
		fmt.Fprintf(&b, "> [!CAUTION]\n> **%d item(s) ran nothing** (no-run: exit code 0, but no JUnit XML and no `.partial`): their re-entry "+
			"selected no call line, so they fail. Check the tag round trip with `sgpu-queue verify`: ", n)
		keyList(&b, norun, "*Failed items*")
	}
	if n := len(s.Missing); n > 0 {
		what := "never finished"
		switch {
		case r.Meta.Cancelled:
			what = "did not run before the cancel"
		case r.Meta.Merge != nil:
			what = "never ran on their shard"
		}
		fmt.Fprintf(&b, "> [!WARNING]\n> **%d queued item(s) produced no timing row** (%s; counted as failed): ", n, what)
		keyList(&b, s.Missing, "*Items that never finished*")
	}
	return b.String()
}

// brokenSuites notes the suites whose listing or setup failed; "" when none.
func brokenSuites(suites []verdict.Suite, o Options) string {
	var b strings.Builder
	for _, su := range suites {
		if su.Broken != "" {
			fmt.Fprintf(&b, "> [!CAUTION]\n> **Suite %s failed before its items ran**: %s\n\n",
				code(su.Label), plain(shorten(relText(su.Broken, o), 600)))
		}
	}
	return b.String()
}

// rerunNote says the run re-ran what failed (docs/reruns.md); "" for a full run.
func rerunNote(r *record.Run) string {
	rr := r.Meta.Rerun
	if rr == nil {
		return ""
	}
	unrun := ""
	if rr.Unrun > 0 {
		unrun = fmt.Sprintf(", and whole the %d item(s) no earlier run of this key had run", rr.Unrun)
	}
	return fmt.Sprintf("> [!NOTE]\n> **A re-run**: %d of the %d item(s) that failed the last attempt ran again (%d narrowed to their "+
		"failed tests)%s; "+
		"the rest of the queue did not run, and the weight table was left as it is.\n\n", rr.Ran, rr.Failed, rr.Narrowed, unrun)
}

// skipped notes the suites that did not run (verdict.Suite.Skip); "" when none.
func skipped(suites []verdict.Suite) string {
	names := map[outcome.Skip][]string{}
	for _, su := range suites {
		if su.Skip != "" {
			names[su.Skip] = append(names[su.Skip], code(su.Label))
		}
	}
	var b strings.Builder
	for _, k := range []struct {
		skip outcome.Skip
		what string
	}{
		{outcome.NotSelected, "not selected** (`--suites`): not run"},
		{outcome.NotRerun, "not re-run** (a re-run of what failed: none of their items failed the last attempt)"},
	} {
		if n := names[k.skip]; len(n) > 0 {
			fmt.Fprintf(&b, "> [!NOTE]\n> **%d suite(s) %s, passing: %s.\n\n", len(n), k.what, strings.Join(n, ", "))
		}
	}
	return b.String()
}

// keyList ends a note with the first topRows item keys and where the rest are.
func keyList(b *strings.Builder, items []verdict.Item, rest string) {
	for i, it := range items {
		if i == topRows {
			fmt.Fprintf(b, " and %d more (see %s)", len(items)-topRows, rest)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(code(it.Key()))
	}
	b.WriteString(".\n\n")
}

// secs is a duration for the efficiency table: "43m44s (2624 s)".
func secs(v float64) string {
	if v < 600 { // Dur already says "494s"
		return textfmt.Dur(v)
	}
	return fmt.Sprintf("%s (%.0f s)", textfmt.Dur(v), v)
}

// signed is a signed duration: "+12s", "−4m05s".
func signed(v float64) string {
	switch {
	case v <= -0.05:
		return "−" + textfmt.Dur(-v)
	case v < 0.05:
		return "0s"
	}
	return "+" + textfmt.Dur(v)
}

// signedPct is a signed percentage: "+12 %", "−50 %".
func signedPct(f float64) string {
	sign := "+"
	if f < 0 {
		sign, f = "−", -f
	}
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return "–"
	case f < 0.0005:
		return "0 %"
	case f < 0.0995:
		// Small shifts keep a decimal: "−0.5 %" says more than "−0 %".
		return fmt.Sprintf("%s%.1f %%", sign, 100*f)
	}
	return fmt.Sprintf("%s%.0f %%", sign, 100*f)
}

// gpuName is a GPU id as table text.
func gpuName(g string) string { return plain(shorten(g, 24)) }

func gapDur(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.0f ms", 1000*v)
	}
	return textfmt.Dur(v)
}
