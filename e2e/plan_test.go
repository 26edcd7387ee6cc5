package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/shard"
)

// TestPlanFromARun: the demo runs and learns its table; plan then splits what it
// learned with no GPU and no --arch (the one table of the level under
// ci-weights/), and the run's own census (--items queue/items.tsv: it also holds
// nvfp4..ck, which this host's capability probe keeps from running, so that one
// has no weight): each item is on exactly one shard, and the plan is the same
// bytes when made again.
func TestPlanFromARun(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "demo")
	env := []string{"PATH=" + filepath.Join(dir, "bin") + ":" + os.Getenv("PATH")}
	if r := sgpu(t, dir, env, "run", "ci/sgpu.conf"); r.code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	ran := map[string]bool{}
	for _, line := range lines(readFile(t, filepath.Join(dir, "test-results", "logs", "queue", "timings.tsv"))) {
		f := strings.Split(line, "\t")
		if f[1] == record.Whole {
			f[1] = ""
		}
		ran[record.ItemID{Label: f[0], Tag: logdir.UnescapeField(f[1])}.Key()] = true
	}
	if len(ran) != 15 {
		t.Fatalf("the demo ran %d items, want 15", len(ran))
	}
	census := map[string]bool{"examples": true, "core": true} // the opaque suites
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "test-results", "logs", "queue", "items.tsv"))), "\n") {
		label, tag, _ := strings.Cut(line, "\t")
		census[record.ItemID{Label: label, Tag: tag}.Key()] = true // an opaque suite's row is "label<TAB>"
	}
	if len(census) != 16 || !census["torch/nvfp4..ck"] {
		t.Fatalf("census %v, want the 15 items that ran and torch/nvfp4..ck", census)
	}
	for _, tc := range []struct {
		args    []string
		want    map[string]bool
		unknown int // torch/nvfp4..ck, which never ran, has a prior, as a run weighs it
		priors  int
	}{
		{[]string{"plan", "--shards", "3", "--gpus", "2", "--out", "a.json", "ci/sgpu.conf"}, ran, 0, 0},
		{[]string{"plan", "--shards", "3", "--gpus", "2", "--items", "test-results/logs/queue/items.tsv", "--out", "b.json", "ci/sgpu.conf"}, census, 0, 1},
	} {
		args := tc.args
		// No GPU tool on PATH: plan must not need one.
		r := sgpu(t, dir, nil, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		out := args[len(args)-2]
		if got := readFile(t, filepath.Join(dir, out)); got != r.stdout {
			t.Errorf("%s: printed plan differs from the file", out)
		}
		p, err := shard.Read(strings.NewReader(r.stdout), out)
		if err != nil {
			t.Fatal(err)
		}
		if p.Weights.Arch != "gfx942" || p.Weights.Level != "99" || p.Weights.Keys != 15 || p.Unknown != tc.unknown || p.Priors != tc.priors {
			t.Errorf("%s: table %+v, %d unknown, %d by a prior; want the run's gfx942 level-99 table, 15 keys, %d unknown, %d by a prior", out,
				p.Weights, p.Unknown, p.Priors, tc.unknown, tc.priors)
		}
		on := map[string]int{}
		for _, s := range p.Shards {
			for _, k := range s.Keys {
				on[k]++
			}
		}
		for k := range tc.want {
			if on[k] != 1 {
				t.Errorf("%s: %q is on %d shards, want 1", out, k, on[k])
			}
		}
		if len(on) != len(tc.want) {
			t.Errorf("%s: %d keys planned, want %d", out, len(on), len(tc.want))
		}
		again := sgpu(t, dir, nil, args...)
		if again.code != 0 || again.stdout != r.stdout {
			t.Errorf("%s: a second plan of the same inputs differs", out)
		}
	}
}
