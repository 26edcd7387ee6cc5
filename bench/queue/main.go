// Command queue measures the real queue: TE's measured workload scaled down into
// sleeping items of fixture suites, run by the sgpu-queue binary on fake GPUs. It
// prints the item-phase wall clock, the lower bound from the items' measured
// durations, their ratio and the dispatch overhead (docs/performance.md holds the
// targets and results):
//
//	go run ./bench/queue [-weights FILE] [-scale 150] [-gpus 4] [-runs 3]
//	go run ./bench/queue -shards 3 -gpus 2 [-runs 3]
//	go run ./bench/queue -te -weights testdata/simulate/te-mgpu-l3.weights -gpus 8 -scale 60 -runs 2
//	go run ./bench/queue -prior testdata/simulate/te-gfx950-l3-prior.weights
//
// -shards runs a job matrix (docs/runners.md); -te compares TE's strict rule with the
// default order through one driver; -bias and -prior make estimates wrong or missing
// (docs/performance.md, "Estimates that hold").
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/simulate"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

func main() {
	wfile := flag.String("weights", "testdata/simulate/te-gfx950-l3.weights", "the workload: a weight table")
	scale := flag.Float64("scale", 150, "divide every duration by this")
	gpus := flag.Int("gpus", 4, "workers")
	runs := flag.Int("runs", 3, "runs to measure")
	shards := flag.Int("shards", 0, "measure a job matrix of this many shards of -gpus GPUs each (0: one runner)")
	te := flag.Bool("te", false, "compare TE's current dispatch rule with the default order on real processes")
	bias := flag.String("bias", "", "every item sleeps its weight × F (F, or label=F,... per suite); the table keeps the weights")
	prior := flag.String("prior", "", "no table of the run's own: this table, scaled as the items, as another level's")
	flag.Parse()
	o := options{scale: *scale, gpus: *gpus, runs: *runs, shards: *shards, te: *te}
	if *bias != "" {
		b, err := simulate.ParseBias(*bias)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		o.bias = b
	}
	o.prior = *prior
	if err := run(*wfile, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the bench's flags.
type options struct {
	scale      float64
	gpus, runs int
	shards     int
	te         bool
	bias       simulate.Bias
	prior      string // a prior table's path; "" for the warm table
}

type figures struct {
	wall, bound, ratio float64
	gapMean, gapMax    float64
	gaps               int
	priors             int    // items the run estimated by a prior
	calibration        string // the suites' factors at the end of phase 4
}

func run(wfile string, o options) error {
	scale, gpus, runs := o.scale, o.gpus, o.runs
	in, err := load(wfile)
	if err != nil {
		return err
	}
	if _, err := in.ItemsOn(gpus); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sgpu-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sgpu-queue")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	conf, warm, work, err := writeSuites(dir, in, scale, o.bias)
	if err != nil {
		return err
	}
	fmt.Printf("workload: %s, %d items, %.1f GPU-seconds of sleep after scaling by 1/%g, %d GPUs\n", wfile, len(in.Items), work, scale, gpus)
	if o.bias.Set() {
		fmt.Printf("bias: the items sleep their weight × %s; the table keeps the weights\n", o.bias)
	}
	if o.prior != "" {
		if warm, err = writePrior(dir, o.prior, scale); err != nil {
			return err
		}
		fmt.Printf("prior: no table of the run's own; %s scaled by 1/%g as ci-weights/test_weights.bench.l1.txt\n", o.prior, scale)
	}
	switch {
	case o.shards > 0:
		return matrix(bin, dir, conf, warm, gpus, runs, o.shards)
	case o.te:
		return compareTE(bin, dir, conf, warm, in, o)
	}
	var all []figures
	for i := 1; i <= runs; i++ {
		f, err := runOnce(bin, dir, conf, warm, filepath.Join(dir, fmt.Sprintf("logs%d", i)), in, scale, gpus)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		all = append(all, f)
		fmt.Printf("run %d: wall %.3f s, bound %.3f s, ratio %.4f, dispatch gap mean %.2f ms, max %.2f ms over %d gaps; "+
			"%d items by a prior; calibrated %s\n", i, f.wall, f.bound, f.ratio, 1000*f.gapMean, 1000*f.gapMax, f.gaps, f.priors,
			f.calibration)
	}
	stat := func(name, unit string, mul float64, get func(figures) float64) { printStat(all, name, unit, mul, get) }
	fmt.Printf("over %d runs:\n", runs)
	stat("item-phase wall", "s", 1, func(f figures) float64 { return f.wall })
	stat("lower bound", "s", 1, func(f figures) float64 { return f.bound })
	stat("wall / bound", "", 1, func(f figures) float64 { return f.ratio })
	stat("mean dispatch gap", "ms", 1000, func(f figures) float64 { return f.gapMean })
	stat("max dispatch gap", "ms", 1000, func(f figures) float64 { return f.gapMax })
	return nil
}

// runOnce runs the workload once with the binary (warm weights, log dir logs) and
// measures it.
func runOnce(bin, dir, conf, warm, logs string, in *simulate.Input, scale float64, gpus int) (figures, error) {
	cmd := exec.Command(bin, "run", "--repo-root", dir, "--log-dir", logs, "--gpus", fmt.Sprint(gpus),
		"--arch", "bench", "--weights", warm, conf)
	cmd.Env = append(os.Environ(), "TEST_LEVEL=3")
	if out, err := cmd.CombinedOutput(); err != nil {
		return figures{}, fmt.Errorf("%w\n%s", err, out)
	}
	// Keep the table warm and exact (learning would blend in this run), or, with
	// a prior, missing.
	if err := restoreTable(warm, in, scale); err != nil {
		return figures{}, err
	}
	return measure(logs)
}

// load reads a workload (simulate's input): a warning means it is not what it
// says (and says why a load failed).
func load(path string) (*simulate.Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in, warns, err := simulate.Load(f, path)
	f.Close()
	if len(warns) > 0 {
		return nil, errors.Join(err, errors.New(strings.Join(warns, "; ")))
	}
	return in, err
}

// priorName is where writePrior puts the prior: the run's own table is
// test_weights.bench.l3.txt (TEST_LEVEL=3), so this is another level's.
const priorName = "test_weights.bench.l1.txt"

// writePrior writes the prior as another level's table and returns the run's own
// table's path, left missing so the run starts cold, with priors.
func writePrior(dir, path string, scale float64) (string, error) {
	p, err := load(path)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "ci-weights"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "ci-weights", priorName), warmTable(p, scale), 0o644); err != nil {
		return "", err
	}
	own := filepath.Join(dir, "ci-weights", "test_weights.bench.l3.txt")
	return own, os.Remove(filepath.Join(dir, "warm.txt"))
}

