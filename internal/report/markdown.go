package report

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// MaxBytes is the size the Markdown is kept under: GitHub refuses a job summary over
// 1 MiB, and this leaves the action room for a line of its own.
const MaxBytes = 1000 << 10

// Tables longer than these are collapsed in <details>.
const (
	openRows = 25 // a table of up to this many rows stays open
	topRows  = 10 // the "worst misses" tables
)

// Options say where the report will be read.
type Options struct {
	// RunURL, when set, renders the report for github.com (the job summary, a
	// check run, a PR comment), where a relative link resolves nowhere: logs are
	// named, not linked; each failed item shows the tail of its log inline; and
	// the report points at the run's page, whose artifacts hold the log dir. ""
	// renders report/schedule.md, read beside the log dir it links into.
	RunURL string
	// Roots are more roots than run.json's (logdir.Meta.Roots): a path under one
	// is shown relative to it, so that the report names no runner's or
	// container's absolute path (docs/report.md).
	Roots []string
}

// Limits of the log tails a report for github.com shows inline (detailItems of them).
const (
	tailLines = 30      // lines of one tail
	tailBytes = 4 << 10 // bytes of one tail
)

// Render is the report as o says it will be read (Options{}: report/schedule.md).
func Render(r *logdir.Run, suites []verdict.Suite, s Stats, o Options) string {
	return render(r, suites, s, MaxBytes, o)
}

// block is a piece of the report; the rows of a table block may be cut, from the
// end, to keep the whole under the size limit.
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
		return fmt.Sprintf("\n*%d more %s left out to keep this report under 1 MiB; queue/timings.tsv and run.json in the log dir have them all.*\n", left, b.what)
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

// fit cuts table rows until the blocks total at most limit bytes: always from the
// longest table, at most half of its rows at a time, so the cuts spread over the
// tables that cost the most. Fixed blocks (the headline) are never cut.
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

// render builds the report within limit bytes, in the order a reviewer reads it
// (docs/report.md): the verdict, what failed (suites, items, their test cases and
// logs), then how the run went (efficiency, shards, timeline, tables).
func render(r *logdir.Run, suites []verdict.Suite, s Stats, limit int, o Options) string {
	o.Roots = append(append([]string(nil), r.Meta.Roots...), o.Roots...)
	var blocks []*block
	add := func(b *block) {
		if b != nil {
			blocks = append(blocks, b)
		}
	}
	add(fixed(headline(r, s, o)))
	if b := brokenSuites(suites, o); b != "" {
		add(fixed(b))
	}
	add(failedSuites(suites))
	add(failedTable(s, o))
	add(failedDetails(r, s, o))
	if b := rerunNote(r) + skipped(suites); b != "" {
		add(fixed(b))
	}
	add(fixed(efficiency(r, s)))
	add(shardsSection(r, suites))
	add(fixed(timelineSection(r, s, o)))
	add(suitesTable(suites, s))
	add(gpuTable(s))
	for _, b := range badDayTables(r, suites, o) {
		add(b)
	}
	for _, b := range estimateTables(s) {
		add(b)
	}
	add(unknownTable(s))
	add(missingTable(s))
	for _, b := range weightTables(r) {
		add(b)
	}
	add(fixed("<sub>Built from the run's files; `sgpu-queue report LOGDIR` rebuilds it.</sub>\n"))
	fit(blocks, limit)
	var sb strings.Builder
	for _, b := range blocks {
		b.write(&sb)
	}
	return sb.String()
}

