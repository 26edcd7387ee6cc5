package simulate

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// RunnersReport is what CompareRunners found: the wall clock of 1 … K runners of
// Options.GPUs GPUs each, the items split by the plan's rule (shard.Assign).
type RunnersReport struct {
	Input   *Input
	Options Options
	Work    Stat // GPU-seconds of a run
	Largest Stat // the longest item of a run
	// LargestKey and LargestWeight name the longest item by the weights.
	LargestKey    string
	LargestWeight float64
	// SameLargest: every run's longest item was LargestKey.
	SameLargest bool
	Rows        []RunnerRow
}

// RunnerRow is the prediction for one runner count.
type RunnerRow struct {
	Runners int
	Wall    Stat // the slowest runner's wall clock: the job matrix's
	Fastest Stat // the fastest runner's
	Bound   Stat // max(work / (runners × GPUs), largest): over all the runners' GPUs
	Ratio   Stat // wall / that run's bound
	Util    Stat // work / (runners × GPUs × wall)
	// On the weights: the plan's slowest shard before its refinement (LPT over
	// GPU-seconds alone), and the moves and swaps the refinement made.
	LPTWall float64
	Moves   int
}

// shardRun is one planned shard, ready to be replayed run after run.
type shardRun struct {
	members []int // indices into the items
	setup   *schedule.Setup
	dur     []float64
}

