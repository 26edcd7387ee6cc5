package simulate

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"github.com/rocm/sgpu-queue/internal/golden"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const testdata = "../../testdata/simulate"

func load(t testing.TB, text string) *Input {
	t.Helper()
	in, _, err := Load(strings.NewReader(text), "t.weights")
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		keys   []string // in order
		suites []string
		suite  []int
		warns  int
		err    string
	}{
		{
			name: "file order, suites by first appearance",
			text: "# c\ncore 12\ntorch/a 5\njax/x 7\n\ntorch/b 9.5\nexamples 3\n",
			keys: []string{"core", "torch/a", "jax/x", "torch/b", "examples"}, suites: []string{"core", "torch", "jax", "examples"},
			suite: []int{0, 1, 2, 1, 3},
		},
		{
			name: "duplicate keeps its first place, the later value",
			text: "a/x 1\nb 2\na/x 3\n", keys: []string{"a/x", "b"}, suites: []string{"a", "b"}, suite: []int{0, 1}, warns: 1,
		},
		{
			name: "corrupt lines skipped",
			text: "a/x ten\na/y 4\n\x00 5\nb -1\n", keys: []string{"a/y"}, suites: []string{"a"}, suite: []int{0}, warns: 3,
		},
		{name: "tags with slashes and tabs", text: "a/x/y\t2\r\n\xef\xbb\xbfa/z 1\n", keys: []string{"a/x/y", "a/z"}, suites: []string{"a"}, suite: []int{0, 0}},
		{name: "empty", text: "", err: "no \"<key> <seconds>\" line"},
		{name: "only comments", text: "# nothing\n\n", err: "no \"<key> <seconds>\" line"},
		{name: "all corrupt", text: "garbage\n", warns: 1, err: "no \"<key> <seconds>\" line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, warns, err := Load(strings.NewReader(tc.text), "t.weights")
			if len(warns) != tc.warns {
				t.Errorf("warnings %q, want %d", warns, tc.warns)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "t.weights") {
					t.Fatalf("error %v, want one naming t.weights and %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k, it := range in.Items {
				keys = append(keys, it.Key())
				if it.Seq != k || !it.Known {
					t.Errorf("item %d: Seq %d, Known %v", k, it.Seq, it.Known)
				}
			}
			if !slices.Equal(keys, tc.keys) || !slices.Equal(in.Suites, tc.suites) || !slices.Equal(in.Suite, tc.suite) {
				t.Errorf("keys %q suites %q %v; want %q %q %v", keys, in.Suites, in.Suite, tc.keys, tc.suites, tc.suite)
			}
		})
	}
}

func TestStatic(t *testing.T) {
	tests := []struct {
		name  string
		suite []int
		dur   []float64
		slots int
		want  float64
	}{
		{"one suite per GPU", []int{0, 0, 1, 2}, []float64{3, 4, 5, 1}, 4, 7},
		{"more suites than GPUs: k mod N", []int{0, 1, 2, 3, 4}, []float64{1, 2, 3, 4, 5}, 2, 9}, // GPU0: 1+3+5
		{"one GPU", []int{0, 1, 1}, []float64{1, 2, 3}, 1, 6},
		{"no items", nil, nil, 3, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Static(tc.suite, tc.dur, tc.slots); got != tc.want {
				t.Errorf("Static = %g, want %g", got, tc.want)
			}
		})
	}
}