func headline(r *logdir.Run, s Stats, o Options) string {
	var b strings.Builder
	switch {
	case s.Cancelled:
		fmt.Fprintf(&b, "## ✗ sgpu-queue: cancelled, %d of %d items finished, %d failed", s.Finished, s.Items, s.Failed)
	case s.Interrupted:
		fmt.Fprintf(&b, "## ✗ sgpu-queue: interrupted, %d of %d items finished, %d failed", s.Finished, s.Items, s.Failed)
	case r.Meta.BeforeItems():
		b.WriteString("## ✗ sgpu-queue: stopped before any item ran")
	case s.Passed:
		fmt.Fprintf(&b, "## ✓ sgpu-queue: all %d items passed", s.Items)
	default:
		fmt.Fprintf(&b, "## ✗ sgpu-queue: %d of %d items failed", s.Failed, s.Items)
	}
	if r.Meta.Level != "" {
		// The level decides which tests ran: a green level 1 says nothing of level 3.
		fmt.Fprintf(&b, " at level %s", plain(shorten(r.Meta.Level, 40)))
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "**wall %s** · %d items on %d GPUs · %d failed · utilisation %.1f %% · %s above the lower bound\n\n",
		textfmt.Dur(s.Wall), s.Items, s.GPUs, s.Failed, 100*s.Utilisation, pct(s.AboveBound))
	b.WriteString(shardNote(r))
	switch {
	case s.Cancelled && r.Meta.BeforeItems():
		fmt.Fprintf(&b, "> [!WARNING]\n> **The run was cancelled before any item ran**: %s. "+
			"Every suite is marked failed; nothing was learned.\n\n",
			plain(shorten(relText(r.Meta.Stop.Message, o), 500)))
	case s.Cancelled:
		fmt.Fprintf(&b, "> [!WARNING]\n> **The run was cancelled** at t+%s. Items cut off are marked failed; the figures below cover what ran, and only finished items were learned.\n\n", clock(s.Wall))
	case s.Interrupted:
		b.WriteString("> [!WARNING]\n> **The item phase never ended**: run.json was not completed (was sgpu-queue killed?). The figures below cover the timing rows written until then; nothing was learned.\n\n")
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
		fmt.Fprintf(&b, "> [!WARNING]\n> **%d GPU(s) quarantined** (%s): their items failed fast or with device errors while passing elsewhere; see *Quarantined GPUs*.\n\n", n, strings.Join(gpus, ", "))
	}
	if n := len(s.NoRun); n > 0 {
		fmt.Fprintf(&b, "> [!CAUTION]\n> **%d item(s) ran nothing** (no-run: exit code 0, but no JUnit XML and no `.partial`): their re-entry selected no call line, so they fail. Check the tag round trip with `sgpu-queue verify`: ", n)
		keyList(&b, s.NoRun, "*Failed items*")
	}
	if n := len(s.Missing); n > 0 {
		what := "never finished"
		switch {
		case s.Cancelled:
			what = "did not run before the cancel"
		case r.Meta.Merge != nil:
			what = "never ran on their shard"
		}
		fmt.Fprintf(&b, "> [!WARNING]\n> **%d queued item(s) produced no timing row** (%s; counted as failed): ", n, what)
		keyList(&b, s.Missing, "*Items that never finished*")
	}
	return b.String()
}

// brokenSuites is the note of the suites that failed before their items ran (a
// listing or setup that failed, in the run or on a shard: verdict.Suite.Broken),
// each with the reason the run recorded; "" when none did.
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

// rerunNote says that the run was a re-run of what failed the last attempt
// (logdir.Meta.Rerun; docs/reruns.md), and of how many items; "" for a full run.
func rerunNote(r *logdir.Run) string {
	rr := r.Meta.Rerun
	if rr == nil {
		return ""
	}
	return fmt.Sprintf("> [!NOTE]\n> **A re-run**: %d of the %d item(s) that failed the last attempt ran again (%d narrowed to their failed tests); "+
		"the rest of the queue did not run, and the weight table was left as it is.\n\n", rr.Queued, rr.Failed, rr.Narrowed)
}

// skipped is the note of the suites that did not run and pass (verdict.Suite.Skip):
// those --suites left out, those a re-run had nothing of to run again; "" when none.
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

// keyList ends a headline note with the first topRows item keys, and where to find
// the rest.
func keyList(b *strings.Builder, items []ItemStat, rest string) {
	for i, it := range items {
		if i == topRows {
			fmt.Fprintf(b, " and %d more (see %s)", len(items)-topRows, rest)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(code(it.Key))
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
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return "–"
	case math.Abs(f) < 0.0005:
		return "0 %"
	case math.Abs(f) < 0.0995:
		// Small shifts keep a decimal: "−0.5 %" says more than "−0 %".
		if f < 0 {
			return fmt.Sprintf("−%.1f %%", -100*f)
		}
		return fmt.Sprintf("+%.1f %%", 100*f)
	case f < 0:
		return fmt.Sprintf("−%.0f %%", -100*f)
	}
	return fmt.Sprintf("+%.0f %%", 100*f)
}

// gpuName is a GPU id as table text.
func gpuName(g string) string { return plain(shorten(g, 24)) }

func gapDur(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.0f ms", 1000*v)
	}
	return textfmt.Dur(v)
}

