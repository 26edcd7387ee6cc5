package cli

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/settings"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/simulate"
	"github.com/rocm/sgpu-queue/internal/weights"
)

const simulateHelp = `Usage: sgpu-queue simulate --weights FILE --gpus N [--noise F] [--runs K] [--seed S] [--bias F]
                           [--prior FILE] [--runners R]

Predicts the wall clock and utilisation of a run on N GPUs from a weight table, for
the old design (one suite per GPU, a suite being a key's label, in the file's order),
an unordered queue (mean and range over K shuffles), the LPT queue and the planned
queue, each against the lower bound max(work/N, largest item). The queues are the
ones "run" uses, driven on virtual time.

A line may end in a third column, gpus=N or gpus=all: the GPUs that item takes at
once (simulate's input only; the weight table of a run keeps two columns). With
such items, work counts GPU-seconds and the rows are the two-step job (the
single-GPU items as one queue, then each multi-GPU item alone: how TE's job runs
without sgpu-queue), the unordered queue, TE's current rule (widest first, strict
order: nothing starts ahead of an item waiting for GPUs), and each order of the
queue that holds GPUs for a wide item and backfills around it: longest, most
GPU-seconds and widest first, and the order the planned queue chooses from them on
the weights. An item wider than N is an error.

With --noise F each item's actual duration deviates from its weight (uniform: a
factor in [1−F, 1+F]; lognormal: exp(F·Z)) while the queues still order by the
weights; the figures are then means over K runs. Flags may also be set by SGPU_*
variables (--gpus ↔ SGPU_GPUS).

With --bias F every item takes its weight × F (label=F,... per suite, as a
table from a slower or faster machine: 0.1 is ten times faster), and with
--prior FILE the run has no table of its own: the queues order by FILE's
estimates (the same key, else the item's siblings, else its suite's median,
as a run estimates the items its table lacks) while the items take the
weights of --weights. Either way the queues calibrate their estimates as items
finish, as "run" does; the report adds the default policy not calibrated, and
the factor each suite ended with.

With --runners R it predicts a job matrix instead: 1 … R runners of N GPUs each,
the items split as "sgpu-queue plan" splits them, each runner's share run as the
default queue on its own GPUs; the wall clock is the slowest runner's, against the
lower bound over all the runners' GPUs, with what one more runner would save.

Flags:
`

