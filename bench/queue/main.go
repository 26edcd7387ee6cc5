// Command queue measures the real queue: TransformerEngine's measured workload
// (testdata/simulate/te-gfx950-l3.weights, 80 items) scaled down into sleeping items of
// fixture suites that honour the hook contract, run by the sgpu-queue binary on 4
// fake GPUs with warm weights. It prints, per run and as min/median/max:
//
//   - the item-phase wall clock,
//
//   - the lower bound max(work/N, largest) from the items' own measured durations,
//
//   - their ratio (target ≤ 1.02),
//
//   - the dispatch overhead: the gap between an item's end and the next start on
//     the same GPU (target < 5 ms).
//
//     go run ./bench/queue [-weights FILE] [-scale 150] [-gpus 4] [-runs 3]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

func main() {
	wfile := flag.String("weights", "testdata/simulate/te-gfx950-l3.weights", "the workload: a weight table")
	scale := flag.Float64("scale", 150, "divide every duration by this")
	gpus := flag.Int("gpus", 4, "workers")
	runs := flag.Int("runs", 3, "runs to measure")
	flag.Parse()
	if err := run(*wfile, *scale, *gpus, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type figures struct {
	wall, bound, ratio float64
	gapMean, gapMax    float64
	gaps               int
}

func run(wfile string, scale float64, gpus, runs int) error {
	data, err := os.ReadFile(wfile)
	if err != nil {
		return err
	}
	table, warns := weights.Parse(bytes.NewReader(data), wfile)
	if len(warns) > 0 {
		return fmt.Errorf("%s", warns[0])
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
		return fmt.Errorf("go build: %v", err)
	}
	conf, warm, work, err := writeSuites(dir, table, scale)
	if err != nil {
		return err
	}
	fmt.Printf("workload: %s, %d items, %.1f s of sleep after scaling by 1/%g, %d GPUs\n", wfile, table.Len(), work, scale, gpus)
	var all []figures
	for i := 1; i <= runs; i++ {
		logs := filepath.Join(dir, fmt.Sprintf("logs%d", i))
		cmd := exec.Command(bin, "run", "--repo-root", dir, "--log-dir", logs, "--gpus", fmt.Sprint(gpus),
			"--arch", "bench", "--weights", warm, conf)
		cmd.Env = append(os.Environ(), "TEST_LEVEL=3")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("run %d: %v\n%s", i, err, out)
		}
		// Keep the table warm and exact: learning would blend in this run.
		if err := os.WriteFile(warm, warmTable(table, scale), 0o644); err != nil {
			return err
		}
		f, err := measure(logs)
		if err != nil {
			return err
		}
		all = append(all, f)
		fmt.Printf("run %d: wall %.3f s, bound %.3f s, ratio %.4f, dispatch gap mean %.2f ms, max %.2f ms over %d gaps\n",
			i, f.wall, f.bound, f.ratio, 1000*f.gapMean, 1000*f.gapMax, f.gaps)
	}
	stat := func(name, unit string, mul float64, get func(figures) float64) {
		var v []float64
		for _, f := range all {
			v = append(v, get(f)*mul)
		}
		sort.Float64s(v)
		fmt.Printf("%-22s min %9.4f  median %9.4f  max %9.4f %s\n", name, v[0], v[len(v)/2], v[len(v)-1], unit)
	}
	fmt.Printf("over %d runs:\n", runs)
	stat("item-phase wall", "s", 1, func(f figures) float64 { return f.wall })
	stat("lower bound", "s", 1, func(f figures) float64 { return f.bound })
	stat("wall / bound", "", 1, func(f figures) float64 { return f.ratio })
	stat("mean dispatch gap", "ms", 1000, func(f figures) float64 { return f.gapMean })
	stat("max dispatch gap", "ms", 1000, func(f figures) float64 { return f.gapMax })
	return nil
}

// writeSuites turns the table into one script per suite label: a list suite for the
// keys with a tag, an opaque one for a bare label. Each item sleeps its scaled weight.
func writeSuites(dir string, t *weights.Table, scale float64) (conf, warm string, work float64, err error) {
	tags := map[string][]string{}
	var labels []string
	for _, k := range t.Keys() {
		label, tag := weights.SplitKey(k)
		if _, ok := tags[label]; !ok {
			labels = append(labels, label)
		}
		tags[label] = append(tags[label], tag)
		v, _ := t.Get(k)
		work += v / scale
	}
	sort.Strings(labels)
	var c strings.Builder
	for _, label := range labels {
		mode := "list"
		if tags[label][0] == "" {
			mode = "opaque"
		}
		script := suiteScript(label, tags[label], t, scale)
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
	return conf, warm, work, os.WriteFile(warm, warmTable(t, scale), 0o644)
}

func suiteScript(label string, tags []string, t *weights.Table, scale float64) string {
	var s strings.Builder
	s.WriteString("#!/bin/sh\n# Generated by bench/queue: sleeping items.\n")
	if tags[0] == "" {
		v, _ := t.Get(label)
		fmt.Fprintf(&s, "exec sleep %.3f\n", v/scale)
		return s.String()
	}
	s.WriteString("if [ -n \"$TE_CI_LIST_ITEMS\" ]; then\n")
	for _, tag := range tags {
		fmt.Fprintf(&s, "    echo 'TE_CI_ITEM %s'\n", tag)
	}
	s.WriteString("    exit 0\nfi\n[ -n \"$TE_CI_SETUP_ONLY\" ] && exit 0\ncase \"$TEST_FILTER\" in\n")
	for _, tag := range tags {
		v, _ := t.Get(weights.Key(label, tag))
		fmt.Fprintf(&s, "    '%s') exec sleep %.3f ;;\n", tag, v/scale)
	}
	s.WriteString("esac\n")
	return s.String()
}

// warmTable is the workload's table scaled down: the weights the run is ordered by.
func warmTable(t *weights.Table, scale float64) []byte {
	var b strings.Builder
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		fmt.Fprintf(&b, "%s %.4f\n", k, v/scale)
	}
	return []byte(b.String())
}

// measure reads a run's figures the way its report does: wall, the bound from the
// measured durations, and the gaps between an item's end and the next start on the
// same GPU.
func measure(logs string) (figures, error) {
	run, warns, err := logdir.Load(logs)
	if err != nil {
		return figures{}, err
	}
	if len(warns) > 0 {
		return figures{}, fmt.Errorf("%s", warns[0])
	}
	s := report.Compute(run, verdict.Decide(run))
	return figures{wall: s.Wall, bound: s.Bound, ratio: s.Wall / s.Bound,
		gapMean: s.Gaps.Mean, gapMax: s.Gaps.Max, gaps: s.Gaps.Count}, nil
}