func efficiency(r *logdir.Run, s Stats) string {
	var b strings.Builder
	b.WriteString("### Efficiency\n\n| | |\n|---|---|\n")
	hind := "hindsight LPT"
	if s.Mixed {
		// Work is GPU time: an item on 4 GPUs for 10 s is 40 s of it.
		fmt.Fprintf(&b, "| total work (GPU time: seconds × GPUs) | %s in %d item runs |\n", secs(s.Work), s.Attempts)
		hind = "hindsight"
	} else {
		fmt.Fprintf(&b, "| total work | %s in %d item runs |\n", secs(s.Work), s.Attempts)
	}
	fmt.Fprintf(&b, "| wall clock (item phase) | %s |\n", secs(s.Wall))
	setBy := "work/N"
	if s.Split.Binding {
		setBy = "the largest item"
	}
	fmt.Fprintf(&b, "| lower bound max(work/%d, largest) | %s, set by %s |\n", s.GPUs, secs(s.Bound), setBy)
	fmt.Fprintf(&b, "| above the bound | %s (%s) |\n", pct(s.AboveBound), signed(s.Wall-s.Bound))
	fmt.Fprintf(&b, "| utilisation work/(wall×%d) | %.1f %% |\n", s.GPUs, 100*s.Utilisation)
	if s.Cancelled || s.Interrupted {
		fmt.Fprintf(&b, "| %s, quality, split | – (the run stopped early: it did not run every item) |\n", hind)
	} else {
		fmt.Fprintf(&b, "| %s makespan | %s |\n", hind, secs(s.Hindsight))
		fmt.Fprintf(&b, "| quality: wall ÷ %s | **%.3f** |\n", hind, s.Quality)
	}
	if s.Gaps.Count > 0 {
		fmt.Fprintf(&b, "| dispatch gap (end → next start, same GPU) | mean %s, max %s over %d gaps |\n",
			gapDur(s.Gaps.Mean), gapDur(s.Gaps.Max), s.Gaps.Count)
	}
	if s.LargestKey != "" {
		where := ""
		for _, t := range r.Timings {
			if t.Secs == s.Largest {
				where = fmt.Sprintf(", ran t+%s → t+%s on GPU %s", clock(t.StartOff), clock(t.EndOff), gpuName(t.GPU))
				break
			}
		}
		fmt.Fprintf(&b, "| largest item | %s %s%s |\n", cell(s.LargestKey), secs(s.Largest), where)
	}
	if s.Last.Finished {
		fmt.Fprintf(&b, "| last to finish | %s t+%s → t+%s on GPU %s |\n", cell(s.Last.Key), clock(s.Last.Start), clock(s.Last.End), gpuName(s.Last.GPU))
	}
	if !s.Cancelled && !s.Interrupted && s.LargestKey != "" {
		sp := s.Split
		verdict := "**no**"
		if sp.Pays {
			verdict = "**yes**"
		}
		why := fmt.Sprintf("it is %.0f %% of work/%d, which sets the bound", 100*s.Largest/math.Max(s.Work/float64(s.GPUs), 1e-9), s.GPUs)
		if sp.Binding {
			why = "it alone sets the lower bound"
		}
		fmt.Fprintf(&b, "| split the largest item? | %s: halving it would take the hindsight makespan from %s to %s (%s, %s); %s |\n",
			verdict, textfmt.Dur(sp.Before), textfmt.Dur(sp.After), signed(sp.After-sp.Before), signedPct(sp.After/math.Max(sp.Before, 1e-9)-1), why)
	}
	b.WriteString("\n")
	if s.Mixed {
		b.WriteString("*Hindsight* is the default queue (multi-GPU items in the order it chooses on these durations, GPUs held for them, shorter items backfilled) on the durations this run measured, with no dispatch overhead: what perfect estimates would give. " +
			"*Quality* = wall ÷ hindsight: 1.000 is as good as perfect estimates, above 1 is what estimate errors and dispatch overhead cost.  \n")
	} else {
		b.WriteString("*Hindsight LPT* is longest-first on the durations this run measured, with no dispatch overhead: what perfect estimates would give. " +
			"*Quality* = wall ÷ hindsight LPT: 1.000 is as good as perfect estimates, above 1 is what estimate errors and dispatch overhead cost, below 1 means the run beat plain LPT.  \n")
	}
	fmt.Fprintf(&b, "*Split rule*: splitting the largest item pays when halving it would shorten the hindsight makespan by at least %.0f %%, which happens when it is (close to) the binding term of the lower bound.\n\n", 100*SplitPays)
	return b.String()
}

