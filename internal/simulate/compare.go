package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Noise models: how an item's actual duration deviates from its weight.
const (
	// NoiseUniform multiplies each weight by a factor drawn uniformly from
	// [1−F, 1+F] (F = 0.2: every item within ±20 %).
	NoiseUniform = "uniform"
	// NoiseLognormal multiplies each weight by exp(F·Z), Z standard normal: skewed
	// to the slow side as real overruns are.
	NoiseLognormal = "lognormal"
)

// Options says what to simulate.
type Options struct {
	GPUs  int
	Noise float64 // F, 0 for the weights exactly
	Model string  // NoiseUniform (default) or NoiseLognormal
	Runs  int     // noisy runs, and shuffles of the unordered queue
	Seed  uint64
	// Bias scales the actual durations while the queues order by the weights;
	// Prior makes the queues order by another table's estimates (a cold start).
	Bias  Bias
	Prior *Prior
}

// Policy rows, in the order Compare reports them; a workload with multi-GPU items
// has RowTwoStep, RowUnordered, RowStrict and one row per block order instead.
const (
	RowStatic    = "static"
	RowUnordered = "unordered"
	RowLPT       = schedule.PolicyLPT
	RowPlanned   = schedule.PolicyPlanned
	// RowTwoStep is TE's job before one queue: the single-GPU items as the
	// planned queue, then each multi-GPU item alone, one after another.
	RowTwoStep = "two-step"
	// RowStrict is TE's current queue, strictly widest then longest
	// (docs/performance.md).
	RowStrict = "te-strict"
	// RowUncalibrated is the default policy going by the estimates as they are
	// all run long: what calibration changes (shown with --bias or --prior).
	RowUncalibrated = "uncalibrated"
)

// Stat is a figure over the runs.
type Stat struct {
	Mean, Min, Max float64
	n              int
}

func (s *Stat) add(v float64) {
	if s.n == 0 || v < s.Min {
		s.Min = v
	}
	if s.n == 0 || v > s.Max {
		s.Max = v
	}
	s.n++
	s.Mean += (v - s.Mean) / float64(s.n)
}

// Row is one policy's prediction.
type Row struct {
	Policy  string
	Runs    int  // simulated runs behind the figures
	Varies  bool // Runs differ (shuffles or noise): Wall has a range
	Wall    Stat // seconds
	Util    Stat // work / (GPUs × wall)
	Ratio   Stat // wall / that run's lower bound
	SpeedUp float64
}

// Report is what Compare found.
type Report struct {
	Input   *Input
	Options Options
	Work    Stat // GPU-seconds of work in a run (seconds when every item takes one GPU)
	Largest Stat // the longest item of a run
	Bound   Stat // the lower bound max(work/GPUs, largest) of a run
	Rows    []Row
	// Planner says what the planned queue does on this table ("follows a plan:
	// ..." or "is LPT: ...").
	Planner string
	// Mixed is set when an item takes more than one GPU; speed-up is then over the
	// two-step job.
	Mixed *MixedInfo
	// Priors counts what the prior estimated the items from (with Options.Prior);
	// Calibration is each suite's factor at the end of the default policy's runs.
	Priors      *PriorCounts
	Calibration []FactorStat
	cal         factors
}

// MixedInfo describes a workload with multi-GPU items and how the default
// policy's held items fared.
type MixedInfo struct {
	Multi            int // items taking more than one GPU
	MinGPUs, MaxGPUs int // their range
	// Holds is measured on the default policy's runs.
	Holds HoldStats
}

// HoldStats sums up the items GPUs were held for (schedule.BlockTimeline.Lateness).
type HoldStats struct {
	Holds int // over all runs
	Late  int // started after their reservation by the weights
	// MaxLate is the most seconds one started late; Unexplained counts those later
	// than any overrun while held, but for Recalibrated (calibration moved them).
	MaxLate      float64
	LateSum      float64
	Unexplained  int
	Recalibrated int
}

// runner simulates one row on one run's durations: its wall clock, and the
// timeline when the row is the default policy's block scheduler.
type runner func(rng *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error)

