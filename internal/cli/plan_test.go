package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/shard"
)

const teConf = "../../testdata/plan/te.conf"

// repo makes a repo root holding the TE table at its default place for each arch
// given, at level 3.
func repo(t *testing.T, arches ...string) string {
	t.Helper()
	root := t.TempDir()
	data, err := os.ReadFile(teTable)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arches {
		p := filepath.Join(root, "ci-weights", "test_weights."+a+".l3.txt")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanTE: TE's level-3 table over 3 runners of 8 GPUs, pinned as a golden file
// (the plan's format is a contract between the plan job and the shard jobs); the
// file written and the plan printed are the same bytes, run after run.
func TestPlanTE(t *testing.T) {
	dir := t.TempDir()
	var outs []string
	for k := range 2 {
		out := filepath.Join(dir, "plan"+string(rune('a'+k))+".json")
		code, stdout, stderr := runCommand(t, nil, "plan", "--shards", "3", "--gpus", "8", "--weights", teTable, "--arch", "gfx950", "--level", "3", "--out", out, teConf)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		file, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(file) != stdout {
			t.Error("the plan printed differs from the plan written")
		}
		outs = append(outs, stdout)
		for _, want := range []string{
			"plan: 80 items of 4 suites from weights, 3 shards of 8 GPUs",
			"shard 1:   26 items, 3487 GPU-seconds, predicted wall clock 1251 s",
			"predicted wall clock 1251 s, lower bound max(GPU-seconds/24, largest) = 1251 s, set by the largest item, core",
			"plan: wrote " + out,
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	}
	if outs[0] != outs[1] {
		t.Error("two plans of the same inputs differ")
	}
	golden.Check(t, "../../testdata/plan/te-3x8.json", []byte(outs[0]), *update)
	p, err := shard.Read(strings.NewReader(outs[0]), "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	if p.Items != 80 || len(p.Shards) != 3 || p.Wall != 1251 || p.Bound != 1251 || p.Weights.Keys != 80 || p.Weights.Arch != "gfx950" {
		t.Errorf("plan %+v", p)
	}
}

func TestPlanCmd(t *testing.T) {
	one := repo(t, "gfx950")
	two := repo(t, "gfx942", "gfx950")
	none := t.TempDir()
	items := write(t, t.TempDir(), "items.tsv", "torch\ttest_a.py\ntorch\ttest b[1]\njax\ttest_c\ngone\tx\n")
	badItems := write(t, t.TempDir(), "bad items.tsv", "torch\ttest_a.py\ntorch test_b.py\n")
	badConf := write(t, t.TempDir(), "bad.conf", "torch torch.log parallel ci/x.sh\n")
	// TE's multi-GPU suites beside the single-GPU ones (docs/adapters.md, mode options).
	mgpuConf := write(t, t.TempDir(), "mgpu.conf", "torch torch.log list ci/pytorch.sh\ntorch-mgpu torch_mgpu.log list,gpus=2 ci/pytorch.sh\njax-mgpu jax_mgpu.log list,gpus=all ci/jax.sh\n")
	mgpuItems := write(t, t.TempDir(), "mgpu.tsv", "torch\ta\ntorch-mgpu\tdist.b\njax-mgpu\tdist.c\n")
	ctestConf := write(t, t.TempDir(), "ctest.conf", "gpu gpu.log ctest,gpus=2 build\n")
	ctestItems := write(t, t.TempDir(), "ctest.tsv", "gpu\tt\n")
	tests := []cmdCase{
		{
			name: "the table at its default place, the arch from its name", args: []string{"--shards", "2", "--gpus", "8", "--level", "3", "--repo-root", one, teConf},
			stdout: []string{`"store": "` + filepath.Join(one, "ci-weights", "test_weights.gfx950.l3.txt") + `"`, `"arch": "gfx950"`, `"level": "3"`},
			stderr: []string{"plan: 80 items of 4 suites from weights, 2 shards of 8 GPUs"},
		},
		{
			name: "the level from TEST_LEVEL, the rest from SGPU_*", env: map[string]string{"TEST_LEVEL": "3", "SGPU_SHARDS": "4", "SGPU_GPUS": "0,1,2,3", "SGPU_REPO_ROOT": one},
			args:   []string{teConf},
			stdout: []string{`"level": "3"`, `"gpus_per_shard": 4`, `"shard": 4`},
		},
		{
			name: "--items: balanced by count without a table, other suites left out", args: []string{"--shards", "2", "--gpus", "2", "--arch", "gfx1", "--level", "3", "--repo-root", none, "--items", items, teConf},
			stdout: []string{`"items_from": "` + items + `"`, `"unknown_items": 5`, `"torch/test b[1]"`, `"sha256": ""`},
			stderr: []string{"warning: 1 item(s) of suites not in the config are left out: gone", "no item has a weight, so the shards are balanced by count", "5 item(s) without a weight, each planned as 1 s"},
		},
		{
			name: "GPU counts from the mode options", args: []string{"--shards", "2", "--gpus", "4", "--weights", teTable, "--items", mgpuItems, mgpuConf},
			// 1 + 2 + 4 GPUs of 55 s each: torch/a by its suite's median (a prior, as a run weighs it), the two items of suites
			// the table lacks by the mean of the others.
			stdout: []string{`"work_gpu_seconds": 385,`, `"prior_items": 1,`, `"unknown_items": 2,`, `"torch-mgpu/dist.b"`, `"jax-mgpu/dist.c"`},
			stderr: []string{"1 item(s) by a prior", "2 item(s) without a weight, each planned as 55 s"},
		},
		{
			// As run clamps it (schedule.FitWidths): the same warning, and a plan.
			name: "a suite wider than a runner", args: []string{"--shards", "2", "--gpus", "1", "--weights", teTable, "--items", mgpuItems, mgpuConf},
			stdout: []string{`"torch-mgpu/dist.b"`, `"gpus_per_shard": 1`},
			stderr: []string{`warning: suite "torch-mgpu" says gpus=2 at ` + mgpuConf + `:2 but the pool has 1: its 1 item run on 1, so cases that need more skip`},
		},
		{
			// A tool that takes its count as given cannot run on fewer: refused, as run refuses it.
			name: "a ctest suite wider than a runner", args: []string{"--shards", "2", "--gpus", "1", "--weights", teTable, "--items", ctestItems, ctestConf}, code: 2,
			stderr: []string{"sgpu-queue plan: item gpu/t needs 2 GPUs but the pool has 1 (its own metadata asks for 2 (a ctest test's RESOURCE_GROUPS)): lower its count, " +
				"or run on more GPUs (--gpus); each shard has --gpus 1"},
		},
		{name: "help", args: []string{"--help"}, stdout: []string{"Usage: sgpu-queue plan"}},
		{name: "no shards", args: []string{"--gpus", "8", teConf}, code: 2, stderr: []string{"sgpu-queue plan: no --shards given: say how many runners to split the items over, e.g. --shards 3"}},
		{name: "zero shards", args: []string{"--shards", "0", "--gpus", "8", teConf}, code: 2, stderr: []string{`--shards "0": want a whole number of runners from 1 to 256`}},
		{name: "too many shards", args: []string{"--shards", "257", "--gpus", "8", teConf}, code: 2, stderr: []string{`--shards "257"`}},
		{name: "no gpus", args: []string{"--shards", "2", teConf}, code: 2, stderr: []string{"no --gpus given"}},
		{name: "bad gpus", args: []string{"--shards", "2", "--gpus", "eight", teConf}, code: 2, stderr: []string{`--gpus "eight"`}},
		{name: "bad level", args: []string{"--shards", "2", "--gpus", "8", "--level", "../3", teConf}, code: 2, stderr: []string{`--level "../3": want a test level such as 1, 2 or 3`}},
		{
			name: "no arch, two tables", args: []string{"--shards", "2", "--gpus", "8", "--level", "3", "--repo-root", two, teConf}, code: 2,
			stderr: []string{"no --arch given: plan sees no GPU, so it goes by the tables of level 3 under " + filepath.Join(two, "ci-weights") + ", and found gfx942, gfx950; pass --arch (e.g. gfx942) or --weights FILE"},
		},
		{name: "no arch, no table", args: []string{"--shards", "2", "--gpus", "8", "--level", "3", "--repo-root", none, teConf}, code: 2, stderr: []string{"and found none; pass --arch"}},
		{
			name: "the table missing", args: []string{"--shards", "2", "--gpus", "8", "--level", "3", "--arch", "gfx942", "--repo-root", one, teConf}, code: 2,
			stderr: []string{"weight table " + filepath.Join(one, "ci-weights", "test_weights.gfx942.l3.txt") + " not found: plan lists the items from the last run's table"},
		},
		{name: "a bad items line", args: []string{"--shards", "2", "--gpus", "8", "--weights", teTable, "--items", badItems, teConf}, code: 2,
			stderr: []string{`sgpu-queue plan: ` + badItems + `:2: label "torch test_b.py" holds a space`}},
		{name: "items missing", args: []string{"--shards", "2", "--gpus", "8", "--weights", teTable, "--items", "/nonexistent/items.tsv", teConf}, code: 2, stderr: []string{"--items: open /nonexistent/items.tsv"}},
		{name: "a bad config", args: []string{"--shards", "2", "--gpus", "8", "--weights", teTable, badConf}, code: 2, stderr: []string{badConf + `:1: suite "torch": unknown mode "parallel"`}},
		{name: "no config", args: []string{"--shards", "2", "--gpus", "8"}, code: 2, stderr: []string{"sgpu-queue plan: no CONFIG given"}},
		{name: "out not writable", args: []string{"--shards", "2", "--gpus", "8", "--weights", teTable, "--out", filepath.Join(items, "plan.json"), teConf}, code: 2,
			stderr: []string{"sgpu-queue plan: --out: " + filepath.Join(items, "plan.json") + ": not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.code == 0 && tc.name != "help" {
				args = append([]string{"--out", filepath.Join(t.TempDir(), "plan.json")}, args...)
			}
			code, out, errs := runCommand(t, tc.env, append([]string{"plan"}, args...)...)
			tc.check(t, code, out, errs)
		})
	}
}

// cmdCase is one command line, its exit code and strings its output must hold.
type cmdCase struct {
	name   string
	env    map[string]string
	args   []string
	code   int
	stdout []string
	stderr []string
}

// check checks a command's exit code, that stdout and stderr hold the strings
// wanted, and that a usage error is one line (or comes with the usage).
func (tc cmdCase) check(t *testing.T, code int, out, errs string) {
	t.Helper()
	if code != tc.code {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
	}
	for _, s := range tc.stdout {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	for _, s := range tc.stderr {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
	if tc.code == 2 && strings.Count(strings.TrimSpace(errs), "\n") > 0 && !strings.Contains(errs, "Usage") {
		t.Errorf("want a one-line error, got:\n%s", errs)
	}
}

// TestPlanMGPUQueue: a plan of TE's mGPU queue from a table a run of it learned: the
// whole-box item's weight is kept per pool size (<key>@g<N>), so on 8-GPU runners it
// is the item <key> with its @g8 weight, as wide as a runner; an item learned only on
// another pool size is listed with that size's weight as its prior, as a run weighs it; the opaque suite of the mGPU queue
// takes the box; the declared items keep their plain keys.
func TestPlanMGPUQueue(t *testing.T) {
	dir := t.TempDir()
	conf := write(t, dir, "mgpu.conf", "torch-mgpu torch_mgpu.log list ci/pytorch.sh\nexamples examples.log opaque ci/examples.sh\n")
	table := write(t, dir, "w.txt", "torch-mgpu/distributed.test_fsdp2.ck@g8 320\ntorch-mgpu/distributed.test_fsdp2.ck@g4 510\n"+
		"torch-mgpu/distributed.test_fusible.ck@g4 400\ntorch-mgpu/distributed.test_numerics.ck 291\nexamples 50\n")
	out := filepath.Join(dir, "plan.json")
	for _, args := range [][]string{
		{"--queue", "mgpu", conf},
		{"--mgpu-config", conf},
	} {
		code, _, stderr := runCommand(t, nil, append([]string{"plan", "--shards", "2", "--gpus", "8", "--weights", table, "--arch", "gfx942", "--level", "3", "--out", out}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		p, err := shard.Read(f, out)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, s := range p.Shards {
			keys = append(keys, s.Keys...)
		}
		slices.Sort(keys)
		want := []string{"examples", "torch-mgpu/distributed.test_fsdp2.ck", "torch-mgpu/distributed.test_fusible.ck", "torch-mgpu/distributed.test_numerics.ck"}
		if !slices.Equal(keys, want) || p.Unknown != 0 || p.Priors != 1 {
			t.Errorf("%v: planned %q with %d unknown, %d by a prior; want %q, 1 by a prior (the one learned on 4 GPUs only)", args, keys, p.Unknown,
				p.Priors, want)
		}
		// 8×320 (fsdp2 on 8) + 8×400 (fusible: its weight on 4 GPUs, unscaled with 1 key in common) + 1×291 + 8×50 (examples takes the box).
		if want := 8*320 + 8*400 + 291 + 8*50.0; p.Work < want-0.01 || p.Work > want+0.01 {
			t.Errorf("%v: planned %.2f GPU-seconds, want %.2f: the whole-box items take 8 GPUs, the @g8 weight", args, p.Work, want)
		}
	}
}
