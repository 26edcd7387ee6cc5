package shard_test

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/simulate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// items reads "key seconds [gpus]" lines; seconds "?" is an item without a weight.
func items(t testing.TB, spec string) []schedule.Item {
	t.Helper()
	var out []schedule.Item
	for _, line := range strings.Split(strings.TrimSpace(spec), "\n") {
		f := strings.Fields(line)
		id := record.ParseItemID(f[0])
		label, tag := id.Label, id.Tag
		it := schedule.Item{ItemID: record.ItemID{Label: label, Tag: tag}, Seq: len(out), GPUs: 1, Known: f[1] != "?"}
		if it.Known {
			w, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			it.Weight = w
		} else {
			it.Weight = schedule.DefaultWeight
		}
		if len(f) > 2 {
			it.GPUs, _ = strconv.Atoi(f[2])
		}
		out = append(out, it)
	}
	return out
}

// loadTable reads a committed simulate table (its gpus= column too).
func loadTable(t testing.TB, path string, gpus int) []schedule.Item {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, _, err := simulate.Load(f, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	its, err := in.ItemsOn(gpus)
	if err != nil {
		t.Fatal(err)
	}
	return its
}

const (
	teTable    = "../../testdata/simulate/te-gfx950-l3.weights"
	mixedTable = "../../testdata/simulate/te-mixed.weights"
	splitTable = "../../testdata/adapters/simulate/te-l3-core-split.weights"
)

// keysOf lists each shard's keys, sorted.
func keysOf(its []schedule.Item, a *shard.Assignment) [][]string {
	out := make([][]string, a.Shards)
	for s := range out {
		out[s] = []string{}
	}
	for i, s := range a.Of {
		out[s] = append(out[s], its[i].Key())
	}
	for _, k := range out {
		slices.Sort(k)
	}
	return out
}

func TestAssign(t *testing.T) {
	tests := []struct {
		name         string
		spec         string
		shards, gpus int
		keys         [][]string
		walls        []float64
		bound        float64
		moves        bool // the refinement changed the LPT split
		lptWall      float64
		unknown      int
		estimate     float64
	}{
		{
			// By cost 5 4 3 3 2 1: a→1, b→2, c→2 (4 < 5), d→1, e→2, f→1.
			name: "balance", spec: "s/a 5\ns/b 4\ns/c 3\ns/d 3\ns/e 2\ns/f 1", shards: 2, gpus: 1,
			keys: [][]string{{"s/a", "s/d", "s/f"}, {"s/b", "s/c", "s/e"}}, walls: []float64{9, 9}, bound: 9, lptWall: 9,
		},
		{
			name: "ties go by key, then to the lowest shard", spec: "s/d 5\ns/c 5\ns/b 5\ns/a 5", shards: 2, gpus: 1,
			keys: [][]string{{"s/a", "s/c"}, {"s/b", "s/d"}}, walls: []float64{10, 10}, bound: 10, lptWall: 10,
		},
		{
			// Equal GPU-seconds, unequal shapes: LPT pairs a 4-GPU block with a
			// 40 s item on each shard (50 s each: the block cannot overlap it);
			// swapping puts the blocks together (20 s) and the long items
			// together (40 s, the bound).
			name: "widths: the refinement pays", spec: "m/a 10 4\nm/b 10 4\ns/c 40\ns/d 40", shards: 2, gpus: 4,
			keys: [][]string{{"m/a", "m/b"}, {"s/c", "s/d"}}, walls: []float64{20, 40}, bound: 40, moves: true, lptWall: 50,
		},
		{
			name: "more shards than items: empty shards", spec: "a 3\nb/x 2", shards: 4, gpus: 2,
			keys: [][]string{{"a"}, {"b/x"}, {}, {}}, walls: []float64{3, 2, 0, 0}, bound: 3, lptWall: 3,
		},
		{
			// c and d have no weight: each counts as the mean, 15 s.
			name: "unknown items weigh the mean", spec: "s/a 10\ns/b 20\ns/c ?\ns/d ?", shards: 2, gpus: 1,
			keys: [][]string{{"s/a", "s/b"}, {"s/c", "s/d"}}, walls: []float64{30, 30}, bound: 30, lptWall: 30, unknown: 2, estimate: 15,
		},
		{
			name: "no weight at all: balanced by count", spec: "s/a ?\ns/b ?\ns/c ?", shards: 2, gpus: 2,
			keys: [][]string{{"s/a", "s/c"}, {"s/b"}}, walls: []float64{1, 1}, bound: 1, lptWall: 1, unknown: 3, estimate: 1,
		},
		{
			// The largest item sets the bound: its shard takes as much work as
			// the others, and the wall is the item.
			name: "a dominant item", spec: "core 100\nt/a 10\nt/b 10\nt/c 10\nt/d 10", shards: 2, gpus: 2,
			keys: [][]string{{"core"}, {"t/a", "t/b", "t/c", "t/d"}}, walls: []float64{100, 20}, bound: 100, lptWall: 100,
		},
		{
			name: "one shard is the whole run", spec: "s/a 7\ns/b 5\ns/c 4", shards: 1, gpus: 2,
			keys: [][]string{{"s/a", "s/b", "s/c"}}, walls: []float64{9}, bound: 8, lptWall: 9,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			its := items(t, tc.spec)
			a, err := shard.Assign(its, tc.shards, tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.keys, keysOf(its, a)); diff != "" {
				t.Errorf("keys by shard (-want +got):\n%s", diff)
			}
			if !slices.Equal(a.Wall, tc.walls) || a.Bound != tc.bound || a.LPTWall != tc.lptWall {
				t.Errorf("walls %v bound %g LPT %g; want %v, %g, %g", a.Wall, a.Bound, a.LPTWall, tc.walls, tc.bound, tc.lptWall)
			}
			if (a.Moves > 0) != tc.moves {
				t.Errorf("%d moves, want moves %v", a.Moves, tc.moves)
			}
			if a.Unknown != tc.unknown || a.Estimate != tc.estimate {
				t.Errorf("unknown %d at %g s, want %d at %g s", a.Unknown, a.Estimate, tc.unknown, tc.estimate)
			}
			checkCounts(t, its, a)
		})
	}
}

