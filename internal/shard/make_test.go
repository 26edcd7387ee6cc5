package shard_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/shard"
)

// TestMakePriors: a plan from an item list weighs the items its table lacks by the priors a run gives them
// (docs/weights.md, "Priors for unknown items"), and its shards' walls are those weights.
func TestMakePriors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "ci-weights")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"test_weights.gfx1.l1.txt": "s/test_a.x 100\ns/test_a.y 100\ns/test_b 10\ns/test_d 30\n",
		"test_weights.gfx2.l1.txt": "t/test_q 40\n", // no key in common: unscaled
		"s.conf":                   "s s.log list ci/s.sh\nt t.log list ci/t.sh\nu u.log list ci/u.sh\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A FIFO among the other tables is refused with a warning, never waited on, as a run refuses it.
	if err := syscall.Mkfifo(filepath.Join(dir, "test_weights.fifo.l1.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, arch, items string
		priors, unknown   int
		walls             []float64 // sorted
		summary           string
	}{
		{name: "its siblings' median", arch: "gfx1", items: "s\ttest_a.z\ns\ttest_b\n", priors: 1, walls: []float64{10, 100}, summary: "1 item(s) by a prior"},
		{name: "its suite's median", arch: "gfx1", items: "s\ttest_c\ns\ttest_b\n", priors: 1, walls: []float64{10, 65}, summary: "1 item(s) by a prior"},
		{name: "another table's weight", arch: "gfx1", items: "t\ttest_q\ns\ttest_b\n", priors: 1, walls: []float64{10, 40}, summary: "1 item(s) by a prior"},
		{name: "no prior: the mean of the others", arch: "gfx1", items: "u\tx\ns\ttest_b\ns\ttest_d\n", unknown: 1, walls: []float64{30, 30},
			summary: "1 item(s) without a weight, each planned as 20 s"},
		{name: "no table of its own: the others' priors", arch: "gfx3", items: "s\ttest_c\nt\ttest_r\n", priors: 2, walls: []float64{40, 65},
			summary: "2 item(s) by a prior"},
		{name: "every item known: no prior", arch: "gfx1", items: "s\ttest_a.x\ns\ttest_b\n", walls: []float64{10, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := filepath.Join(t.TempDir(), "items.tsv")
			if err := os.WriteFile(items, []byte(tc.items), 0o644); err != nil {
				t.Fatal(err)
			}
			req := shard.Request{Configs: config.Sources{Files: []string{filepath.Join(dir, "s.conf")}}, Shards: 2, GPUs: 1, ItemsPath: items,
				RepoRoot: root, Arch: tc.arch, Level: "1"}
			var warns []string
			p, sum, err := shard.Make(req, func(w string) { warns = append(warns, w) })
			if err != nil {
				t.Fatal(err)
			}
			var walls []float64
			for _, s := range p.Shards {
				walls = append(walls, s.Wall)
			}
			slices.Sort(walls)
			if p.Priors != tc.priors || p.Unknown != tc.unknown || !slices.Equal(walls, tc.walls) {
				t.Errorf("%d by a prior, %d unknown, walls %v; want %d, %d, %v\n%s", p.Priors, p.Unknown, walls, tc.priors, tc.unknown, tc.walls, sum)
			}
			if tc.summary != "" && !strings.Contains(sum, tc.summary) || tc.summary == "" && strings.Contains(sum, "by a prior") {
				t.Errorf("summary, want %q:\n%s", tc.summary, sum)
			}
			fifo := slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "test_weights.fifo.l1.txt not used for priors") })
			if fifo != (tc.priors+tc.unknown > 0) {
				t.Errorf("warnings %q: want one for the FIFO exactly when an item lacks a weight (nothing is read otherwise)", warns)
			}
			if tc.arch == "gfx3" && !slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "only the 2 item(s) with a prior") }) {
				t.Errorf("warnings %q lack that the table is missing", warns)
			}
		})
	}
}
