package e2e

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/mdcheck"
	"github.com/rocm/sgpu-queue/internal/treetest"
)

// docs/runners.md's workflow runs as the page writes it, job by job through the
// action's entry point on the demo tree: the plan job's outputs and artifact feed
// the shard jobs of its matrix, their test-results/ artifacts the merge job (which
// has no checkout). The shards together run each item once, and the merge gives the
// verdict and the item counts a single runner gives.
func TestDocsRunnersWorkflow(t *testing.T) {
	t.Parallel()
	snips := mdcheck.Workflows(readFile(t, filepath.Join("..", "docs", "runners.md")))
	if len(snips) == 0 {
		t.Fatal("docs/runners.md has no workflow")
	}
	wf, err := mdcheck.ParseWorkflow(snips[0].YAML)
	if err != nil {
		t.Fatalf("docs/runners.md:%d: %v", snips[0].Line, err)
	}
	step := func(job, uses string) (mdcheck.Job, mdcheck.Step) {
		t.Helper()
		j, ok := wf.Job(job)
		i := slices.IndexFunc(j.Steps, func(s mdcheck.Step) bool { return strings.HasPrefix(s.Uses, uses) })
		if !ok || i < 0 {
			t.Fatalf("docs/runners.md: job %s has no %s step", job, uses)
		}
		return j, j.Steps[i]
	}
	cache := cachetest.New(t)
	api := httptest.NewServer(newFakeGitHub())
	t.Cleanup(api.Close)
	// run runs a job's queue step in ws with its inputs, ${{ }} replaced by subst.
	run := func(ws string, gpus int, s mdcheck.Step, subst map[string]string) (result, map[string]string) {
		t.Helper()
		inputs := map[string]string{}
		for k, v := range s.With {
			if k == "container" {
				continue // the entry point runs the commands in place
			}
			inputs[k] = expression.ReplaceAllStringFunc(v, func(m string) string {
				e := expression.FindStringSubmatch(m)[1]
				r, ok := subst[e]
				if !ok {
					t.Fatalf("docs/runners.md: the test does not know the expression %q", e)
				}
				return r
			})
		}
		path := os.Getenv("PATH") // ubuntu-latest: no GPU
		if gpus > 0 {
			path = fakeGPUs(t, gpus) + ":" + path
		}
		env, out, _ := runner(t, ws, inputs, append(cache.Env(), "PATH="+path, "GITHUB_API_URL="+api.URL+"/")...)
		r := sgpu(t, ws, env, "action")
		return r, parseOutputs(t, out)
	}

	// plan: no GPU; its plan file is uploaded as an artifact.
	planWS := fixture(t, "demo")
	_, planStep := step("plan", "rocm/sgpu-queue@")
	r, out := run(planWS, 0, planStep, nil)
	if r.code != 0 || out["plan"] == "" {
		t.Fatalf("plan job: exit %d, outputs %v\n%s\n%s", r.code, out, r.stdout, r.stderr)
	}
	_, upload := step("plan", "actions/upload-artifact@")
	if upload.With["path"] != "${{ steps.plan.outputs.plan }}" {
		t.Fatalf("plan job uploads %q: teach the test", upload.With["path"])
	}
	planFile := filepath.Join(planWS, out["plan"])
	var matrix struct{ Shard []string }
	if err := json.Unmarshal([]byte(out["matrix"]), &matrix); err != nil || len(matrix.Shard) != 3 {
		t.Fatalf("matrix output %q: %v", out["matrix"], err)
	}

	// test: each leg checks out, downloads the plan into the workspace (a one-file
	// artifact keeps its base name) and runs its shard; test-results/ is uploaded.
	testJob, testStep := step("test", "rocm/sgpu-queue@")
	if _, get := step("test", "actions/download-artifact@"); get.With["name"] != upload.With["name"] || get.With["path"] != "" {
		t.Fatalf("test job downloads %v, the plan job uploads %v: teach the test", get.With, upload.With)
	}
	_, results := step("test", "actions/upload-artifact@")
	if results.With["path"] != "test-results/" || results.With["name"] != "sgpu-shard-${{ strategy.job-index }}" {
		t.Fatalf("test job uploads %v: teach the test", results.With)
	}
	gpus, _ := strconv.Atoi(testJob.RunsOn[strings.LastIndex(testJob.RunsOn, "-")+1:])
	mergeWS := t.TempDir()
	items := map[string]int{}
	for i, leg := range matrix.Shard {
		ws := fixture(t, "demo")
		data, err := os.ReadFile(planFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, filepath.Base(planFile)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, out := run(ws, gpus, testStep, map[string]string{"matrix.shard": leg})
		if r.code != 0 || out["result"] != "success" {
			t.Fatalf("shard %s: exit %d, outputs %v\n%s\n%s", leg, r.code, out, r.stdout, r.stderr)
		}
		addItems(t, items, out["suites"])
		// upload-artifact's path test-results/ keeps what is inside the folder;
		// download-artifact with a pattern puts each artifact in a folder of its name.
		treetest.Copy(t, filepath.Join(ws, "test-results"), filepath.Join(mergeWS, "shards", "sgpu-shard-"+strconv.Itoa(i)), nil)
	}

	// One runner with the same step and no shard: the items the shards must add up to.
	one := fixture(t, "demo")
	single := testStep
	single.With = map[string]string{"config": testStep.With["config"], "level": testStep.With["level"]}
	r, out = run(one, gpus, single, nil)
	want := map[string]int{}
	addItems(t, want, out["suites"])
	if r.code != 0 || len(want) == 0 {
		t.Fatalf("one runner: exit %d, suites %s\n%s", r.code, out["suites"], r.stderr)
	}

	_, mergeStep := step("merge", "rocm/sgpu-queue@")
	_, download := step("merge", "actions/download-artifact@")
	if download.With["path"] != "shards" || download.With["pattern"] != "sgpu-shard-*" {
		t.Fatalf("merge job downloads %v: teach the test", download.With)
	}
	r, out = run(mergeWS, 0, mergeStep, nil)
	merged := map[string]int{}
	addItems(t, merged, out["suites"])
	if r.code != 0 || out["result"] != "success" {
		t.Fatalf("merge job: exit %d, outputs %v\n%s\n%s", r.code, out, r.stdout, r.stderr)
	}
	for label, n := range want {
		if items[label] != n || merged[label] != n {
			t.Errorf("suite %s: the shards ran %d items, the merge counts %d; one runner runs %d", label, items[label], merged[label], n)
		}
	}
	if out["junit-files"] == "" {
		t.Error("the merge wrote no JUnit files")
	}
}

// addItems adds each suite's item count of a suites output to n.
func addItems(t *testing.T, n map[string]int, suites string) {
	t.Helper()
	var m map[string]struct{ Items int }
	if err := json.Unmarshal([]byte(suites), &m); err != nil {
		t.Fatalf("suites output %q: %v", suites, err)
	}
	for label, s := range m {
		n[label] += s.Items
	}
}