// Compare simulates each policy's row on in against the lower bound, every queue
// through schedule.ReplayBlocks as the dispatcher drives it; with noise, all rows
// face the same durations in run k (paired), and the queues still order by the weights.
func Compare(ctx context.Context, in *Input, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	n := o.GPUs
	items, err := in.ItemsOn(n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	if err := o.Bias.check(in); err != nil {
		return nil, err
	}
	rep := &Report{Input: in, Options: o}
	// The queues go by est; the items take their own weights (items).
	est := items
	if o.Prior != nil {
		var c PriorCounts
		est, c = o.Prior.estimates(items)
		rep.Priors = &c
	}
	var rows []Row
	var run []runner
	if schedule.Mixed(items) {
		if rows, run, err = mixedRows(rep, est, n); err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
	} else if rows, run, err = singleRows(rep, in, est, n); err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	width := schedule.Widths(items)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	dur := make([]float64, len(items))
	noisy := o.Noise > 0
	for k := 0; k < o.Runs; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if k == 0 || noisy {
			o.durations(rng, items, dur)
		}
		b := schedule.DurationBound(dur, width, n)
		work, bound := b.Total, b.Seconds
		if k == 0 || noisy {
			rep.Work.add(work)
			rep.Largest.add(b.Largest)
			rep.Bound.add(bound)
		}
		for r := range rows {
			row := &rows[r]
			if k > 0 && !noisy && row.Policy != RowUnordered {
				continue // deterministic: one run says it all
			}
			wall, tl, err := run[r](rng, dur)
			if err != nil {
				return nil, fmt.Errorf("%s queue: %w", row.Policy, err)
			}
			if tl != nil {
				rep.Mixed.Holds.add(tl, items, dur)
			}
			row.Runs++
			row.Wall.add(wall)
			row.Util.add(ratio(work, float64(n)*wall))
			row.Ratio.add(ratio(wall, bound))
		}
	}
	for r := range rows {
		rows[r].Varies = rows[r].Runs > 1
		rows[r].SpeedUp = ratio(rows[0].Wall.Mean, rows[r].Wall.Mean)
	}
	rep.Rows = rows
	rep.Calibration = rep.cal.list()
	return rep, nil
}

// estimatesOff reports whether the queues' estimates are off by design (a bias
// or a prior): the report then shows the default policy uncalibrated too.
func (o Options) estimatesOff() bool { return o.Bias.Set() || o.Prior != nil }

// wallOnly is a runner's answer for a row without a timeline to keep.
func wallOnly(wall float64, err error) (float64, *schedule.BlockTimeline, error) {
	return wall, nil, err
}

// singleRows are the rows of a workload of single-GPU items; LPT and planned are
// the schedulers a run gets (schedule.NewSetup).
func singleRows(rep *Report, in *Input, items []schedule.Item, n int) ([]Row, []runner, error) {
	lpt, err := schedule.NewSetup(schedule.PolicyLPT, items, n)
	if err != nil {
		return nil, nil, err
	}
	planned, err := schedule.NewSetup(schedule.PolicyPlanned, items, n)
	if err != nil {
		return nil, nil, err
	}
	rep.Planner = planned.Plan.Note
	rows := []Row{{Policy: RowStatic}, {Policy: RowUnordered}, {Policy: RowLPT}, {Policy: RowPlanned}}
	run := []runner{
		func(_ *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
			return Static(in.Suite, dur, n), nil, nil
		},
		func(rng *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
			return wallOnly(schedule.Wall(schedule.OnSlots(schedule.NewPull(shuffled(rng, len(items))), n), nil, dur, n))
		},
		func(_ *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
			return wallOnly(lpt.Wall(dur))
		},
		func(_ *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
			s := planned.Scheduler()
			w, err := schedule.Wall(s, nil, dur, n)
			rep.cal.add(s.Calibration().Factors())
			return w, nil, err
		},
	}
	rows, run = withUncalibrated(rep, rows, run, func(dur []float64) (float64, error) {
		return schedule.Wall(planned.Uncalibrated(), nil, dur, n)
	})
	return rows, run, nil
}

