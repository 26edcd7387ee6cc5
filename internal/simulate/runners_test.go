package simulate

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// TestCompareRunnersSmall checks CompareRunners against walls worked out by hand.
func TestCompareRunnersSmall(t *testing.T) {
	// One runner of 4 GPUs: the two 4-GPU blocks one after the other (widest
	// first), then the two 40 s items: 60 s. Two runners: the blocks on one (20 s),
	// the long items on the other (40 s, the bound); LPT alone pairs a block with
	// a long item on each (50 s). Three runners: LPT puts a block with a long
	// item again; the refinement parts them (a runner of blocks, 20 s).
	in := load(t, "m/a 10 gpus=4\nm/b 10 gpus=4\ns/c 40\ns/d 40\n")
	rep, err := CompareRunners(context.Background(), in, Options{GPUs: 4, Runs: 10, Seed: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ wall, fastest, bound, lpt float64 }{{60, 60, 40, 60}, {40, 20, 40, 50}, {40, 20, 40, 50}}
	for k, w := range want {
		row := rep.Rows[k]
		if row.Runners != k+1 || row.Wall.Mean != w.wall || row.Fastest.Mean != w.fastest || row.Bound.Mean != w.bound || row.LPTWall != w.lpt || row.Wall.n != 1 {
			t.Errorf("%d runners: %+v, want wall %g fastest %g bound %g LPT %g in one run", k+1, row, w.wall, w.fastest, w.bound, w.lpt)
		}
	}
	if got := rep.Advice(1); got != "a 2nd runner would save 20 s (33.3 %): 40 s instead of 60 s" {
		t.Errorf("advice on 1 runner: %q", got)
	}
	if got := rep.Advice(2); got != "a 3rd runner would save nothing: the largest item, s/c (40 s), sets the wall clock; split it to go further" {
		t.Errorf("advice on 2 runners: %q", got)
	}
}

func TestCompareRunnersErrors(t *testing.T) {
	in := load(t, "a/x 5 gpus=8\nb 1\n")
	_, err := CompareRunners(context.Background(), in, Options{GPUs: 4, Runs: 1}, 2)
	var we *schedule.WidthError
	if !errors.As(err, &we) || we.Key != "a/x" {
		t.Errorf("err %v, want a WidthError naming a/x", err)
	}
	for _, k := range []int{0, 257} {
		if _, err := CompareRunners(context.Background(), in, Options{GPUs: 8, Runs: 1}, k); err == nil || !strings.HasPrefix(err.Error(), "--runners") {
			t.Errorf("%d runners: %v", k, err)
		}
	}
	if _, err := CompareRunners(context.Background(), in, Options{GPUs: 0, Runs: 1}, 2); err == nil {
		t.Error("0 GPUs: no error")
	}
}

// TestRunnersGolden: `simulate --runners 4 --gpus 8` on the committed workloads,
// the figures of docs/performance.md ("Several runners").
func TestRunnersGolden(t *testing.T) {
	tests := []struct {
		golden, table string
		o             Options
		runners       int
	}{
		{"te-8gpu-runners4.golden", "te-gfx950-l3.weights", Options{GPUs: 8, Runs: 1, Seed: 1}, 4},
		{"te-core-split-8gpu-runners4.golden", "../adapters/simulate/te-l3-core-split.weights", Options{GPUs: 8, Runs: 1, Seed: 1}, 4},
		{"te-mixed-8gpu-runners4.golden", "te-mixed.weights", Options{GPUs: 8, Runs: 1, Seed: 1}, 4},
		{"te-8gpu-runners3-noise20.golden", "te-gfx950-l3.weights", Options{GPUs: 8, Noise: 0.2, Runs: 100, Seed: 1}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			rep, err := CompareRunners(context.Background(), loadFile(t, tc.table), tc.o, tc.runners)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range rep.Rows {
				if row.Ratio.Min < 1-1e-9 {
					t.Errorf("%d runners beat the bound: %g", row.Runners, row.Ratio.Min)
				}
			}
			var got bytes.Buffer
			if err := rep.Write(&got); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join(testdata, tc.golden), got.Bytes(), *update)
		})
	}
}
