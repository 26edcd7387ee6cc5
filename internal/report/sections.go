package report

// The report's sections below its headline, each a block that render fits to the size limit.

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

func efficiency(r *record.Run, s Stats) string {
	var b strings.Builder
	b.WriteString("### Efficiency\n\n| | |\n|---|---|\n")
	work, hind := "total work", "hindsight LPT"
	if s.Mixed {
		// Work is GPU time: an item on 4 GPUs for 10 s is 40 s of it.
		work, hind = "total work (GPU time: seconds × GPUs)", "hindsight"
	}
	fmt.Fprintf(&b, "| %s | %s in %d item runs |\n", work, secs(s.Work), len(r.Attempts))
	fmt.Fprintf(&b, "| wall clock (item phase) | %s |\n", secs(s.Wall))
	setBy := "work/N"
	if s.Split.Binding {
		setBy = "the largest item"
	}
	fmt.Fprintf(&b, "| lower bound max(work/%d, largest) | %s, set by %s |\n", s.GPUs, secs(s.Bound), setBy)
	fmt.Fprintf(&b, "| above the bound | %s (%s) |\n", pct(s.AboveBound), signed(s.Wall-s.Bound))
	fmt.Fprintf(&b, "| utilisation work/(wall×%d) | %.1f %% |\n", s.GPUs, 100*s.Utilisation)
	if r.Meta.Cancelled || !r.Meta.Finished {
		fmt.Fprintf(&b, "| %s, quality, split | – (the run stopped early: it did not run every item) |\n", hind)
	} else {
		fmt.Fprintf(&b, "| %s makespan | %s |\n", hind, secs(s.Split.Before))
		fmt.Fprintf(&b, "| quality: wall ÷ %s | **%.3f** |\n", hind, s.Quality)
	}
	if s.Gaps.Count > 0 {
		fmt.Fprintf(&b, "| dispatch gap (end → next start, same GPU) | mean %s, max %s over %d gaps |\n",
			gapDur(s.Gaps.Mean), gapDur(s.Gaps.Max), s.Gaps.Count)
	}
	if l := s.Largest; l.Secs > 0 {
		fmt.Fprintf(&b, "| largest item | %s %s, ran t+%s → t+%s on GPU %s |\n", cell(l.Key()), secs(l.Secs), clock(l.StartOff), clock(l.EndOff),
			gpuName(l.GPU()))
	}
	if s.Last.Finished {
		fmt.Fprintf(&b, "| last to finish | %s t+%s → t+%s on GPU %s |\n", cell(s.Last.Key()), clock(s.Last.Last().StartOff), clock(s.Last.Last().EndOff),
			gpuName(s.Last.GPU))
	}
	if !r.Meta.Cancelled && r.Meta.Finished && s.Largest.Secs > 0 {
		sp := s.Split
		verdict := "**no**"
		if sp.Pays {
			verdict = "**yes**"
		}
		why := fmt.Sprintf("it is %.0f %% of work/%d, which sets the bound", 100*s.Largest.Secs/math.Max(s.Work/float64(s.GPUs), 1e-9), s.GPUs)
		if sp.Binding {
			why = "it alone sets the lower bound"
		}
		if !sp.Pays && sp.Saving >= SplitPays*sp.Before && sp.Saving > 0 {
			why += fmt.Sprintf(", but it saves less than %s a run", textfmt.Dur(SplitMinSaving))
		}
		fmt.Fprintf(&b, "| split the largest item? | %s: halving it would take the hindsight makespan from %s to %s (%s, %s); %s |\n",
			verdict, textfmt.Dur(sp.Before), textfmt.Dur(sp.After), signed(sp.After-sp.Before), signedPct(sp.After/math.Max(sp.Before, 1e-9)-1), why)
	}
	b.WriteString("\n")
	if s.Mixed {
		b.WriteString("*Hindsight* is the default queue (multi-GPU items in the order it chooses on these durations, GPUs held for them, " +
			"shorter items backfilled) on the durations this run measured, with no dispatch overhead: what perfect estimates would give. " +
			"*Quality* = wall ÷ hindsight: 1.000 is as good as perfect estimates, above 1 is what estimate errors and dispatch overhead cost.  \n")
	} else {
		b.WriteString("*Hindsight LPT* is longest-first on the durations this run measured, with no dispatch overhead: what perfect estimates " +
			"would give. " +
			"*Quality* = wall ÷ hindsight LPT: 1.000 is as good as perfect estimates, above 1 is what estimate errors and dispatch overhead " +
			"cost, below 1 means the run beat plain LPT.  \n")
	}
	fmt.Fprintf(&b, "*Split rule*: splitting the largest item pays when halving it would shorten the hindsight makespan by at least %.0f "+
		"%% and %s, which happens when it is (close to) the binding term of the lower bound.\n\n", 100*SplitPays, textfmt.Dur(SplitMinSaving))
	return b.String()
}

