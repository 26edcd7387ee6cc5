//go:build eval

// The evidence for the default policy, too slow for CI (about a minute on 2 cores):
//
//	go test -tags eval -run Eval -v ./internal/simulate/
//
// Each line compares the planned queue with the LPT queue over paired runs (both
// face the same noisy durations; uniform factor in [1−F, 1+F]): the mean of
// (planned − LPT) / bound, and its standard error. Negative is better than LPT.
package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

// paired returns the mean of (planned − LPT) / bound over runs, and its standard error.
func paired(t *testing.T, items []schedule.Item, gpus int, F float64, runs int, seed uint64) (float64, float64) {
	t.Helper()
	lpt, err := schedule.NewSetup(schedule.PolicyLPT, items, gpus)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := schedule.NewSetup(schedule.PolicyPlanned, items, gpus)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	dur := make([]float64, len(items))
	var sum, sq float64
	for k := 0; k < runs; k++ {
		for i := range dur {
			dur[i] = items[i].Weight * (1 + F*(2*rng.Float64()-1))
		}
		b := schedule.BoundOfWidths(dur, nil, gpus)
		l, err := schedule.ReplayBlocks(lpt.Uncalibrated(), nil, dur, gpus)
		if err != nil {
			t.Fatal(err)
		}
		p, err := schedule.ReplayBlocks(planned.Uncalibrated(), nil, dur, gpus)
		if err != nil {
			t.Fatal(err)
		}
		d := (p.Wall - l.Wall) / b
		sum += d
		sq += d * d
	}
	m := sum / float64(runs)
	return m, math.Sqrt(math.Max(sq/float64(runs)-m*m, 0) / float64(runs))
}

// TestEvalTables: the TE table and the shapes in testdata/simulate, 2–8 GPUs, 3
// seeds × 3000 runs per noise level.
func TestEvalTables(t *testing.T) {
	for _, name := range []string{"te-gfx950-l3.weights", "random-500.weights", "random-2000.weights", "dominant-200.weights"} {
		in := loadFile(t, name)
		for gpus := 2; gpus <= 8; gpus++ {
			if name != "te-gfx950-l3.weights" && gpus != 4 && gpus != 8 {
				continue
			}
			p := schedule.NewPlan(in.Items, gpus)
			line := fmt.Sprintf("%-22s %d GPUs  exact: planned %s, LPT %s", name, gpus, secs(p.Makespan), secs(p.LPTMakespan))
			for _, F := range []float64{0.1, 0.2, 0.5} {
				var mean, v float64
				for seed := uint64(1); seed <= 3; seed++ {
					m, se := paired(t, in.Items, gpus, F, 3000, seed*1000+uint64(gpus))
					mean += m / 3
					v += se * se / 9
				}
				line += fmt.Sprintf(" | ±%2.0f%% %+.5f ±%.5f", 100*F, mean, math.Sqrt(v))
			}
			fmt.Println(line)
		}
	}
}

// TestEvalRandomFamily: 60 random tables (20–320 items, heavy-tailed weights, 2–8
// GPUs) on which some plan beats LPT by at least 0.1 % with exact weights; how
// often the planned queue adopts it, its mean gain, and in how many tables it is
// worse than LPT by more than two standard errors (1500 runs each).
func TestEvalRandomFamily(t *testing.T) {
	gen := rand.New(rand.NewPCG(42, 42))
	noises := []float64{0, 0.1, 0.2, 0.5}
	type agg struct {
		sum, worst float64
		worse, n   int
	}
	res := make([]agg, len(noises))
	tables, used := 0, 0
	for tables < 60 {
		n := []int{20, 40, 80, 160, 320}[gen.IntN(5)]
		gpus := []int{2, 3, 4, 6, 8}[gen.IntN(5)]
		sigma := 0.8 + gen.Float64()
		items := make([]schedule.Item, n)
		for i := range items {
			items[i] = schedule.Item{Weight: math.Max(1, math.Round(math.Exp(gen.NormFloat64()*sigma)*40)), Known: true, Seq: i}
		}
		p := schedule.NewPlan(items, gpus)
		best := 0.0
		for _, l := range p.Loads {
			best = math.Max(best, l)
		}
		if (p.LPTMakespan-best)/p.Bound < 0.001 {
			continue
		}
		tables++
		if p.Use {
			used++
		}
		for k, F := range noises {
			runs := 1500
			if F == 0 {
				runs = 1
			}
			m, se := paired(t, items, gpus, F, runs, uint64(tables*10+k))
			a := &res[k]
			a.sum += m
			a.n++
			if m > 2*se && m > 1e-9 {
				a.worse++
			}
			a.worst = math.Max(a.worst, m)
		}
	}
	fmt.Printf("%d random tables where a plan beats LPT by ≥ 0.1 %%; the planned queue adopts it in %d\n", tables, used)
	for k, F := range noises {
		a := res[k]
		fmt.Printf("±%2.0f%%: mean (planned − LPT)/bound %+.5f; worse in %d of %d (worst %+.5f)\n", 100*F, a.sum/float64(a.n), a.worse, a.n, a.worst)
	}
}