// checkCounts: Work and Count agree with Of, and no shard beats its own bound.
func checkCounts(t *testing.T, its []schedule.Item, a *shard.Assignment) {
	t.Helper()
	work := make([]float64, a.Shards)
	count := make([]int, a.Shards)
	longest := make([]float64, a.Shards)
	w := func(it schedule.Item) float64 {
		if it.Known {
			return it.Weight
		}
		return a.Estimate
	}
	for i, s := range a.Of {
		work[s] += float64(its[i].Width()) * w(its[i])
		count[s]++
		longest[s] = max(longest[s], w(its[i]))
	}
	for s := range work {
		if math.Abs(work[s]-a.Work[s]) > 1e-6 || count[s] != a.Count[s] {
			t.Errorf("shard %d: work %g count %d, the items say %g and %d", s+1, a.Work[s], a.Count[s], work[s], count[s])
		}
		if b := max(work[s]/float64(a.GPUs), longest[s]); a.Wall[s] < b-1e-6 {
			t.Errorf("shard %d: predicted %g, below its own bound %g", s+1, a.Wall[s], b)
		}
	}
	if m := slices.Max(a.Wall); m < a.Bound-1e-6 {
		t.Errorf("slowest shard %g below the bound %g", m, a.Bound)
	}
}

func TestAssignErrors(t *testing.T) {
	its := items(t, "s/a 5 2\nwide/x 3 8\ns/b 1")
	_, err := shard.Assign(its, 2, 4)
	var we *schedule.WidthError
	if !errors.As(err, &we) || we.Key != "wide/x" || we.Width != 8 || we.Pool != 4 {
		t.Fatalf("err %v, want a WidthError naming wide/x (8 GPUs on 4)", err)
	}
	for _, tc := range []struct {
		shards, gpus int
		want         string
	}{
		{0, 4, "0 shards: want from 1 to 256"},
		{257, 4, "257 shards: want from 1 to 256"},
		{2, 0, "0 GPUs per shard: want at least 1"},
	} {
		if _, err := shard.Assign(its, tc.shards, tc.gpus); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%d shards of %d GPUs: %v, want %q…", tc.shards, tc.gpus, err, tc.want)
		}
	}
}

// TestAssignTables: the committed workloads, 1–4 shards of 8 GPUs. The figures are
// those of docs/performance.md: a refinement is kept only when it pays.
func TestAssignTables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		table string
		walls []float64 // slowest shard, 1 … 4 shards
	}{
		{teTable, []float64{1313, 1251, 1251, 1251}},
		{splitTable, []float64{1312.2, 675, 675, 675}},
		{mixedTable, []float64{4364, 2188, 1463, 1251}},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.table), func(t *testing.T) {
			its := loadTable(t, tc.table, 8)
			for k := 1; k <= 4; k++ {
				a, err := shard.Assign(its, k, 8)
				if err != nil {
					t.Fatal(err)
				}
				checkCounts(t, its, a)
				if got := math.Round(slices.Max(a.Wall)*100) / 100; got != tc.walls[k-1] {
					t.Errorf("%d shards: slowest %g, want %g", k, got, tc.walls[k-1])
				}
				if a.Moves > 0 && !(slices.Max(a.Wall) < a.LPTWall) {
					t.Errorf("%d shards: %d moves kept but %g is no better than LPT's %g", k, a.Moves, slices.Max(a.Wall), a.LPTWall)
				}
			}
		})
	}
}

// TestPlanDeterministic: the same inputs give the same bytes, every time.
func TestPlanDeterministic(t *testing.T) {
	t.Parallel()
	for _, table := range []string{teTable, mixedTable, splitTable} {
		var first []byte
		for range 2 {
			its := loadTable(t, table, 8)
			a, err := shard.Assign(its, 3, 8)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := shard.New(its, a, shard.Identity{Store: table}, "weights").Write(&b); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b.Bytes()
			} else if !bytes.Equal(first, b.Bytes()) {
				t.Fatalf("%s: two plans of the same inputs differ", table)
			}
		}
	}
}

// BenchmarkAssign100k: 100,000 items over 4 shards of 8 GPUs, all on one GPU, and
// one in ten on 2–8 GPUs.
func BenchmarkAssign100k(b *testing.B) {
	for _, mixed := range []bool{false, true} {
		its := make([]schedule.Item, 100_000)
		for i := range its {
			its[i] = schedule.Item{ItemID: record.ItemID{Label: "s" + strconv.Itoa(i%6), Tag: "t" + strconv.Itoa(i)}, Weight: float64(1 + (i*7919)%600), Known: true, Seq: i, GPUs: 1}
			if mixed && i%10 == 0 {
				its[i].GPUs = 2 + i%7
			}
		}
		name := "single"
		if mixed {
			name = "mixed"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := shard.Assign(its, 4, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