// CompareRunners predicts 1 … runners runners, each split as `sgpu-queue plan`
// splits it; the matrix's wall clock is its slowest runner's.
func CompareRunners(ctx context.Context, in *Input, o Options, runners int) (*RunnersReport, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if runners < 1 || runners > shard.MaxShards {
		return nil, fmt.Errorf("--runners %d: want from 1 to %d runners", runners, shard.MaxShards)
	}
	n := o.GPUs
	items, err := in.ItemsOn(n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	if err := o.Bias.check(in); err != nil {
		return nil, err
	}
	rep := &RunnersReport{Input: in, Options: o, Rows: make([]RunnerRow, runners)}
	plans := make([][]shardRun, runners)
	for k := 1; k <= runners; k++ {
		a, err := shard.Assign(items, k, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		if k == 1 && a.LargestItem >= 0 {
			rep.LargestKey, rep.LargestWeight = items[a.LargestItem].Key(), a.Largest
		}
		rep.Rows[k-1] = RunnerRow{Runners: k, LPTWall: a.LPTWall, Moves: a.Moves}
		if plans[k-1], err = shardRuns(items, a); err != nil {
			return nil, err
		}
	}
	width := schedule.Widths(items)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	dur := make([]float64, len(items))
	runs := o.Runs
	if o.Noise == 0 {
		runs = 1 // every figure is deterministic
	}
	for r := 0; r < runs; r++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o.durations(rng, items, dur)
		b := schedule.DurationBound(dur, width, n)
		work, largest := b.Total, b.Largest
		longest := slices.Index(dur, largest) // the first longest; -1 without items
		if r == 0 {
			rep.SameLargest = longest >= 0
		}
		rep.SameLargest = rep.SameLargest && longest >= 0 && items[longest].Key() == rep.LargestKey
		rep.Work.add(work)
		rep.Largest.add(largest)
		for k := range plans {
			slowest, fastest, err := replayShards(plans[k], dur)
			if err != nil {
				return nil, err
			}
			row := &rep.Rows[k]
			bound := schedule.BoundOfWidths(dur, width, (k+1)*n)
			row.Wall.add(slowest)
			row.Fastest.add(fastest)
			row.Bound.add(bound)
			row.Ratio.add(ratio(slowest, bound))
			row.Util.add(ratio(work, float64((k+1)*n)*slowest))
		}
	}
	return rep, nil
}

// shardRuns prepares a's shards for replay.
func shardRuns(items []schedule.Item, a *shard.Assignment) ([]shardRun, error) {
	runs := make([]shardRun, a.Shards)
	for i, s := range a.Of {
		runs[s].members = append(runs[s].members, i)
	}
	for s := range runs {
		sr := &runs[s]
		sub := make([]schedule.Item, len(sr.members))
		for k, i := range sr.members {
			sub[k] = items[i]
		}
		setup, err := schedule.NewSetup(schedule.DefaultPolicy, sub, a.GPUs)
		if err != nil {
			return nil, err
		}
		sr.setup, sr.dur = setup, make([]float64, len(sub))
	}
	return runs, nil
}

// replayShards replays every shard on durations dur (by item) and returns the
// slowest and the fastest shard's wall clock.
func replayShards(runs []shardRun, dur []float64) (slowest, fastest float64, err error) {
	for s := range runs {
		sr := &runs[s]
		wall := 0.0
		if len(sr.members) > 0 {
			for k, i := range sr.members {
				sr.dur[k] = dur[i]
			}
			if wall, err = sr.setup.Wall(sr.dur); err != nil {
				return 0, 0, fmt.Errorf("runner %d: %w", s+1, err)
			}
		}
		if s == 0 || wall > slowest {
			slowest = wall
		}
		if s == 0 || wall < fastest {
			fastest = wall
		}
	}
	return slowest, fastest, nil
}

// Advice is what the report would say with k runners (1 ≤ k < len(Rows)) about one
// more.
func (r *RunnersReport) Advice(k int) string {
	key, largest := r.LargestKey, r.LargestWeight
	if r.Options.Noise > 0 {
		largest = r.Largest.Mean
		if !r.SameLargest {
			key = ""
		}
	}
	return shard.Advice(k, r.Rows[k-1].Wall.Mean, r.Rows[k].Wall.Mean, key, largest)
}

// Write prints the report: what was simulated, one aligned row per runner count,
// and the advice for each count but the last.
func (r *RunnersReport) Write(w io.Writer) error {
	var b strings.Builder
	in, o := r.Input, r.Options
	fmt.Fprintf(&b, "simulate %s: %d items in %d suites, 1–%d runners of %d GPUs each\n", in.Name, len(in.Items), len(in.Suites), len(r.Rows),
		o.GPUs)
	if o.Noise == 0 {
		b.WriteString("durations: the weights exactly\n")
		fmt.Fprintf(&b, "GPU-seconds %s, largest item %s (%s)\n", secs(r.Work.Mean), textfmt.Printable(r.LargestKey), secs(r.LargestWeight))
	} else {
		writeNoise(&b, o)
		fmt.Fprintf(&b, "GPU-seconds %s (range %s–%s), largest item %s (%s by its weight)\n",
			secs(r.Work.Mean), secs(r.Work.Min), secs(r.Work.Max), textfmt.Printable(r.LargestKey), secs(r.LargestWeight))
	}
	fmt.Fprintf(&b, "each runner runs the items `sgpu-queue plan` gives it as the %s queue on its own %d GPUs\n", schedule.DefaultPolicy,
		o.GPUs)
	fmt.Fprintf(&b, "plan: %s (\"LPT alone\": the slowest runner without the refinement, and the moves and swaps it made)\n", shard.RuleText)
	b.WriteString("lower bound: max(GPU-seconds / all the runners' GPUs, largest); the matrix's wall clock is its slowest runner's\n\n")
	noisy := o.Noise > 0
	head := []string{"runners", "GPUs", "wall clock", "range", "fastest runner", "lower bound", "× bound", "utilisation", "LPT alone"}
	if !noisy {
		head = slices.Delete(head, 3, 4)
	}
	table := [][]string{head}
	for _, row := range r.Rows {
		lpt := secs(row.LPTWall)
		if row.Moves > 0 {
			lpt += fmt.Sprintf(" (%d moves)", row.Moves)
		}
		cells := []string{
			textfmt.Count(row.Runners, "runner"), fmt.Sprint(row.Runners * o.GPUs), secs(row.Wall.Mean),
			secs(row.Wall.Min) + " – " + secs(row.Wall.Max), secs(row.Fastest.Mean),
			secs(row.Bound.Mean), fixed(row.Ratio.Mean, 4), pct(row.Util.Mean), lpt,
		}
		if !noisy {
			cells = slices.Delete(cells, 3, 4)
		}
		table = append(table, cells)
	}
	writeTable(&b, table)
	if len(r.Rows) > 1 {
		b.WriteByte('\n')
	}
	for k := 1; k < len(r.Rows); k++ {
		fmt.Fprintf(&b, "on %s: %s\n", textfmt.Count(k, "runner"), r.Advice(k))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