// restoreTable puts the run's table back as the bench had it: the warm one, or
// none (a prior run: its own table is where the warm one is not).
func restoreTable(path string, in *simulate.Input, scale float64) error {
	if filepath.Base(path) != "warm.txt" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.WriteFile(path, warmTable(in, scale), 0o644)
}

// printStat prints a figure's min, median and max over runs.
func printStat(all []figures, name, unit string, mul float64, get func(figures) float64) {
	var v []float64
	for _, f := range all {
		v = append(v, get(f)*mul)
	}
	sort.Float64s(v)
	fmt.Printf("%-22s min %9.4f  median %9.4f  max %9.4f %s\n", name, v[0], v[len(v)/2], v[len(v)-1], unit)
}

// matrix measures the job matrix: plan, each shard in turn, merge; per run.
func matrix(bin, dir, conf, warm string, gpus, runs, shards int) error {
	sh := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TEST_LEVEL=3")
		return cmd.CombinedOutput()
	}
	planFile := filepath.Join(dir, "plan.json")
	if out, err := sh("plan", "--shards", fmt.Sprint(shards), "--gpus", fmt.Sprint(gpus), "--weights", warm, "--arch", "bench", "--out",
		planFile, conf); err != nil {
		return fmt.Errorf("plan: %w\n%s", err, out)
	}
	data, err := os.ReadFile(planFile)
	if err != nil {
		return err
	}
	p, err := shard.Read(bytes.NewReader(data), planFile)
	if err != nil {
		return err
	}
	fmt.Printf("plan: %d shards of %d GPUs, predicted wall %.3f s, bound over all %d GPUs %.3f s\n", shards, gpus, p.Wall, shards*gpus,
		p.Bound)
	per := make([][]figures, shards)
	var merged []figures
	for i := 1; i <= runs; i++ {
		var dirs []string
		for s := 1; s <= shards; s++ {
			logs := filepath.Join(dir, fmt.Sprintf("run%d", i), fmt.Sprintf("s%d", s))
			if out, err := sh("run", "--repo-root", dir, "--log-dir", logs, "--gpus", fmt.Sprint(gpus), "--arch", "bench", "--weights", warm,
				"--shard", fmt.Sprintf("%d/%d", s, shards), "--plan", planFile, conf); err != nil {
				return fmt.Errorf("run %d shard %d: %w\n%s", i, s, err, out)
			}
			f, err := measure(logs)
			if err != nil {
				return err
			}
			per[s-1] = append(per[s-1], f)
			dirs = append(dirs, logs)
			fmt.Printf("run %d shard %d/%d: wall %.3f s, its bound %.3f s, ratio %.4f (planned %.3f s)\n", i, s, shards, f.wall, f.bound, f.ratio,
				p.Shards[s-1].Wall)
		}
		out := filepath.Join(dir, fmt.Sprintf("run%d", i), "merged")
		// Learn into a scratch table: the warm one stays exact for the next run.
		scratch := filepath.Join(dir, fmt.Sprintf("run%d", i), "learned.txt")
		if out, err := sh(append([]string{"merge", "--log-dir", out, "--weights", scratch}, dirs...)...); err != nil {
			return fmt.Errorf("run %d merge: %w\n%s", i, err, out)
		}
		f, err := measure(out)
		if err != nil {
			return err
		}
		merged = append(merged, f)
		run, _, err := logdir.Load(out)
		if err != nil {
			return err
		}
		fmt.Printf("run %d matrix: wall %.3f s (slowest shard), bound over %d GPUs %.3f s, ratio %.4f; %s\n", i, f.wall, shards*gpus, f.bound,
			f.ratio, run.Meta.Merge.Advice)
	}
	fmt.Printf("over %d runs:\n", runs)
	for s := range per {
		printStat(per[s], fmt.Sprintf("shard %d wall / bound", s+1), "", 1, func(f figures) float64 { return f.ratio })
	}
	printStat(merged, "matrix wall", "s", 1, func(f figures) float64 { return f.wall })
	printStat(merged, "matrix wall / bound", "", 1, func(f figures) float64 { return f.ratio })
	return nil
}