func timelineSection(r *logdir.Run, s Stats, o Options) string {
	var b strings.Builder
	b.WriteString("### Timeline\n\n")
	if o.RunURL != "" {
		fmt.Fprintf(&b, "Every item, with tooltips: `report/timeline.svg` in the log dir; the logs, the timeline and the JUnit files are in [the run's artifacts](%s).\n\n", o.RunURL)
	} else {
		b.WriteString("Every item, with tooltips: `report/timeline.svg` in the log dir ([timeline.svg](timeline.svg) beside this file).\n\n")
	}
	mermaid(&b, r, s)
	return b.String()
}

// collapsible puts a long table in <details>.
func collapsible(title, summary, header string, rows []string, what string) *block {
	if len(rows) <= openRows {
		return table(title+header, rows, "\n", what)
	}
	return table(fmt.Sprintf("%s<details><summary>%s</summary>\n\n%s", title, summary, header), rows, "\n</details>\n\n", what)
}

func suitesTable(suites []verdict.Suite, s Stats) *block {
	var rows []string
	for _, su := range suites {
		v := "✓ ok"
		if !su.Passed() {
			v = fmt.Sprintf("✗ rc=%d", su.RC)
		}
		share := 0.0
		if s.Work > 0 {
			share = su.GPUSeconds / s.Work
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d | %d | %s | %.1f %% |\n",
			cell(su.Label), cell(su.Mode), v, len(su.Items), su.Failed, textfmt.Dur(su.GPUSeconds), 100*share))
	}
	return collapsible("### Suites\n\n", fmt.Sprintf("%d suites", len(suites)),
		"| suite | mode | verdict | items | failed | work | share |\n|---|---|---|---:|---:|---:|---:|\n", rows, "suites")
}

func gpuTable(s Stats) *block {
	var rows []string
	for _, g := range s.PerGPU {
		u := 0.0
		if s.Wall > 0 {
			u = g.Busy / s.Wall
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %s | %s | %.1f %% | t+%s |\n",
			gpuName(g.GPU), g.Items, g.Failed, textfmt.Dur(g.Busy), textfmt.Dur(g.Idle), 100*u, clock(g.LastEnd)))
	}
	return collapsible("### GPUs\n\n", fmt.Sprintf("%d GPUs", len(s.PerGPU)),
		"| GPU | items | failed | busy | idle | busy share | last item ended |\n|---|---:|---:|---:|---:|---:|---:|\n", rows, "GPUs")
}

// logLink is a Markdown link from report/ to an item's log; for github.com, where
// it would resolve nowhere, the log's path in the log dir; for an item that never
// started (rel ""), which has no log, says so.
func logLink(rel string, o Options) string {
	switch {
	case rel == "":
		return "– (never started)"
	case o.RunURL != "":
		return cell(rel)
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return fmt.Sprintf("[%s](../%s)", cell(rel), strings.Join(parts, "/"))
}

// attemptLinks names the logs an item's earlier attempts kept
// (items/<label>.<safetag>@attempt<n>.log, docs/files.md): those on disk when the
// log dir is known, so that the report never names a file that is not there.
func attemptLinks(r *logdir.Run, it verdict.Item, o Options) string {
	var links []string
	for n := 1; n < it.Attempts; n++ {
		rel := path.Join("items", logdir.ItemFileName(it.Label, it.Tag, n, false))
		if r.Layout.Root != "" {
			if fi, err := os.Stat(filepath.Join(r.Layout.Root, filepath.FromSlash(rel))); err != nil || !fi.Mode().IsRegular() {
				continue
			}
		}
		links = append(links, logLink(rel, o))
	}
	if len(links) == 0 {
		return "–"
	}
	return strings.Join(links, ", ")
}

// failedItems are the failed items in key order (dispatch order is lost in the
// lists; key order is stable and groups suites).
func failedItems(s Stats) []ItemStat {
	var failed []ItemStat
	for _, list := range [][]ItemStat{s.Misses, s.Unknown, s.Missing} {
		for _, it := range list {
			if it.Failed {
				failed = append(failed, it)
			}
		}
	}
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].Key < failed[j].Key })
	return failed
}

