package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

// Noise models: how an item's actual duration deviates from its weight.
const (
	// NoiseUniform multiplies each weight by a factor drawn uniformly from
	// [1−F, 1+F] (F = 0.2: every item within ±20 %).
	NoiseUniform = "uniform"
	// NoiseLognormal multiplies each weight by exp(F·Z), Z standard normal: median
	// 1, skewed to the slow side as real overruns are (F = 0.2: about ±20 % at one
	// standard deviation, some items far off).
	NoiseLognormal = "lognormal"
)

// Options says what to simulate.
type Options struct {
	GPUs  int
	Noise float64 // F, 0 for the weights exactly
	Model string  // NoiseUniform (default) or NoiseLognormal
	Runs  int     // noisy runs, and shuffles of the unordered queue
	Seed  uint64
}

// Policy rows, in the order Compare reports them.
const (
	RowStatic    = "static"
	RowUnordered = "unordered"
	RowLPT       = schedule.PolicyLPT
	RowPlanned   = schedule.PolicyPlanned
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
	Work    Stat // seconds of work in a run
	Largest Stat // the longest item of a run
	Bound   Stat // the lower bound max(work/GPUs, largest) of a run
	Rows    []Row
	// Planner says what the planned queue does on this table ("follows a plan:
	// ..." or "is LPT: ...").
	Planner string
}

// Compare simulates each policy on in: static (one suite per GPU), the unordered
// queue (a fresh shuffle per run), LPT and the planned queue, against the lower
// bound. Without noise every policy but the unordered one is deterministic and runs
// once. With noise, run k draws one set of actual durations that every policy
// faces (so the comparison is paired); the queues still order by the weights.
func Compare(ctx context.Context, in *Input, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	n := o.GPUs
	items := in.Items
	// Plan once; each run gets a fresh queue over the same order or plan, built by
	// the constructors the engine uses.
	lptOrder := schedule.LPTOrder(items)
	plan := schedule.NewPlan(items, n)
	rep := &Report{Input: in, Options: o, Planner: plan.Note}
	rows := []Row{{Policy: RowStatic}, {Policy: RowUnordered}, {Policy: RowLPT}, {Policy: RowPlanned}}
	queues := map[string]func(*rand.Rand) schedule.Queue{
		RowUnordered: func(rng *rand.Rand) schedule.Queue {
			perm := make([]int, len(items))
			for i := range perm {
				perm[i] = i
			}
			rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			return schedule.NewPull(perm)
		},
		RowLPT:     func(*rand.Rand) schedule.Queue { return schedule.NewPull(lptOrder) },
		RowPlanned: func(*rand.Rand) schedule.Queue { return plan.Queue(items) },
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	dur := make([]float64, len(items))
	runs := o.Runs
	for k := 0; k < runs; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		noisy := o.Noise > 0
		if k == 0 || noisy {
			o.durations(rng, items, dur)
		}
		bound := schedule.BoundOf(dur, n)
		var work, largest float64
		for _, d := range dur {
			work += d
			largest = max(largest, d)
		}
		if k == 0 || noisy {
			rep.Work.add(work)
			rep.Largest.add(largest)
			rep.Bound.add(bound)
		}
		for r := range rows {
			row := &rows[r]
			if k > 0 && !noisy && row.Policy != RowUnordered {
				continue // deterministic: one run says it all
			}
			var wall float64
			if row.Policy == RowStatic {
				wall = Static(in.Suite, dur, n)
			} else {
				res, err := schedule.Replay(queues[row.Policy](rng), dur, n)
				if err != nil {
					return nil, fmt.Errorf("%s queue: %w", row.Policy, err)
				}
				wall = res.Wall
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
	return rep, nil
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
}