// mixedRows are the rows of a workload with multi-GPU items: the two-step job, the
// unordered queue, and each block order through schedule.Blocks.
func mixedRows(rep *Report, items []schedule.Item, n int) ([]Row, []runner, error) {
	width := schedule.Widths(items)
	mi := &MixedInfo{}
	var single, multi []int
	for i, w := range width {
		if w == 1 {
			single = append(single, i)
			continue
		}
		multi = append(multi, i)
		if mi.Multi == 0 || w < mi.MinGPUs {
			mi.MinGPUs = w
		}
		mi.MaxGPUs = max(mi.MaxGPUs, w)
		mi.Multi++
	}
	rep.Mixed = mi
	setup, err := schedule.NewSetup(schedule.DefaultPolicy, items, n) // the scheduler a run gets
	if err != nil {
		return nil, nil, err
	}
	plan := *setup.Blocks
	rep.Planner = plannerWords(plan)

	blocks := func(order []int, dur []float64) (*schedule.BlockTimeline, error) {
		if order == nil {
			s := setup.Scheduler()
			t, err := schedule.ReplayBlocks(s, width, dur, n)
			rep.cal.add(s.Calibration().Factors())
			return t, err
		}
		b, err := schedule.NewBlocks(items, order, n)
		if err != nil {
			return nil, err
		}
		return schedule.ReplayBlocks(b, width, dur, n)
	}
	twoStep, err := twoStepRunner(items, single, multi, n)
	if err != nil {
		return nil, nil, err
	}
	rows := []Row{{Policy: RowTwoStep}, {Policy: RowUnordered}, {Policy: RowStrict}}
	run := []runner{
		twoStep,
		func(rng *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
			t, err := blocks(shuffled(rng, len(items)), dur)
			if err != nil {
				return 0, nil, err
			}
			return t.Wall, nil, nil
		},
		strictRunner(items, n),
	}
	orders := append(schedule.BlockOrders(), schedule.ByChoice)
	for _, by := range orders {
		var order []int // nil: the run's own scheduler
		if by != schedule.ByChoice {
			order = schedule.BlockOrder(items, by)
		}
		keep := by == plan.By
		rows = append(rows, Row{Policy: by})
		run = append(run, func(_ *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
			t, err := blocks(order, dur)
			if err != nil {
				return 0, nil, err
			}
			if !keep {
				return t.Wall, nil, nil
			}
			return t.Wall, t, nil
		})
	}
	rows, run = withUncalibrated(rep, rows, run, func(dur []float64) (float64, error) {
		return schedule.Wall(setup.Uncalibrated(), width, dur, n)
	})
	return rows, run, nil
}

// withUncalibrated adds the row of the default policy not calibrated (wall
// replays it) when the estimates are off by design (--bias, --prior).
func withUncalibrated(rep *Report, rows []Row, run []runner, wall func(dur []float64) (float64, error)) ([]Row, []runner) {
	if !rep.Options.estimatesOff() {
		return rows, run
	}
	return append(rows, Row{Policy: RowUncalibrated}), append(run, func(_ *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
		return wallOnly(wall(dur))
	})
}

// twoStepRunner runs TE's job before one queue (RowTwoStep): the single-GPU
// items as the planned queue (not calibrated), then each multi-GPU item alone.
func twoStepRunner(items []schedule.Item, single, multi []int, n int) (runner, error) {
	sItems := make([]schedule.Item, len(single))
	for k, i := range single {
		sItems[k] = items[i]
	}
	setup, err := schedule.NewSetup(schedule.PolicyPlanned, sItems, n)
	if err != nil {
		return nil, err
	}
	sDur := make([]float64, len(single))
	return func(_ *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
		for k, i := range single {
			sDur[k] = dur[i]
		}
		wall, err := schedule.Wall(setup.Uncalibrated(), nil, sDur, n)
		for _, i := range multi {
			wall += dur[i]
		}
		return wall, nil, err
	}, nil
}

// strictRunner runs TE's current rule (RowStrict) on items.
func strictRunner(items []schedule.Item, n int) runner {
	order, width := schedule.StrictOrder(items), schedule.Widths(items)
	return func(_ *rand.Rand, dur []float64) (float64, *schedule.BlockTimeline, error) {
		s, err := schedule.NewStrict(items, order, n)
		if err != nil {
			return 0, nil, err
		}
		return wallOnly(schedule.Wall(s, width, dur, n))
	}
}