func timelineSection(r *record.Run, s Stats, o Options) string {
	var b strings.Builder
	b.WriteString("### Timeline\n\n")
	if o.RunURL != "" {
		fmt.Fprintf(&b, "Every item, with tooltips: `report/timeline.svg` in the log dir; the logs, the timeline and the JUnit files are in "+
			"[the run's artifacts](%s).\n\n", o.RunURL)
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
			gpuName(g.GPU), len(g.Rows), g.Failed, textfmt.Dur(g.Busy), textfmt.Dur(g.Idle), 100*u, clock(g.LastEnd)))
	}
	return collapsible("### GPUs\n\n", fmt.Sprintf("%d GPUs", len(s.PerGPU)),
		"| GPU | items | failed | busy | idle | busy share | last item ended |\n|---|---:|---:|---:|---:|---:|---:|\n", rows, "GPUs")
}

// logLink links an item's log, or names it on github.com where a link resolves nowhere.
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

// attemptLinks names the earlier attempts' logs that are on disk (docs/files.md), never a missing file.
func attemptLinks(r *record.Run, it verdict.Item, o Options) string {
	var links []string
	for n := 1; n < it.Tries; n++ {
		rel := path.Join("items", logdir.ItemFileName(it.Label, it.Tag, n, false))
		if r.Dir != "" {
			if fi, err := os.Stat(filepath.Join(r.Dir, filepath.FromSlash(rel))); err != nil || !fi.Mode().IsRegular() {
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

// failedItems are the failed items in key order, which is stable and groups suites.
func failedItems(suites []verdict.Suite) []verdict.Item {
	failed := verdict.FailedItems(suites)
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].Key() < failed[j].Key() })
	return failed
}

func failedTable(failed []verdict.Item, o Options) *block {
	if len(failed) == 0 {
		return nil
	}
	var rows []string
	for _, it := range failed {
		rc := fmt.Sprint(it.RC)
		took := textfmt.Dur(it.Seconds)
		gpu := gpuName(it.GPU)
		if !it.Finished {
			rc, took, gpu = "–", "–", "–"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", cell(it.Key()), rc, plain(it.Note), took, gpu, logLink(it.Log(), o)))
	}
	return collapsible(fmt.Sprintf("### Failed items (%d)\n\n", len(failed)), fmt.Sprintf("%d failed items", len(failed)),
		"| item | rc | note | took | GPU | log |\n|---|---:|---|---:|---:|---|\n", rows, "failed items")
}

// fence is text as a fenced code block that nothing in a log can break out of.
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

func missRow(it verdict.Item) string {
	mark := ""
	if it.Failed {
		mark = " ✗"
	}
	return fmt.Sprintf("| %s%s | %s | %s | %s | %s | t+%s |\n", cell(it.Key()), mark, textfmt.Dur(it.Estimate), textfmt.Dur(it.Seconds),
		signed(miss(it)), signedPct(relMiss(it)), clock(it.Last().StartOff))
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
		actual += it.Seconds
		rel := math.Abs(relMiss(it))
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
	var rel []verdict.Item
	for _, it := range s.Misses {
		if max(it.Estimate, it.Seconds) >= 0.01*s.Largest.Secs {
			rel = append(rel, it)
		}
	}
	sort.SliceStable(rel, func(i, j int) bool { return math.Abs(relMiss(rel[i])) > math.Abs(relMiss(rel[j])) })
	var rrows []string
	for _, it := range rel[:min(topRows, len(rel))] {
		rrows = append(rrows, missRow(it))
	}
	out = append(out, table(fmt.Sprintf("<details><summary>Worst %d relative misses (items of at least 1 %% of the largest)</summary>\n\n%s",
		len(rrows), missHeader),
		rrows, "\n</details>\n\n", "items"))
	out = append(out, table(fmt.Sprintf("<details><summary>All %d items with an estimate, worst miss first</summary>\n\n%s", len(rows),
		missHeader),
		rows, "\n</details>\n\n", "items"))
	return out
}

// calibrationNote says how estimates were calibrated (docs/performance.md, docs/weights.md); nil when not.
func calibrationNote(r *record.Run) *block {
	m := r.Meta
	if len(m.Calibration) == 0 && len(m.Priors) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("**Estimates during the run.** ")
	if len(m.Calibration) > 0 {
		b.WriteString("Each estimate was its weight × its suite's factor, the median of actual ÷ estimate over the suite's " +
			"finished items (the run's over all of them until the suite had 3); order, holds, backfill, hang deadlines and eta " +
			"went by it, the table learns the raw durations: ")
		var parts []string
		for _, f := range m.Calibration {
			from := fmt.Sprintf("%d items", f.Items)
			if !f.Own {
				from = fmt.Sprintf("the run's, %d items", f.Run)
			}
			parts = append(parts, fmt.Sprintf("%s ×%s (%s)", plain(f.Label), strconv.FormatFloat(f.Factor, 'f', 2, 64), from))
		}
		b.WriteString(strings.Join(parts, ", ") + ". ")
	}
	if n := len(m.Priors); n > 0 {
		fmt.Fprintf(&b, "%d item(s) the table lacked were ordered by a prior estimate (another table's, their siblings' or their "+
			"suite's; the plan in the log names each).", n)
	}
	b.WriteString("\n\n")
	return fixed(b.String())
}

func unknownTable(s Stats) *block {
	if len(s.Unknown) == 0 {
		return nil
	}
	var rows []string
	for _, it := range s.Unknown {
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | t+%s |\n", cell(it.Key()), textfmt.Dur(it.Seconds), it.RC, gpuName(it.GPU),
			clock(it.Last().StartOff)))
	}
	title := fmt.Sprintf("### Items without an estimate (%d)\n\nNo weight yet (new, or never measured to its end): they went first, with "+
		"the default weight; the next run orders them by what they took if it was a measurement (docs/outcomes.md).\n\n", len(s.Unknown))
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
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |\n", cell(it.Key()), est, plain(it.Note)))
	}
	return collapsible(fmt.Sprintf("### Items that never finished (%d)\n\n", len(s.Missing)), fmt.Sprintf("%d items", len(s.Missing)),
		"| item | estimate | note |\n|---|---:|---|\n", rows, "items")
}

