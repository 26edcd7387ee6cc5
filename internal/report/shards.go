package report

import (
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// shardsSection reports a merged run's shards (docs/runners.md): walls, imbalance, missing shards.
func shardsSection(r *record.Run, suites []verdict.Suite) *block {
	m := r.Meta.Merge
	if m == nil {
		return nil
	}
	items, failed := shardCounts(m.Shards, suites)
	var b strings.Builder
	fmt.Fprintf(&b, "### Shards\n\n%d runners of a job matrix, merged by `sgpu-queue merge`", m.Shards)
	if m.Plan != nil {
		fmt.Fprintf(&b, " (plan %s, sha256 %s…)", code(m.Plan.File), code(short(m.Plan.SHA256)))
	} else {
		b.WriteString(" (no plan: every item went to the shard of the hash of its key)")
	}
	b.WriteString(". The lanes of the timeline are named `s<shard>:<gpu>`; each shard's times count from the start of its own item phase, " +
		"and the matrix's wall clock is its slowest shard's.\n\n")
	var missing []string
	var walls []float64
	for _, p := range m.Parts {
		if p.Reported {
			walls = append(walls, p.Wall)
		} else {
			missing = append(missing, fmt.Sprintf("%d/%d (%d items)", p.Shard, m.Shards, items[p.Shard]))
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "> [!CAUTION]\n> **%d shard(s) never reported** (no log dir given to merge): %s. Their items never ran and fail.\n\n",
			len(missing), strings.Join(missing, ", "))
	}
	if n := len(m.Unclaimed); n > 0 {
		keys := make([]string, 0, min(n, 5))
		for _, u := range m.Unclaimed[:min(n, 5)] {
			keys = append(keys, code(u.Key()))
		}
		more := ""
		if n > 5 {
			more = fmt.Sprintf(" and %d more", n-5)
		}
		fmt.Fprintf(&b, "> [!CAUTION]\n> **%d item(s) listed by a shard and run by none**: %s%s. "+
			"Their own shard's listing did not have them "+
			"(do the runners, or the configs, list alike?). They never ran and fail.\n\n", n, strings.Join(keys, ", "), more)
	}
	if len(walls) > 1 {
		slowest, mean := 0.0, 0.0
		for _, w := range walls {
			slowest = max(slowest, w)
			mean += w / float64(len(walls))
		}
		if mean > 0 {
			fmt.Fprintf(&b, "**Imbalance**: the slowest shard took %s, the mean shard %s: %s above the mean. ", textfmt.Dur(slowest),
				textfmt.Dur(mean), pct(slowest/mean-1))
		}
	}
	if m.Advice != "" {
		fmt.Fprintf(&b, "**One more runner**, predicted on this run's durations: %s.", plain(m.Advice))
	}
	b.WriteString("\n\n")
	if m.NotListed > 0 {
		fmt.Fprintf(&b, "%d item(s) of the plan were listed by no shard (a capability probe of the runners skips them): they are not counted "+
			"as never ran.\n\n", m.NotListed)
	}
	carried := make([]int, m.Shards+1)
	for _, c := range m.Carried {
		if c.Shard >= 1 && c.Shard <= m.Shards {
			carried[c.Shard]++
		}
	}
	rows := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		rows[i] = shardRow(p, items[p.Shard], failed[p.Shard], carried[p.Shard])
	}
	return table(b.String()+"| shard | GPUs | log dir | items | failed | work | wall | its bound | above | planned wall | note "+
		"|\n|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
		rows, "\n", "shards")
}

// shardCounts is the number of items, and of failed items, of each shard 1 … k.
func shardCounts(k int, suites []verdict.Suite) (items, failed []int) {
	items, failed = make([]int, k+1), make([]int, k+1)
	for _, su := range suites {
		for _, it := range su.Items {
			if it.Shard >= 1 && it.Shard <= k {
				items[it.Shard]++
				if it.Failed {
					failed[it.Shard]++
				}
			}
		}
	}
	return items, failed
}

// shardRow is one shard's row; carried are the items its re-run did not run again.
func shardRow(p record.MergedShard, items, failed, carried int) string {
	predicted := "–"
	if p.Predicted > 0 {
		predicted = textfmt.Dur(p.Predicted)
	}
	if !p.Reported {
		return fmt.Sprintf("| %d | – | – | %d | %d | – | – | – | – | %s | **never reported**: its items never ran |\n", p.Shard, items, failed,
			predicted)
	}
	note := ""
	switch {
	case p.Stop != nil:
		note = "stopped early: " + plain(shorten(p.Stop.Message, 200))
	case p.Cancelled:
		note = "cancelled"
	case !p.Finished:
		note = "never finished (killed?)"
	}
	if carried > 0 {
		sep := ""
		if note != "" {
			sep = "; "
		}
		note += fmt.Sprintf("%sa re-run: %d item(s) carried from its earlier attempt", sep, carried)
	}
	above := "–"
	if p.Bound > 0 {
		above = pct(p.Wall/p.Bound - 1)
	}
	return fmt.Sprintf("| %d | %d | %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", p.Shard, len(p.GPUs), cell(p.LogDir), items, failed,
		textfmt.Dur(p.Work), textfmt.Dur(p.Wall), textfmt.Dur(p.Bound), above, predicted, note)
}

// short is the first 12 characters of a digest.
func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// shardNote says a shard's report covers that shard's items only.
func shardNote(r *record.Run) string {
	sh := r.Meta.Shard
	if sh == nil {
		return ""
	}
	plan := "no plan: its items are those of the hash of their key"
	if sh.Plan != nil {
		plan = fmt.Sprintf("plan %s, sha256 %s…", code(sh.Plan.File), code(short(sh.Plan.SHA256)))
	}
	return fmt.Sprintf("> [!NOTE]\n> **Shard %d of %d** of a job matrix (%s): this report covers its items only; `sgpu-queue merge` of "+
		"every shard's log dir gives the verdict, the report and the learned weights of the whole run.\n\n", sh.Shard, sh.Shards, plan)
}