// TestCompareSmall checks Compare against hand-computed walls.
func TestCompareSmall(t *testing.T) {
	tests := []struct {
		name  string
		table string
		gpus  int
		bound float64
		walls map[string]float64 // by policy (unordered: its mean)
	}{
		{
			// static: a = 3+2 on GPU 0, b = 2 on GPU 1 → 5. LPT: 3 | 2, 2 → 4.
			name: "3 items on 2 GPUs", table: "a/x 3\na/y 2\nb 2\n", gpus: 2, bound: 3.5,
			walls: map[string]float64{RowStatic: 5, RowLPT: 4, RowPlanned: 4},
		},
		{
			// Every order puts two of the three 2 s items on one GPU.
			name: "ties", table: "a/x 2\nb/y 2\nc/z 2\n", gpus: 2, bound: 3,
			walls: map[string]float64{RowStatic: 4, RowUnordered: 4, RowLPT: 4, RowPlanned: 4},
		},
		{
			name: "more GPUs than items", table: "a/x 5\na/y 1\nb 2\n", gpus: 8, bound: 5,
			walls: map[string]float64{RowStatic: 6, RowUnordered: 5, RowLPT: 5, RowPlanned: 5},
		},
		{
			name: "one GPU", table: "a/x 5\na/y 1\nb 2\n", gpus: 1, bound: 8,
			walls: map[string]float64{RowStatic: 8, RowUnordered: 8, RowLPT: 8, RowPlanned: 8},
		},
		{
			// Graham's table: LPT 15, the planner finds 12; static is one suite.
			name: "planner beats LPT", table: "g/a 7\ng/b 7\ng/c 6\ng/d 6\ng/e 5\ng/f 5\ng/g 4\ng/h 4\ng/i 4\n", gpus: 4, bound: 12,
			walls: map[string]float64{RowStatic: 48, RowLPT: 15, RowPlanned: 12},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Compare(context.Background(), load(t, tc.table), Options{GPUs: tc.gpus, Runs: 20, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Bound.Mean != tc.bound {
				t.Errorf("bound %g, want %g", rep.Bound.Mean, tc.bound)
			}
			for _, row := range rep.Rows {
				want, ok := tc.walls[row.Policy]
				if !ok {
					continue
				}
				if row.Wall.Mean != want {
					t.Errorf("%s: wall %g, want %g", row.Policy, row.Wall.Mean, want)
				}
				if r := row.Ratio.Mean; math.Abs(r-want/tc.bound) > 1e-12 {
					t.Errorf("%s: ratio %g, want %g", row.Policy, r, want/tc.bound)
				}
				static := tc.walls[RowStatic]
				if math.Abs(row.SpeedUp-static/want) > 1e-12 {
					t.Errorf("%s: speed-up %g, want %g", row.Policy, row.SpeedUp, static/want)
				}
			}
			if rep.Rows[1].Runs != 20 || rep.Rows[2].Runs != 1 {
				t.Errorf("runs: unordered %d, lpt %d; want 20 and 1 (exact weights)", rep.Rows[1].Runs, rep.Rows[2].Runs)
			}
		})
	}
}

// TestCompareNoise: with noise every policy runs K times against the same
// durations, and a seed fixes the figures.
func TestCompareNoise(t *testing.T) {
	in := load(t, "a/x 30\na/y 20\nb/z 10\nc 25\n")
	for _, model := range []string{NoiseUniform, NoiseLognormal} {
		o := Options{GPUs: 2, Noise: 0.3, Model: model, Runs: 50, Seed: 7}
		a, err := Compare(context.Background(), in, o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Compare(context.Background(), in, o)
		var wa, wb bytes.Buffer
		a.Write(&wa)
		b.Write(&wb)
		if wa.String() != wb.String() {
			t.Errorf("%s: same seed, different figures", model)
		}
		for _, row := range a.Rows {
			if row.Runs != 50 || !row.Varies || row.Wall.Min > row.Wall.Mean || row.Wall.Mean > row.Wall.Max {
				t.Errorf("%s %s: runs %d, wall %+v", model, row.Policy, row.Runs, row.Wall)
			}
			if row.Ratio.Min < 1-1e-12 {
				t.Errorf("%s %s: a run beat its lower bound: %g", model, row.Policy, row.Ratio.Min)
			}
		}
		if a.Work.Min == a.Work.Max {
			t.Errorf("%s: work did not vary", model)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	in := load(t, "a 1\n")
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{GPUs: 0, Runs: 1}, "--gpus 0"},
		{Options{GPUs: 1, Runs: 0}, "--runs 0"},
		{Options{GPUs: 1, Runs: 1, Noise: 1.5}, "--noise 1.5"},
		{Options{GPUs: 1, Runs: 1, Noise: math.NaN()}, "--noise NaN"},
		{Options{GPUs: 1, Runs: 1, Model: "normal"}, `--noise-model "normal"`},
	} {
		if _, err := Compare(context.Background(), in, tc.o); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q…", tc.o, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compare(ctx, in, Options{GPUs: 1, Runs: 1}); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestGolden: the simulate output on the TE table, the seed's analysis table.
func TestGolden(t *testing.T) {
	tests := []struct {
		golden string
		table  string
		o      Options
	}{
		{"te-4gpu.golden", "te-gfx950-l3.weights", Options{GPUs: 4, Runs: 1000, Seed: 1}},
		{"te-8gpu.golden", "te-gfx950-l3.weights", Options{GPUs: 8, Runs: 1000, Seed: 1}},
		{"te-4gpu-noise20.golden", "te-gfx950-l3.weights", Options{GPUs: 4, Noise: 0.2, Runs: 1000, Seed: 1}},
		{"te-4gpu-noise50-lognormal.golden", "te-gfx950-l3.weights", Options{GPUs: 4, Noise: 0.5, Model: NoiseLognormal, Runs: 1000, Seed: 1}},
		{"dominant-200-8gpu.golden", "dominant-200.weights", Options{GPUs: 8, Runs: 100, Seed: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			f, err := os.Open(filepath.Join(testdata, tc.table))
			if err != nil {
				t.Fatal(err)
			}
			in, warns, err := Load(f, tc.table)
			f.Close()
			if err != nil || len(warns) > 0 {
				t.Fatal(err, warns)
			}
			rep, err := Compare(context.Background(), in, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := rep.Write(&got); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join(testdata, tc.golden), got.Bytes(), *update)
		})
	}
}

// TestTETable pins the seed's analysis figures on 4 GPUs (SPEC §11).
func TestTETable(t *testing.T) {
	f, err := os.Open(filepath.Join(testdata, "te-gfx950-l3.weights"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, _, err := Load(f, "te")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(context.Background(), in, Options{GPUs: 4, Runs: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	walls := map[string]float64{}
	for _, r := range rep.Rows {
		walls[r.Policy] = r.Wall.Mean
	}
	switch {
	case len(in.Items) != 80 || rep.Work.Mean != 10497 || rep.Bound.Mean != 2624.25:
		t.Errorf("%d items, work %g, bound %g; want 80, 10497, 2624.25", len(in.Items), rep.Work.Mean, rep.Bound.Mean)
	case walls[RowStatic] != 6935 || walls[RowLPT] != 2639:
		t.Errorf("static %g, LPT %g; want 6935 and 2639", walls[RowStatic], walls[RowLPT])
	case walls[RowUnordered] < 2800 || walls[RowUnordered] > 3000:
		t.Errorf("unordered mean %g, want about 2900", walls[RowUnordered])
	case walls[RowPlanned] > 1.003*2624.25:
		t.Errorf("planned %g, want at most 1.003 × the bound", walls[RowPlanned])
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range []string{"core 1251.0\ntorch/a 675\n", "# x\n\na/b 1\na/b 2\n", "a\t1\r\nb 1e3\n", "\xef\xbb\xbfa 1", "a/ 1\n/b 2\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, _, err := Load(bytes.NewReader(data), "fuzz")
		if err != nil {
			if in != nil || !strings.Contains(err.Error(), "fuzz") {
				t.Fatalf("error %v with input %v", err, in)
			}
			return
		}
		seen := map[string]bool{}
		for k, it := range in.Items {
			if seen[it.Key()] || it.Seq != k || in.Suites[in.Suite[k]] != it.Label || it.Weight < 0 || math.IsNaN(it.Weight) {
				t.Fatalf("item %d: %+v (suite %d)", k, it, in.Suite[k])
			}
			seen[it.Key()] = true
		}
		// Whatever loads can be simulated.
		if _, err := Compare(context.Background(), in, Options{GPUs: 3, Runs: 2, Noise: 0.2, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkCompare100k is `simulate` on 100,000 items, 8 GPUs, exact weights, one
// shuffle: every policy once (planning included).
func BenchmarkCompare100k(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&sb, "suite%d/test_%06d %d\n", i%6, i, 1+(i*7919)%600)
	}
	in := load(b, sb.String())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Compare(context.Background(), in, Options{GPUs: 8, Runs: 1, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
