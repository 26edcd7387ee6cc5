package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// priors estimates the items the run's table lacks (docs/weights.md, "Priors for unknown items"); the plan shows each.
func (r *run) priors(o *ordered, e *expansion, pool gpu.Pool) {
	at := weights.Place{RepoRoot: r.o.Target.RepoRoot, Arch: pool.Arch, Level: r.o.Target.Level,
		Table: r.o.Weights.TablePath(r.o.Target.RepoRoot, pool.Arch, r.o.Target.Level), Queues: runQueues(e.suites)}
	for _, w := range schedule.WeighUnknown(e.items, o.pool, at) {
		r.warn(w)
	}
}

// priorsNote says how many items a prior estimated, and from what ("" for none).
func priorsNote(plan []schedule.Item) string {
	count := map[weights.PriorKind]int{}
	unknown := 0
	for _, it := range plan {
		switch {
		case it.Prior.Kind != weights.NoPrior:
			count[it.Prior.Kind]++
		case !it.Known:
			unknown++
		}
	}
	if len(count) == 0 {
		return ""
	}
	var parts []string
	for _, k := range []struct {
		kind weights.PriorKind
		what string
	}{{weights.FromTable, "from another table"}, {weights.FromSibling, "from their siblings"}, {weights.FromSuite, "from their suite"}} {
		if n := count[k.kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k.what))
		}
	}
	note := fmt.Sprintf("  the table lacks %d item(s): prior estimates for %s (~ in the plan)", unknown+sum(count),
		strings.Join(parts, ", "))
	if unknown > 0 {
		note += fmt.Sprintf(", %d with none", unknown)
	}
	return note + "\n"
}

func sum(m map[weights.PriorKind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// priorRecords are the plan's prior estimates, for run.json (by key).
func priorRecords(plan []schedule.Item) []record.Prior {
	var out []record.Prior
	for _, it := range plan {
		if it.Prior.Kind != weights.NoPrior {
			out = append(out, record.Prior{Key: it.Key(), Seconds: it.Prior.Seconds, From: it.Prior.From})
		}
	}
	slices.SortFunc(out, func(a, b record.Prior) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// calibrationRecords are the suites' calibration factors at the end of phase 4.
func calibrationRecords(s schedule.Scheduler) []record.Factor {
	var out []record.Factor
	for _, f := range s.Calibration().Factors() {
		out = append(out, record.Factor{Label: f.Label, Factor: f.Factor, Items: f.Items, Own: f.Own, Run: f.Run})
	}
	return out
}