// writeSuites turns the table into one script per suite label, each item sleeping
// its scaled, biased weight.
func writeSuites(dir string, in *simulate.Input, scale float64, bias simulate.Bias) (conf, warm string, work float64, err error) {
	items := map[string][]int{} // by label: indices into in.Items
	for i, it := range in.Items {
		items[it.Label] = append(items[it.Label], i)
		work += float64(it.Width()) * it.Weight * bias.Of(it.Label) / scale
	}
	labels := slices.Sorted(maps.Keys(items))
	var c strings.Builder
	for _, label := range labels {
		mode := "list"
		if in.Items[items[label][0]].Tag == "" {
			mode = "opaque" + gpusOption(in, items[label][0])
		}
		script := suiteScript(in, items[label], scale/bias.Of(label))
		if err := os.WriteFile(filepath.Join(dir, label+".sh"), []byte(script), 0o755); err != nil {
			return "", "", 0, err
		}
		fmt.Fprintf(&c, "%s %s.log %s %s.sh\n", label, label, mode, label)
	}
	conf = filepath.Join(dir, "bench.conf")
	warm = filepath.Join(dir, "warm.txt")
	if err := os.WriteFile(conf, []byte(c.String()), 0o644); err != nil {
		return "", "", 0, err
	}
	return conf, warm, work, os.WriteFile(warm, warmTable(in, scale), 0o644)
}

// gpusOption is the mode option or listing word of item i's GPU count ("" for one).
func gpusOption(in *simulate.Input, i int) string {
	switch {
	case in.All[i]:
		return ",gpus=all"
	case in.Items[i].Width() > 1:
		return fmt.Sprintf(",gpus=%d", in.Items[i].Width())
	}
	return ""
}

func suiteScript(in *simulate.Input, idx []int, scale float64) string {
	var s strings.Builder
	s.WriteString("#!/bin/sh\n# Generated by bench/queue: sleeping items.\n")
	if first := in.Items[idx[0]]; first.Tag == "" {
		fmt.Fprintf(&s, "exec sleep %.3f\n", first.Weight/scale)
		return s.String()
	}
	s.WriteString("if [ -n \"$TE_CI_LIST_ITEMS\" ]; then\n")
	for _, i := range idx {
		count := strings.Replace(gpusOption(in, i), ",", " ", 1)
		fmt.Fprintf(&s, "    echo 'TE_CI_ITEM %s%s'\n", in.Items[i].Tag, count)
	}
	s.WriteString("    exit 0\nfi\n[ -n \"$TE_CI_SETUP_ONLY\" ] && exit 0\ncase \"$TEST_FILTER\" in\n")
	for _, i := range idx {
		fmt.Fprintf(&s, "    '%s') sleep %.3f ;;\n", in.Items[i].Tag, in.Items[i].Weight/scale)
	}
	// The JUnit file the run asks for (its log dir's by default): an item that
	// writes none ran nothing (docs/outcomes.md, no-run).
	s.WriteString("esac\nif [ -n \"$JUNITXML_PREFIX\" ]; then\n" +
		"    mkdir -p \"$(dirname \"$JUNITXML_PREFIX$TEST_FILTER\")\"\n" +
		"    echo '<testsuite name=\"bench\" tests=\"1\"><testcase name=\"sleep\"/></testsuite>' >\"$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX\"\n" +
		"fi\n")
	return s.String()
}

// warmTable is the workload's table scaled down: the weights the run is ordered by.
func warmTable(in *simulate.Input, scale float64) []byte {
	var b strings.Builder
	for _, it := range in.Items {
		fmt.Fprintf(&b, "%s %.4f\n", it.Key(), it.Weight/scale)
	}
	return []byte(b.String())
}

// measure reads a run's figures the way its report does.
func measure(logs string) (figures, error) {
	run, warns, err := logdir.Load(logs)
	if err != nil {
		return figures{}, err
	}
	if len(warns) > 0 {
		return figures{}, fmt.Errorf("%s", warns[0])
	}
	s := report.Compute(run, verdict.Decide(run))
	var cal []string
	for _, f := range run.Meta.Calibration {
		cal = append(cal, fmt.Sprintf("%s ×%.2f", f.Label, f.Factor))
	}
	return figures{wall: s.Wall, bound: s.Bound, ratio: s.Wall / s.Bound,
		gapMean: s.Gaps.Mean, gapMax: s.Gaps.Max, gaps: s.Gaps.Count,
		priors: len(run.Meta.Priors), calibration: strings.Join(cal, ", ")}, nil
}