func simulateCmd(e Env, args []string) int {
	fs := newFlags("simulate", e, simulateHelp)
	var (
		weightsPath = fs.String("weights", envDefault(e, "weights", ""), "weight table to simulate (<key> <seconds> [gpus=N] per line)")
		gpus        = fs.String("gpus", envDefault(e, "gpus", ""), "GPU count (8), or a list of ids (0,1,2,3) to count")
		noise       = fs.String("noise", envDefault(e, "noise", "0"), "relative deviation of actual durations from the weights: 0.2 or 20%")
		model       = fs.String("noise-model", envDefault(e, "noise-model", simulate.NoiseUniform), "uniform (±F) or lognormal (σ = F)")
		runs        = fs.String("runs", envDefault(e, "runs", "100"), "noisy runs, and shuffles of the unordered queue")
		seed        = fs.String("seed", envDefault(e, "seed", "1"), "random seed (same seed, same figures)")
		runners     = fs.String("runners", envDefault(e, "runners", ""), "predict 1 … R runners of N GPUs each (a job matrix) instead of "+
			"comparing policies")
		bias = fs.String("bias", envDefault(e, "bias", ""), "every item takes its weight × F: F, or label=F,... per suite "+
			"(0.5,torch=2: torch at 2, the rest at 0.5)")
		prior = fs.String("prior", envDefault(e, "prior", ""), "a cold start: order by this table's estimates, the items taking "+
			"the weights of --weights")
	)
	pos, code, stop := parse(fs, args, e)
	if stop {
		return code
	}
	usageErr := func(err error) int { return usageError(e, "simulate", err) }
	if len(pos) > 0 {
		return usageErr(fmt.Errorf("unexpected argument %q: give the table with --weights FILE", pos[0]))
	}
	o, err := simulateOptions(*gpus, *noise, *model, *runs, *seed)
	if err != nil {
		return usageErr(err)
	}
	nRunners := 0
	if strings.TrimSpace(*runners) != "" {
		if nRunners, err = settings.Count(optname.CLI, "runners", *runners, shard.MaxShards, "runners"); err != nil {
			return usageErr(err)
		}
	}
	if strings.TrimSpace(*bias) != "" {
		if o.Bias, err = simulate.ParseBias(*bias); err != nil {
			return usageErr(err)
		}
	}
	if *prior != "" {
		if nRunners > 0 {
			return usageErr(fmt.Errorf("--prior with --runners: a job matrix is planned on a table of its own; drop one of them"))
		}
		if o.Prior, err = loadPrior(e, *prior); err != nil {
			return usageErr(err)
		}
	}
	if *weightsPath == "" {
		return usageErr(fmt.Errorf("no --weights FILE given: name the weight table to simulate"))
	}
	f, err := safefs.Open(*weightsPath) // a FIFO is refused, never waited on
	if err != nil {
		return usageErr(fmt.Errorf("--weights: %w", err))
	}
	in, warns, err := simulate.Load(f, *weightsPath)
	f.Close()
	for _, w := range warns {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	if err != nil {
		return usageErr(err)
	}
	ctx, _, stopSignals := signalContext(e.Stderr)
	defer stopSignals()
	var rep interface{ Write(io.Writer) error }
	if nRunners > 0 {
		rep, err = simulate.CompareRunners(ctx, in, o, nRunners)
	} else {
		rep, err = simulate.Compare(ctx, in, o)
	}
	if err != nil {
		return usageErr(err)
	}
	if err := rep.Write(e.Stdout); err != nil {
		fmt.Fprintf(e.Stderr, "sgpu-queue simulate: %v\n", err)
		return exitcode.Failed
	}
	return exitcode.OK
}

// loadPrior reads --prior's table, its warnings to stderr.
func loadPrior(e Env, path string) (*simulate.Prior, error) {
	f, err := safefs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--prior: %w", err)
	}
	in, warns, err := simulate.Load(f, path)
	f.Close()
	for _, w := range warns {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	if err != nil {
		return nil, fmt.Errorf("--prior: %w", err)
	}
	t := weights.New()
	for _, it := range in.Items {
		t.Set(it.Key(), it.Weight)
	}
	return &simulate.Prior{Name: filepath.Base(path), Table: t}, nil
}

// simulateOptions parses simulate's flag values (also their SGPU_* variables).
func simulateOptions(gpus, noise, model, runs, seed string) (simulate.Options, error) {
	var o simulate.Options
	var err error
	if o.GPUs, err = gpuCount(gpus); err != nil {
		return o, err
	}
	if o.Noise, err = fraction(noise); err != nil {
		return o, err
	}
	o.Model = strings.ToLower(strings.TrimSpace(model))
	if o.Runs, err = settings.Count(optname.CLI, "runs", runs, simulate.MaxRuns, "runs"); err != nil {
		return o, err
	}
	if o.Seed, err = strconv.ParseUint(strings.TrimSpace(seed), 10, 64); err != nil {
		return o, fmt.Errorf("--seed %q: want a whole number from 0 to %d", seed, uint64(math.MaxUint64))
	}
	return o, o.Check()
}

// gpuCount reads "8" as eight GPUs and "0,1,2,3" as four.
func gpuCount(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("no --gpus given: say how many GPUs to simulate, e.g. --gpus 4")
	}
	if !strings.Contains(s, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > simulate.MaxGPUs {
			return 0, fmt.Errorf("--gpus %q: want a GPU count from 1 to %d, or a list of ids like 0,1,2,3", s, simulate.MaxGPUs)
		}
		return n, nil
	}
	ids := strings.Split(s, ",")
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" || seen[id] {
			return 0, fmt.Errorf("--gpus %q: a list of ids must name each GPU once, like 0,1,2,3", s)
		}
		seen[id] = true
	}
	if len(ids) > simulate.MaxGPUs {
		return 0, fmt.Errorf("--gpus: %d ids, more than %d", len(ids), simulate.MaxGPUs)
	}
	return len(ids), nil
}

// count reads a whole number from 1 to most for flag.
func fraction(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(p), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	v *= scale
	if err != nil || !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("--noise %q: want a fraction from 0 to 1, like 0.2 or 20%% for ±20 %%", s)
	}
	return v, nil
}
