//go:build eval

// The evidence for the calibration's tuning (schedule.Calibration), too slow for
// CI:
//
//	go test -tags eval -run EvalCalibration -v ./internal/simulate/
//
// Each line is one workload, one bias (every actual = weight × F, or per suite)
// and one noise model: the default policy's mean wall / bound calibrated and not
// (paired runs: both face the same durations), and the mean of their difference
// with its standard error. Negative is better than not calibrating.
package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

func TestEvalCalibration(t *testing.T) {
	type load struct {
		name string
		gpus int
	}
	loads := []load{{"te-mgpu-l3.weights", 8}, {"te-mixed.weights", 8}, {"te-gfx950-l3.weights", 4}, {"te-gfx950-l3.weights", 8},
		{"random-500.weights", 8}}
	if only := os.Getenv("EVAL_LOAD"); only != "" {
		loads = []load{{only, 8}}
	}
	biases := []struct {
		name string
		f    func(suite int) float64
	}{
		{"F=1", func(int) float64 { return 1 }},
		{"F=0.1", func(int) float64 { return 0.1 }},
		{"F=0.5", func(int) float64 { return 0.5 }},
		{"F=2", func(int) float64 { return 2 }},
		{"0.5/2 by suite", func(s int) float64 { return []float64{0.5, 2}[s%2] }},
		{"suite 0 at 0.3", func(s int) float64 { return []float64{0.3, 1}[min(s, 1)] }},
		{"all but suite 0 at 0.3", func(s int) float64 { return []float64{1, 0.3}[min(s, 1)] }},
		{"suite 0 at 3", func(s int) float64 { return []float64{3, 1}[min(s, 1)] }},
		{"all but suite 0 at 3", func(s int) float64 { return []float64{1, 3}[min(s, 1)] }},
	}
	noises := []Options{{}, {Noise: 0.2}, {Noise: 0.5}, {Noise: 0.5, Model: NoiseLognormal}}
	if os.Getenv("EVAL_QUICK") != "" {
		noises = []Options{{}, {Noise: 0.2}}
	}
	for _, l := range loads {
		in := loadFile(t, l.name)
		items, err := in.ItemsOn(l.gpus)
		if err != nil {
			t.Fatal(err)
		}
		setup, err := schedule.NewSetup(schedule.DefaultPolicy, items, l.gpus)
		if err != nil {
			t.Fatal(err)
		}
		width := schedule.Widths(items)
		for _, b := range biases {
			for _, o := range noises {
				runs := 400
				if o.Noise == 0 {
					runs = 1
				}
				rng := rand.New(rand.NewPCG(7, 7))
				dur := make([]float64, len(items))
				var sc, su, sd, sq float64
				for k := 0; k < runs; k++ {
					o.durations(rng, items, dur)
					for i := range dur {
						dur[i] *= b.f(in.Suite[i])
					}
					bound := schedule.BoundOfWidths(dur, width, l.gpus)
					c, err := schedule.ReplayBlocks(setup.Scheduler(), width, dur, l.gpus)
					if err != nil {
						t.Fatal(err)
					}
					u, err := schedule.ReplayBlocks(setup.Uncalibrated(), width, dur, l.gpus)
					if err != nil {
						t.Fatal(err)
					}
					sc += c.Wall / bound
					su += u.Wall / bound
					d := (c.Wall - u.Wall) / bound
					sd += d
					sq += d * d
				}
				n := float64(runs)
				m := sd / n
				se := math.Sqrt(math.Max(sq/n-m*m, 0) / n)
				model := "exact"
				if o.Noise > 0 {
					model = fmt.Sprintf("%s %.1f", map[string]string{"": "uniform", NoiseLognormal: "lognormal"}[o.Model], o.Noise)
				}
				t.Logf("%-22s %d GPUs  %-23s %-14s calibrated %.4f  not %.4f  diff %+.4f ± %.4f", l.name, l.gpus, b.name, model, sc/n, su/n, m, se)
			}
		}
	}
}