func weightTables(r *record.Run) []*block {
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
	ch := append([]record.Change(nil), m.Changes...)
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
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", cell(c.Key), textfmt.Dur(c.Old), textfmt.Dur(c.New), signed(c.New-c.Old),
			signedPct(rel)))
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
		out = append(out, collapsible(title, fmt.Sprintf("%d pruned keys", len(prow)), "", prow, "keys"))
	}
	return out
}

// tableName is the weights table's name, never a runner's absolute path.
func tableName(w string) string {
	if filepath.IsAbs(w) {
		return filepath.Base(w)
	}
	return w
}

// zeroOf is a GPU's time zero: its shard's start in a merged run (docs/files.md "Merged runs").
func zeroOf(r *record.Run, gpu string) time.Time {
	if m := r.Meta.Merge; m != nil {
		if s, _, ok := record.SplitShardGPU(gpu); ok && s <= len(m.Parts) && !m.Parts[s-1].Started.IsZero() {
			return m.Parts[s-1].Started
		}
	}
	return r.Meta.Started
}

// badDayTables lists what the bad-day policies did.
func badDayTables(r *record.Run, suites []verdict.Suite, o Options) []*block {
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
		blocks = append(blocks, collapsible(fmt.Sprintf("### Quarantined GPUs (%d)\n\nNo item was scheduled on these after the time shown; "+
			"their failed items ran again on healthy GPUs.\n\n", len(qs)),
			fmt.Sprintf("%d GPUs", len(qs)), "| GPU | when | why |\n|---|---:|---|\n", rows, "quarantined GPUs"))
	}
	var flaky, timedOut []string
	for _, su := range suites {
		for _, it := range su.Items {
			key := it.Key()
			if it.Flaky {
				flaky = append(flaky, fmt.Sprintf("| %s | %d | %s | %s | %s |\n", cell(key), it.Tries, plain(it.Note), logLink(it.LogRel, o),
					attemptLinks(r, it, o)))
			}
			if it.Outcome == outcome.Timeout {
				timedOut = append(timedOut, fmt.Sprintf("| %s | %s | %s | %s |\n", cell(key), textfmt.Dur(it.Seconds), gpuName(it.GPU),
					logLink(it.LogRel, o)))
			}
		}
	}
	if len(flaky) > 0 {
		verdictNote := "they count as passed (flaky-is-failure is off)"
		if r.Meta.FlakyIsFailure {
			verdictNote = "they count as failed (flaky-is-failure)"
		}
		blocks = append(blocks, collapsible(fmt.Sprintf("### Flaky items (%d)\n\nFailed, then passed on a rerun; %s. Earlier attempts keep "+
			"their logs beside the last, as `<label>.<safetag>@attempt<N>.log`.\n\n", len(flaky), verdictNote),
			fmt.Sprintf("%d flaky items", len(flaky)), "| item | attempts | note | last log | earlier attempts |\n|---|---:|---|---|---|\n", flaky,
			"flaky items"))
	}
	if len(timedOut) > 0 {
		// Only our kills: rc 124 by itself is an ordinary failure (docs/outcomes.md).
		why := fmt.Sprintf("Killed by sgpu-queue at their hang deadline (item-timeout-factor %g × the learned weight), rc 124",
			r.Meta.TimeoutFactor)
		blocks = append(blocks, collapsible(fmt.Sprintf("### Timed-out items (%d)\n\n%s; their weight only rises.\n\n", len(timedOut), why),
			fmt.Sprintf("%d timed-out items", len(timedOut)), "| item | ran | GPU | log |\n|---|---:|---:|---|\n", timedOut, "timed-out items"))
	}
	return blocks
}