func failedTable(s Stats, o Options) *block {
	failed := failedItems(s)
	if len(failed) == 0 {
		return nil
	}
	var rows []string
	for _, it := range failed {
		rc := fmt.Sprint(it.RC)
		took := textfmt.Dur(it.Actual)
		gpu := gpuName(it.GPU)
		if !it.Finished {
			rc, took, gpu = "–", "–", "–"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", cell(it.Key), rc, plain(it.Note), took, gpu, logLink(it.LogRel, o)))
	}
	return collapsible(fmt.Sprintf("### Failed items (%d)\n\n", len(failed)), fmt.Sprintf("%d failed items", len(failed)),
		"| item | rc | note | took | GPU | log |\n|---|---:|---|---:|---:|---|\n", rows, "failed items")
}

// fence is text as a fenced code block: a fence longer than any run of backticks
// in it, and control characters (but tab) shown as U+FFFD, so nothing in a log is
// read as Markdown or HTML.
func fence(text string) string {
	text = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(text, "\uFFFD"))
	f := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return f + "text\n" + strings.TrimRight(text, "\n") + "\n" + f + "\n"
}

func missRow(it ItemStat) string {
	mark := ""
	if it.Failed {
		mark = " ✗"
	}
	return fmt.Sprintf("| %s%s | %s | %s | %s | %s | t+%s |\n", cell(it.Key), mark, textfmt.Dur(it.Estimate), textfmt.Dur(it.Actual),
		signed(it.Miss()), signedPct(it.RelMiss()), clock(it.Start))
}

const missHeader = "| item | estimate | actual | miss | miss % | started |\n|---|---:|---:|---:|---:|---:|\n"

func estimateTables(s Stats) []*block {
	if len(s.Misses) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("### Estimates vs actual\n\n")
	var actual float64
	rels := make([]float64, 0, len(s.Misses))
	off := 0
	for _, it := range s.Misses {
		actual += it.Actual
		rel := math.Abs(it.RelMiss())
		rels = append(rels, rel)
		if rel > 0.5 {
			off++
		}
	}
	sort.Float64s(rels)
	fmt.Fprintf(&b, "%d items had an estimate: %s estimated, %s measured (%s); median miss %s; %d item(s) off by more than 50 %%. ",
		len(s.Misses), textfmt.Dur(s.Estimated), textfmt.Dur(actual), signedPct(actual/math.Max(s.Estimated, 1e-9)-1),
		strings.TrimPrefix(signedPct(rels[len(rels)/2]), "+"), off)
	b.WriteString("A positive miss is an item slower than its estimate: it started later than it should have. ✗ failed.\n\n")

	rows := make([]string, len(s.Misses))
	for i, it := range s.Misses {
		rows[i] = missRow(it)
	}
	if len(rows) <= openRows {
		return []*block{table(b.String()+missHeader, rows, "\n", "items")}
	}
	out := []*block{fixed(b.String() + fmt.Sprintf("**Worst %d misses**\n\n", topRows) + missHeader + strings.Join(rows[:topRows], "") + "\n")}

	// Relative misses of tiny items are noise: rank only items of at least 1 % of the largest.
	var rel []ItemStat
	for _, it := range s.Misses {
		if max(it.Estimate, it.Actual) >= 0.01*s.Largest {
			rel = append(rel, it)
		}
	}
	sort.SliceStable(rel, func(i, j int) bool { return math.Abs(rel[i].RelMiss()) > math.Abs(rel[j].RelMiss()) })
	var rrows []string
	for _, it := range rel[:min(topRows, len(rel))] {
		rrows = append(rrows, missRow(it))
	}
	out = append(out, table(fmt.Sprintf("<details><summary>Worst %d relative misses (items of at least 1 %% of the largest)</summary>\n\n%s", len(rrows), missHeader),
		rrows, "\n</details>\n\n", "items"))
	out = append(out, table(fmt.Sprintf("<details><summary>All %d items with an estimate, worst miss first</summary>\n\n%s", len(rows), missHeader),
		rows, "\n</details>\n\n", "items"))
	return out
}