// plannerWords says how the planned queue ordered this workload (schedule.PlanBlocks).
func plannerWords(p schedule.BlockPlan) string {
	const rest = "holds GPUs for the next item when too few are free and backfills around the hold"
	if len(p.Tried) == 0 {
		return fmt.Sprintf("takes %s (no order chosen: an item without a weight, or too many items), %s", orderWords[p.From], rest)
	}
	var tried []string
	for _, c := range p.Tried {
		tried = append(tried, fmt.Sprintf("%s %s", blockName(c.By), secs(c.Wall)))
	}
	took := blockName(p.From)
	if p.Moves > 0 {
		took += fmt.Sprintf(" with %s moved", textfmt.Count(p.Moves, "item"))
	}
	why := "the shortest"
	switch {
	case p.From == schedule.ByWidest && p.Moves == 0 && p.Rejected > 0:
		why = fmt.Sprintf("the fallback: %s shorter on the weights lost to it with noise", textfmt.Count(p.Rejected, "order"))
	case p.From != schedule.ByWidest || p.Moves > 0:
		why += ", no longer than widest first with ±10, ±20 and ±50 % noise"
	}
	return fmt.Sprintf("%s; its order is chosen on the weights:\n  tried %s; took %s: %s (%s)",
		rest, strings.Join(tried, ", "), took, secs(p.Wall), why)
}

// blockName names a block order in the report.
func blockName(by string) string {
	switch by {
	case schedule.ByDuration:
		return "longest first"
	case schedule.ByGPUSeconds:
		return "most GPU-seconds first"
	case schedule.ByWidest:
		return "widest first"
	case schedule.ByChoice:
		return "chosen order"
	}
	return by
}

// orderWords says what each block order puts first.
var orderWords = map[string]string{
	schedule.ByDuration:   "the longest items first",
	schedule.ByGPUSeconds: "the items with the most GPU-seconds first",
	schedule.ByWidest:     "the widest items first (then the longest)",
}

// add counts the holds of one run.
func (h *HoldStats) add(t *schedule.BlockTimeline, items []schedule.Item, dur []float64) {
	late, explained := t.Lateness(items, dur)
	for k, l := range late {
		h.Holds++
		if l > 1e-9 {
			h.Late++
			h.LateSum += l
			h.MaxLate = max(h.MaxLate, l)
		}
		switch {
		case l <= explained[k]+1e-6:
		case t.Holds[k].Recalibrated:
			h.Recalibrated++
		default:
			h.Unexplained++
		}
	}
}

// shuffled is a random permutation of 0 … n−1.
func shuffled(rng *rand.Rand, n int) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	return perm
}

// ratio is a/b, NaN when b is 0 (printed as "–").
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// MaxGPUs and MaxRuns keep a typo from starting an hour-long simulation.
const (
	MaxGPUs = 100000
	MaxRuns = 100000
)

// Check says what is wrong with o, in terms of the command's flags.
func (o Options) Check() error {
	switch {
	case o.GPUs < 1 || o.GPUs > MaxGPUs:
		return fmt.Errorf("--gpus %d: want a GPU count from 1 to %d", o.GPUs, MaxGPUs)
	case o.Runs < 1 || o.Runs > MaxRuns:
		return fmt.Errorf("--runs %d: want from 1 to %d runs", o.Runs, MaxRuns)
	case !(o.Noise >= 0 && o.Noise <= 1):
		return fmt.Errorf("--noise %g: want a fraction from 0 to 1 (0.2 or 20%% for ±20 %%)", o.Noise)
	case o.Model != "" && o.Model != NoiseUniform && o.Model != NoiseLognormal:
		return fmt.Errorf("--noise-model %q: want %s or %s", o.Model, NoiseUniform, NoiseLognormal)
	case o.Bias.Default != 0 && !ratioOK(o.Bias.Default):
		return fmt.Errorf("--bias %g: want a factor above 0 and at most %d", o.Bias.Default, MaxBias)
	}
	for l, f := range o.Bias.By {
		if !ratioOK(f) {
			return fmt.Errorf("--bias %s=%g: want a factor above 0 and at most %d", l, f, MaxBias)
		}
	}
	return nil
}

// durations draws the actual durations of one run.
func (o Options) durations(rng *rand.Rand, items []schedule.Item, dur []float64) {
	for i, it := range items {
		f := 1.0
		switch {
		case o.Noise == 0:
		case o.Model == NoiseLognormal:
			f = math.Exp(o.Noise * rng.NormFloat64())
		default:
			f = 1 + o.Noise*(2*rng.Float64()-1)
		}
		dur[i] = it.Weight * f
	}
	o.Bias.apply(items, dur)
}
