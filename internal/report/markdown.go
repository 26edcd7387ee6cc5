package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Markdown writes the schedule report.
func Markdown(w io.Writer, r *logdir.Run, suites []verdict.Suite, s Stats) error {
	var b strings.Builder
	mark := "✓"
	word := "passed"
	if !s.Passed {
		mark, word = "✗", "failed"
	}
	if s.Cancelled {
		word += " (cancelled)"
	}
	fmt.Fprintf(&b, "## %s sgpu-queue: %s\n\n", mark, word)
	fmt.Fprintf(&b, "%d items on %d GPUs, %d failed · wall %s · utilisation %.1f %%\n\n",
		s.Items, s.GPUs, s.Failed, dur(s.Wall), 100*s.Utilisation)
	if s.Cancelled {
		b.WriteString("> **The run was cancelled**: items that had not finished are marked; only finished items were learned.\n\n")
	}

	b.WriteString("### Efficiency\n\n| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| total work | %s |\n", dur(s.Work))
	fmt.Fprintf(&b, "| wall clock (item phase) | %s |\n", dur(s.Wall))
	fmt.Fprintf(&b, "| lower bound max(work/%d, largest) | %s |\n", s.GPUs, dur(s.Bound))
	fmt.Fprintf(&b, "| above the bound | %.1f %% |\n", 100*s.AboveBound)
	fmt.Fprintf(&b, "| utilisation | %.1f %% |\n", 100*s.Utilisation)
	if s.LargestKey != "" {
		fmt.Fprintf(&b, "| largest item | `%s` %s |\n", s.LargestKey, dur(s.Largest))
	}
	b.WriteString("\n")

	b.WriteString("### Suites\n\n| suite | verdict | items | failed | work |\n|---|---|---:|---:|---:|\n")
	for _, su := range suites {
		v := "✓ ok"
		if !su.Passed() {
			v = fmt.Sprintf("✗ rc=%d", su.RC)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", su.Label, v, len(su.Items), su.Failed, dur(su.Seconds))
	}
	b.WriteString("\n")

	b.WriteString("### GPUs\n\n| gpu | busy | idle | items | failed |\n|---|---:|---:|---:|---:|\n")
	for _, g := range s.PerGPU {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d |\n", g.GPU, dur(g.Busy), dur(g.Idle), g.Items, g.Failed)
	}
	b.WriteString("\n")

	if failed := verdict.FailedItems(suites); len(failed) > 0 {
		fmt.Fprintf(&b, "### Failed items (%d)\n\n| suite | item | rc | log |\n|---|---|---:|---|\n", len(failed))
		for _, it := range failed {
			rc := fmt.Sprint(it.RC)
			if !it.Finished {
				rc = "–"
			}
			if it.Note != "" {
				rc += " " + it.Note
			}
			fmt.Fprintf(&b, "| %s | %s | %s | `%s` |\n", it.Label, cell(tagName(it.Tag)), rc, it.LogRel)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func tagName(tag string) string {
	if tag == "" {
		return "(whole suite)"
	}
	return tag
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = textfmt.Printable(s)
	return "`" + strings.NewReplacer("|", `\|`, "`", "'").Replace(s) + "`"
}

func dur(secs float64) string { return textfmt.Dur(secs) }