func unknownTable(s Stats) *block {
	if len(s.Unknown) == 0 {
		return nil
	}
	var rows []string
	for _, it := range s.Unknown {
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | t+%s |\n", cell(it.Key), textfmt.Dur(it.Actual), it.RC, gpuName(it.GPU), clock(it.Start)))
	}
	title := fmt.Sprintf("### Items without an estimate (%d)\n\nNo weight yet (new, or never measured to its end): they went first, with the default weight; the next run orders them by what they took if it was a measurement (docs/outcomes.md).\n\n", len(s.Unknown))
	return collapsible(title, fmt.Sprintf("%d items", len(s.Unknown)),
		"| item | took | rc | GPU | started |\n|---|---:|---:|---:|---:|\n", rows, "items")
}

func missingTable(s Stats) *block {
	if len(s.Missing) == 0 {
		return nil
	}
	var rows []string
	for _, it := range s.Missing {
		est := "unknown"
		if it.Known {
			est = textfmt.Dur(it.Estimate)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |\n", cell(it.Key), est, plain(it.Note)))
	}
	return collapsible(fmt.Sprintf("### Items that never finished (%d)\n\n", len(s.Missing)), fmt.Sprintf("%d items", len(s.Missing)),
		"| item | estimate | note |\n|---|---:|---|\n", rows, "items")
}

func weightTables(r *logdir.Run) []*block {
	m := r.Meta
	if len(m.Changes) == 0 && len(m.Pruned) == 0 {
		return nil
	}
	var out []*block
	head := fmt.Sprintf("### Weights learned: %d changed, %d pruned\n\n", len(m.Changes), len(m.Pruned))
	if m.Weights != "" {
		head += "Table: " + code(tableName(m.Weights)) + ". "
	}
	head += "A slower run moves a weight half-way to what it measured, a faster one a tenth of the way.\n\n"
	ch := append([]logdir.Change(nil), m.Changes...)
	sort.SliceStable(ch, func(i, j int) bool {
		di, dj := math.Abs(ch[i].New-ch[i].Old), math.Abs(ch[j].New-ch[j].Old)
		if ch[i].HadOld != ch[j].HadOld {
			return !ch[i].HadOld // new keys first
		}
		return di > dj
	})
	var rows []string
	for _, c := range ch {
		if !c.HadOld {
			rows = append(rows, fmt.Sprintf("| %s | new | %s | | |\n", cell(c.Key), textfmt.Dur(c.New)))
			continue
		}
		rel := math.Inf(1)
		if c.Old > 0 {
			rel = (c.New - c.Old) / c.Old
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", cell(c.Key), textfmt.Dur(c.Old), textfmt.Dur(c.New), signed(c.New-c.Old), signedPct(rel)))
	}
	if len(rows) > 0 {
		out = append(out, collapsible(head, fmt.Sprintf("%d weights changed, new keys and largest moves first", len(rows)),
			"| key | old | new | Δ | Δ % |\n|---|---:|---:|---:|---:|\n", rows, "weights"))
		head = ""
	}
	if len(m.Pruned) > 0 {
		var prow []string
		for _, k := range m.Pruned {
			prow = append(prow, "* "+code(k)+"\n")
		}
		title := head + fmt.Sprintf("Pruned (no longer listed by their suite's census): %d key(s).\n\n", len(m.Pruned))
		if len(prow) <= openRows {
			out = append(out, table(title, prow, "\n", "keys"))
		} else {
			out = append(out, table(title+fmt.Sprintf("<details><summary>%d pruned keys</summary>\n\n", len(prow)), prow, "\n</details>\n\n", "keys"))
		}
	}
	return out
}

// tableName is run.json's weights as the report names it: a run records a table
// under the repo root relative to it; an absolute path (a table elsewhere, or an
// older run.json) is shown by its file name alone, never as a runner's path.
func tableName(w string) string {
	if filepath.IsAbs(w) {
		return filepath.Base(w)
	}
	return w
}

// zeroOf is the zero of a GPU's offsets: in a merged run its shard's item phase
// start (each shard's times count from its own, docs/files.md "Merged runs"), else
// the run's.
func zeroOf(r *logdir.Run, gpu string) time.Time {
	if m := r.Meta.Merge; m != nil {
		if s, _, ok := logdir.SplitShardGPU(gpu); ok && s <= len(m.Parts) && !m.Parts[s-1].Started.IsZero() {
			return m.Parts[s-1].Started
		}
	}
	return r.Meta.Started
}

// badDayTables lists what the bad-day policies did: GPUs taken out of the pool,
// items that passed only on a rerun, items killed at their hang deadline.
func badDayTables(r *logdir.Run, suites []verdict.Suite, o Options) []*block {
	var blocks []*block
	if qs := r.Meta.Quarantined; len(qs) > 0 {
		var rows []string
		for _, q := range qs {
			at := "–"
			if zero := zeroOf(r, q.GPU); !q.At.IsZero() && !zero.IsZero() {
				at = "t+" + clock(q.At.Sub(zero).Seconds())
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |\n", gpuName(q.GPU), at, plain(shorten(q.Reason, 600))))
		}
		blocks = append(blocks, collapsible(fmt.Sprintf("### Quarantined GPUs (%d)\n\nNo item was scheduled on these after the time shown; their failed items ran again on healthy GPUs.\n\n", len(qs)),
			fmt.Sprintf("%d GPUs", len(qs)), "| GPU | when | why |\n|---|---:|---|\n", rows, "quarantined GPUs"))
	}
	var flaky, timedOut []string
	for _, su := range suites {
		for _, it := range su.Items {
			key := it.Label
			if it.Tag != "" {
				key += "/" + it.Tag
			}
			if it.Flaky {
				flaky = append(flaky, fmt.Sprintf("| %s | %d | %s | %s | %s |\n", cell(key), it.Attempts, plain(it.Note), logLink(it.LogRel, o), attemptLinks(r, it, o)))
			}
			if it.Outcome == outcome.Timeout {
				timedOut = append(timedOut, fmt.Sprintf("| %s | %s | %s | %s |\n", cell(key), textfmt.Dur(it.Seconds), gpuName(it.GPU), logLink(it.LogRel, o)))
			}
		}
	}
	if len(flaky) > 0 {
		verdictNote := "they count as passed (flaky-is-failure is off)"
		if r.Meta.FlakyIsFailure {
			verdictNote = "they count as failed (flaky-is-failure)"
		}
		blocks = append(blocks, collapsible(fmt.Sprintf("### Flaky items (%d)\n\nFailed, then passed on a rerun; %s. Earlier attempts keep their logs beside the last, as `<label>.<safetag>@attempt<N>.log`.\n\n", len(flaky), verdictNote),
			fmt.Sprintf("%d flaky items", len(flaky)), "| item | attempts | note | last log | earlier attempts |\n|---|---:|---|---|---|\n", flaky, "flaky items"))
	}
	if len(timedOut) > 0 {
		// Only items sgpu-queue killed at their deadline: an exit code of 124 by
		// itself is an ordinary failure (docs/outcomes.md).
		why := fmt.Sprintf("Killed by sgpu-queue at their hang deadline (item-timeout-factor %g × the learned weight), rc 124", r.Meta.TimeoutFactor)
		blocks = append(blocks, collapsible(fmt.Sprintf("### Timed-out items (%d)\n\n%s; their weight only rises.\n\n", len(timedOut), why),
			fmt.Sprintf("%d timed-out items", len(timedOut)), "| item | ran | GPU | log |\n|---|---:|---:|---|\n", timedOut, "timed-out items"))
	}
	return blocks
}
