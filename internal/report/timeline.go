package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// bar is one span on a GPU's lane: one attempt, or a run of short attempts merged.
type bar struct {
	Start, End float64
	N          int            // attempts in it; 1 is a single item
	Busy       float64        // seconds of work inside
	Failed     int            // failed attempts inside
	Suite      string         // the suite label; "" when a merged bar mixes suites
	Row        record.Attempt // the attempt of a single item
}

func (b bar) failed() bool { return b.Failed > 0 }

// lanesOf groups a run's attempts by GPU in pool order, GPUs only the attempts name last; a multi-GPU item is in
// each of its lanes.
func lanesOf(r *record.Run) []GPUStats {
	idx := map[string]int{}
	var ls []GPUStats
	for _, g := range r.Meta.GPUs {
		idx[g] = len(ls)
		ls = append(ls, GPUStats{GPU: g})
	}
	var extra []string
	for _, t := range r.Attempts {
		for _, id := range t.GPUNames() {
			if _, ok := idx[id]; !ok {
				extra = append(extra, id)
				idx[id] = -1
			}
		}
	}
	sort.Strings(extra)
	for _, g := range extra {
		idx[g] = len(ls)
		ls = append(ls, GPUStats{GPU: g})
	}
	for _, t := range r.Attempts {
		for _, id := range t.GPUNames() {
			i := idx[id]
			ls[i].Rows = append(ls[i].Rows, t)
		}
	}
	for i := range ls {
		rows := ls[i].Rows
		sort.SliceStable(rows, func(a, b int) bool { return rows[a].StartOff < rows[b].StartOff })
	}
	return ls
}

// bars merges consecutive attempts shorter than minDur into chunks of about minDur, so a big run stays readable.
func bars(l GPUStats, minDur float64) []bar {
	var out []bar
	single := func(t record.Attempt) bar {
		b := bar{Start: t.StartOff, End: t.EndOff, N: 1, Busy: t.Secs, Suite: t.Label, Row: t}
		if t.Outcome.Failed() {
			b.Failed = 1
		}
		return b
	}
	var run []record.Attempt
	flush := func() {
		switch len(run) {
		case 0:
		case 1:
			out = append(out, single(run[0]))
		default:
			b := bar{Start: run[0].StartOff, N: len(run), Suite: run[0].Label}
			for _, t := range run {
				b.End = max(b.End, t.EndOff)
				b.Busy += t.Secs
				if t.Outcome.Failed() {
					b.Failed++
				}
				if t.Label != b.Suite {
					b.Suite = ""
				}
			}
			out = append(out, b)
		}
		run = run[:0]
	}
	for _, t := range l.Rows {
		// A multi-GPU item is never merged: it is drawn across its lanes.
		if t.Secs < minDur && len(t.GPUNames()) == 1 {
			run = append(run, t)
			if t.EndOff-run[0].StartOff >= minDur {
				flush()
			}
			continue
		}
		flush()
		out = append(out, single(t))
	}
	flush()
	return out
}

// countBars is how many bars minDur gives.
func countBars(ls []GPUStats, minDur float64) int {
	n := 0
	for _, l := range ls {
		n += len(bars(l, minDur))
	}
	return n
}

// mermaidBudget bounds the Gantt's bars: GitHub refuses a diagram over 50,000 characters.
const mermaidBudget = 250

// mermaidMinDur is the first merge threshold that keeps the Gantt within budget; at least 1 s, as the
// Gantt counts whole seconds.
func mermaidMinDur(ls []GPUStats, wall float64, budget int) float64 {
	for _, f := range []float64{0, 0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5} {
		d := max(1, f*wall)
		if countBars(ls, d) <= budget {
			return d
		}
	}
	return math.Max(1, wall) * 1.01 // one bar per GPU
}

// mermaid writes the Gantt block of the timeline and a line saying what was merged.
func mermaid(b *strings.Builder, r *record.Run, s Stats) {
	ls := s.PerGPU
	if len(r.Attempts) == 0 {
		b.WriteString("No item finished: there is no timeline to draw.\n\n")
		return
	}
	minDur := mermaidMinDur(ls, s.Wall, mermaidBudget)
	t0 := r.Meta.Started.Unix()
	axis := "%H:%M:%S"
	if s.Wall >= 1800 {
		axis = "%H:%M"
	}
	var body strings.Builder
	merged, groups := 0, 0
	for _, l := range ls {
		fmt.Fprintf(&body, "    section GPU %s\n", mermaidGPU(l.GPU))
		for _, br := range bars(l, minDur) {
			start := int64(math.Round(br.Start))
			end := max(start, int64(math.Round(br.End)))
			name := mermaidName(br.Row.Key(), 48)
			if n := len(br.Row.GPUNames()); br.N == 1 && n > 1 {
				// The same bar in the section of each of its GPUs.
				name = fmt.Sprintf("%s on %d GPUs", mermaidName(br.Row.Key(), 40), n)
			}
			if br.N > 1 {
				name = fmt.Sprintf("%d items", br.N)
				if br.Failed > 0 {
					name += fmt.Sprintf(" %d failed", br.Failed)
				}
				merged += br.N
				groups++
			}
			tag := ""
			if br.failed() {
				tag = "crit, "
			}
			fmt.Fprintf(&body, "    %s :%s%d, %d\n", name, tag, t0+start, t0+end)
		}
	}
	b.WriteString("```mermaid\n---\ndisplayMode: compact\n---\ngantt\n")
	fmt.Fprintf(b, "    title %d items on %d GPUs, wall %s\n", len(r.Attempts), len(ls), textfmt.Dur(s.Wall))
	b.WriteString("    dateFormat X\n")
	fmt.Fprintf(b, "    axisFormat %s\n", axis)
	b.WriteString("    todayMarker off\n")
	b.WriteString(body.String())
	b.WriteString("```\n\n")
	b.WriteString("One lane per GPU, in your local clock time; failed items are marked critical (red).")
	if s.Mixed {
		b.WriteString(" A multi-GPU item (\"… on N GPUs\") is in the lane of each of its GPUs.")
	}
	if merged > 0 {
		fmt.Fprintf(b, " To keep the diagram readable, %d items shorter than %s were merged into %d bars (\"N items\"); %s has every item.",
			merged, textfmt.Dur(minDur), groups, "the SVG")
	}
	b.WriteString("\n\n")
}
