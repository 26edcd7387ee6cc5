// Command mixed is the evidence for the order of a workload with multi-GPU items
// (docs/performance.md): it simulates the committed workload, then a family with
// fresh random multi-GPU items, so that the choice does not hang on one draw, and
// prints each block order against the bound and the two-step job.
//
//	go run ./bench/mixed [-weights FILE] [-gpus 8] [-sets 200] [-runs 200]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/simulate"
)

func main() {
	wfile := flag.String("weights", "testdata/simulate/te-mixed.weights", "the committed mixed workload (<key> <secs> [gpus=N])")
	gpus := flag.Int("gpus", 8, "GPUs")
	sets := flag.Int("sets", 200, "random multi-GPU sets in the family")
	mgpu := flag.Int("mgpu", 15, "multi-GPU items per random set")
	runs := flag.Int("runs", 200, "noisy runs per workload and noise model")
	flag.Parse()
	if err := run(*wfile, *gpus, *sets, *mgpu, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// noise is one way actual durations deviate from the weights.
type noise struct {
	name string
	o    simulate.Options
}

func run(wfile string, gpus, sets, mgpu, runs int) error {
	data, err := os.ReadFile(wfile)
	if err != nil {
		return err
	}
	in, warns, err := simulate.Load(bytes.NewReader(data), wfile)
	if len(warns) > 0 {
		// The committed workload loads clean: a warning means it is not the
		// workload docs/performance.md's figures are from (and says why a load failed).
		return errors.Join(err, errors.New(strings.Join(warns, "; ")))
	}
	if err != nil {
		return err
	}
	noises := []noise{
		{"exact", simulate.Options{GPUs: gpus, Runs: runs, Seed: 1}},
		{"±20 %", simulate.Options{GPUs: gpus, Noise: 0.2, Runs: runs, Seed: 1}},
		{"lognormal 0.5", simulate.Options{GPUs: gpus, Noise: 0.5, Model: simulate.NoiseLognormal, Runs: runs, Seed: 1}},
	}
	fmt.Printf("%s on %d GPUs: wall clock (× GPU-second bound; vs the two-step job), means over %d runs with noise\n\n", wfile, gpus, runs)
	if err := committed(in, noises); err != nil {
		return err
	}
	return family(in, noises, gpus, sets, mgpu)
}

// committed prints the table of the committed workload: a row per order, a
// column per noise model, and a line per noise model about the held items.
func committed(in *simulate.Input, noises []noise) error {
	var tab [][]string
	for _, nz := range noises {
		rep, err := simulate.Compare(context.Background(), in, nz.o)
		if err != nil {
			return err
		}
		if tab == nil {
			tab = append(tab, []string{"order"})
			for _, r := range rep.Rows {
				tab = append(tab, []string{name(r.Policy)})
			}
		}
		tab[0] = append(tab[0], nz.name)
		two := rep.Rows[0].Wall.Mean
		for k, r := range rep.Rows {
			tab[k+1] = append(tab[k+1], fmt.Sprintf("%.0f s (%.4f; %+.1f %%)", r.Wall.Mean, r.Ratio.Mean, 100*(r.Wall.Mean/two-1)))
		}
		h := rep.Mixed.Holds
		fmt.Printf("%s: bound %.0f s; held items %d, %d started after their reservation (max %.1f s late), %d beyond the overruns\n",
			nz.name, rep.Bound.Mean, h.Holds, h.Late, h.MaxLate, h.Unexplained)
	}
	fmt.Println()
	markdown(tab)
	return nil
}

// family prints the table of the family: the committed workload's single-GPU
// items, a fresh random multi-GPU set each, sets of them per noise model.
func family(in *simulate.Input, noises []noise, gpus, sets, mgpu int) error {
	var single []string
	for i, it := range in.Items {
		if it.Width() == 1 && !in.All[i] {
			single = append(single, fmt.Sprintf("%s %g", it.Key(), it.Weight))
		}
	}
	fmt.Printf("\nfamily: %d single-GPU items + %d random multi-GPU items (2–%d GPUs, 60–400 s), %d sets, %d GPUs; per order: mean × "+
		"bound, worst × bound, sets where it is best (ties count for each)\n\n",
		len(single), mgpu, gpus, sets, gpus)
	fam := [][]string{{"order"}}
	tallies := make([]tally, len(noises))
	for z, nz := range noises {
		fam[0] = append(fam[0], nz.name)
		gen := rand.New(rand.NewPCG(uint64(z), 11))
		t := &tallies[z]
		for s := 0; s < sets; s++ {
			text := strings.Join(single, "\n") + "\n" + randomSet(gen, mgpu, gpus)
			win, _, err := simulate.Load(strings.NewReader(text), "family")
			if err != nil {
				return err
			}
			o := nz.o
			o.Runs = max(1, o.Runs/4) // 4× fewer runs per set: the family averages over sets
			o.Seed = uint64(s + 1)
			rep, err := simulate.Compare(context.Background(), win, o)
			if err != nil {
				return err
			}
			if z == 0 && s == 0 {
				for _, r := range rep.Rows {
					fam = append(fam, []string{name(r.Policy)})
				}
			}
			t.add(rep)
		}
		for k, a := range t.rows {
			cell := fmt.Sprintf("%.4f, worst %.4f", a.sum/float64(sets), a.worst)
			if k >= 2 {
				cell += fmt.Sprintf(", best in %d", a.best)
			}
			fam[k+1] = append(fam[k+1], cell)
		}
	}
	markdown(fam)
	fmt.Println()
	for z, nz := range noises {
		t := tallies[z]
		fmt.Printf("%s: the default order within 10 %% of the bound in %d of %d sets; ≥ 25 %% shorter than the two-step job in %d (the bound "+
			"itself is in %d)\n",
			nz.name, t.within10, sets, t.short25, t.feasible)
	}
	return nil
}

// tally sums up one noise model over the family's sets.
type tally struct {
	rows []rowTally // by row of the report
	// Sets where the bound is ≥ 25 % shorter than the two-step job; where the
	// default order is within 10 % of the bound; where it is ≥ 25 % shorter.
	feasible, within10, short25 int
}

// rowTally sums up one row of the report over the sets.
type rowTally struct {
	sum, worst float64 // of its ratio to the bound
	best       int     // sets where this order (a block-order row, from the third) is best
}

// add counts one set's report.
func (t *tally) add(rep *simulate.Report) {
	if t.rows == nil {
		t.rows = make([]rowTally, len(rep.Rows))
	}
	bestR := math.Inf(1)
	for _, r := range rep.Rows[2:] {
		bestR = min(bestR, r.Ratio.Mean)
	}
	for k, r := range rep.Rows {
		a := &t.rows[k]
		a.sum += r.Ratio.Mean
		a.worst = max(a.worst, r.Ratio.Mean)
		if k >= 2 && r.Ratio.Mean <= bestR+1e-12 {
			a.best++
		}
	}
	two := rep.Rows[0].Wall.Mean
	def := defaultRow(rep)
	if rep.Bound.Mean <= 0.75*two {
		t.feasible++
	}
	if def.Ratio.Mean <= 1.10 {
		t.within10++
	}
	if def.Wall.Mean <= 0.75*two {
		t.short25++
	}
}

// randomSet is n multi-GPU items, 2–gpus GPUs and 60–400 s each, uniform.
func randomSet(gen *rand.Rand, n, gpus int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "mgpu/t%02d %d gpus=%d\n", i, 60+gen.IntN(341), 2+gen.IntN(max(gpus-1, 1)))
	}
	return b.String()
}

func defaultRow(rep *simulate.Report) simulate.Row {
	def, _ := schedule.BlockOrderOf(schedule.DefaultPolicy)
	for _, r := range rep.Rows {
		if r.Policy == def {
			return r
		}
	}
	return simulate.Row{}
}

func name(policy string) string {
	def, _ := schedule.BlockOrderOf(schedule.DefaultPolicy)
	switch policy {
	case simulate.RowTwoStep:
		return "two steps (sGPU queue, then mGPU serially)"
	case simulate.RowUnordered:
		return "unordered"
	case def:
		return "**" + policy + " (default)**"
	}
	return policy
}

func markdown(rows [][]string) {
	for k, r := range rows {
		fmt.Println("| " + strings.Join(r, " | ") + " |")
		if k == 0 {
			fmt.Println(strings.Repeat("|---", len(r)) + "|")
		}
	}
}
