package e2e

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/mdcheck"
)

// The docs are the test: each workflow of README.md and docs/ a user would copy runs
// here as the page writes it (mdcheck.Workflows extracts them as .ci/actionlint does),
// on testdata/te-current, TE's ci/ in miniature, with a failing item and a re-run
// attempt: through the action's entry point with its INPUT_* (this file), and under
// nektos/act where it can (docsact_test.go).

// hfToken is the secret the docs' steps pass to the tests (secrets.HF_TOKEN).
const hfToken = "hf_fixture_secret_0123"

// teFailing are the items made to fail in the first attempt: the tags are the
// fixture's (TE_FIXTURE_FAIL), one of each queue.
var teFailing = []string{"torch-mgpu/distributed.test_sanity.ck", "torch/test_sanity.ck"} // sorted

// docsJob is one job of a docs workflow whose step runs the queue.
type docsJob struct {
	page    string // README.md, docs/te-migration.md
	snippet int    // which workflow of the page, from 0
	job     string
	wf      *mdcheck.Workflow
	j       mdcheck.Job
	step    mdcheck.Step
}

// loadDocsJob reads the job from the page as it stands.
func loadDocsJob(t *testing.T, page string, snippet int, job string) *docsJob {
	t.Helper()
	snips := mdcheck.Workflows(readFile(t, filepath.Join("..", page)))
	if snippet >= len(snips) {
		t.Fatalf("%s has %d workflow snippets, want #%d", page, len(snips), snippet)
	}
	wf, err := mdcheck.ParseWorkflow(snips[snippet].YAML)
	if err != nil {
		t.Fatalf("%s:%d: %v", page, snips[snippet].Line, err)
	}
	j, ok := wf.Job(job)
	if !ok {
		t.Fatalf("%s:%d has no job %s", page, snips[snippet].Line, job)
	}
	i := slices.IndexFunc(j.Steps, func(s mdcheck.Step) bool { return strings.HasPrefix(s.Uses, "rocm/sgpu-queue@") })
	if i < 0 {
		t.Fatalf("%s:%d: job %s has no rocm/sgpu-queue step", page, snips[snippet].Line, job)
	}
	return &docsJob{page: page, snippet: snippet, job: job, wf: wf, j: j, step: j.Steps[i]}
}

// expression is one ${{ … }} of a docs workflow.
var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// eval substitutes the expressions a docs step uses with what GitHub would give the
// fixture's run (a push to dev): the scope job's outputs for TE's fixture tree (every
// suite), the secret, the matrix leg. An expression it does not know fails the test:
// teach it here when the docs grow one.
func (d *docsJob) eval(t *testing.T, s string) string {
	t.Helper()
	known := map[string]string{
		"needs.scope.outputs.sgpu_suites":                                  "examples torch jax core",
		"needs.scope.outputs.mgpu_suites":                                  "torch-mgpu jax-mgpu",
		"needs.scope.outputs.run_build":                                    "true",
		"secrets.HF_TOKEN":                                                 hfToken,
		"(github.event_name == 'push' && '3') || inputs.test_level || '1'": "3",
	}
	if r := d.j.Matrix["runner"]; len(r) > 0 {
		known["matrix.runner"] = r[0]
	}
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		v, ok := known[e]
		if !ok {
			t.Fatalf("%s, job %s: the test does not know the expression %q (teach docsJob.eval)", d.page, d.job, e)
		}
		return v
	})
}

// gpus is the GPU count of the job's runner: TE's runner names end in it (-4, -8).
func (d *docsJob) gpus(t *testing.T) int {
	runner := d.eval(t, d.j.RunsOn)
	n, err := strconv.Atoi(runner[strings.LastIndex(runner, "-")+1:])
	if err != nil || n < 1 {
		t.Fatalf("%s, job %s: runs-on %q names no GPU count", d.page, d.job, runner)
	}
	return n
}

// labels are the suites the step runs: its suites input, else TE_CI_SUITES of its
// environment, else every suite of its configs (TE's fixture).
func (d *docsJob) labels(t *testing.T) []string {
	if s := d.eval(t, d.step.With["suites"]); s != "" {
		return strings.Fields(s)
	}
	if s, ok := d.step.Env["TE_CI_SUITES"]; ok {
		return strings.Fields(d.eval(t, s))
	}
	var out []string
	if strings.Contains(d.step.With["config"], "ci_sgpu_queue.conf") {
		out = append(out, "examples", "torch", "jax", "core")
	}
	if strings.Contains(d.step.With["config"]+d.step.With["mgpu-config"], "ci_mgpu_queue.conf") {
		out = append(out, "torch-mgpu", "jax-mgpu")
	}
	return out
}

// fakeGPUs is a bin directory whose rocminfo describes n MI300X GPUs.
func fakeGPUs(t *testing.T, n int) string {
	t.Helper()
	capture, err := filepath.Abs(filepath.Join("..", "internal", "gpu", "testdata", "rocminfo-mi300x-"+strconv.Itoa(n)+"gpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(capture); err != nil {
		t.Fatalf("no rocminfo capture of %d GPUs: %v", n, err)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "rocminfo"), []byte("#!/bin/sh\nexec cat '"+capture+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// stepEnv is the environment the runner gives the step: the job's env: and the step's,
// with their expressions evaluated.
func (d *docsJob) stepEnv(t *testing.T) []string {
	var env []string
	for _, m := range []map[string]string{d.j.Env, d.step.Env} {
		for k, v := range m {
			env = append(env, k+"="+d.eval(t, v))
		}
	}
	slices.Sort(env)
	return env
}

// runAction runs the job's queue step through `sgpu-queue action` in dir, attempt n of
// the run, with the cache server that carries ci-rerun/ from one attempt to the next.
// The container input is left out: the entry point runs the commands in place (the
// act test runs them in TE's container). It returns the result, outputs and summary.
func (d *docsJob) runAction(t *testing.T, dir string, attempt int, cache *cachetest.Server, extra ...string) (result, map[string]string, string) {
	t.Helper()
	env, outFile, sumFile := d.actionEnv(t, dir, attempt, cache, extra...)
	r := sgpu(t, dir, env, "action")
	return r, parseOutputs(t, outFile), readFile(t, sumFile)
}

// actionEnv is the environment runAction runs the action with, and its output and
// summary files.
func (d *docsJob) actionEnv(t *testing.T, dir string, attempt int, cache *cachetest.Server, extra ...string) ([]string, string, string) {
	t.Helper()
	inputs := map[string]string{}
	for k, v := range d.step.With {
		if k != "container" {
			inputs[k] = d.eval(t, v)
		}
	}
	api := httptest.NewServer(newFakeGitHub())
	t.Cleanup(api.Close)
	base := []string{"PATH=" + fakeGPUs(t, d.gpus(t)) + ":" + os.Getenv("PATH"), "GITHUB_API_URL=" + api.URL + "/",
		"GITHUB_JOB=" + d.job, "GITHUB_RUN_ATTEMPT=" + strconv.Itoa(attempt)}
	base = append(append(base, cache.Env()...), d.stepEnv(t)...)
	return runner(t, dir, inputs, append(base, extra...)...)
}

// docsActionJobs are the docs jobs run through the action's entry point.
var docsActionJobs = []struct {
	page    string
	snippet int
	job     string
}{
	{"README.md", 0, "gpu-tests"},
	{"docs/action.md", 0, "build_and_test"},
	{"docs/te-migration.md", 0, "sgpu"},
	{"docs/te-migration.md", 0, "mgpu"},
	{"docs/te-migration.md", 1, "gpu-tests"},
}

// docsNotRun are the docs jobs whose queue step no test runs ("page snippet job"), and why.
var docsNotRun = map[string]string{
	"docs/runners.md 0 test": "a shard of a job matrix: TestDocsRunnersWorkflow runs it with its plan and merge jobs",
}

// Every docs job that runs the queue is run by a test, or named in docsNotRun with
// the reason: a workflow added to the docs is run, not only linted.
func TestDocsWorkflowsAreAllRun(t *testing.T) {
	covered := map[string]bool{}
	for _, j := range docsActionJobs {
		covered[j.page+" "+strconv.Itoa(j.snippet)+" "+j.job] = true
	}
	pages, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	pages = append([]string{filepath.Join("..", "README.md")}, pages...)
	for _, p := range pages {
		rel, _ := filepath.Rel("..", p)
		for n, s := range mdcheck.Workflows(readFile(t, p)) {
			wf, err := mdcheck.ParseWorkflow(s.YAML)
			if err != nil {
				t.Fatalf("%s:%d: %v", rel, s.Line, err)
			}
			for _, j := range wf.Jobs {
				runs := slices.ContainsFunc(j.Steps, func(st mdcheck.Step) bool {
					mode := st.With["mode"]
					return strings.HasPrefix(st.Uses, "rocm/sgpu-queue@") && (mode == "" || mode == "run") && st.With["report-from"] == ""
				})
				key := rel + " " + strconv.Itoa(n) + " " + j.ID
				if runs && !covered[key] && docsNotRun[key] == "" {
					t.Errorf("%s:%d: job %s runs the queue, but no test runs it (add it to docsActionJobs, or say why in docsNotRun)", rel, s.Line, j.ID)
				}
			}
		}
	}
}

// Each docs job runs through the action's entry point as the page writes it: attempt 1
// with one failing item runs every item of its suites once with TE's environment
// (width, port, filter, queue switches, core dumps off), puts each item's JUnit where
// TE's report step reads it (test-results/<label>/), and fails naming the item;
// attempt 2 ("Re-run failed jobs": a fresh checkout, the same cache) runs only that
// item, and passes.
func TestDocsWorkflowsThroughTheAction(t *testing.T) {
	t.Parallel()
	for _, ref := range docsActionJobs {
		t.Run(ref.page+"/"+ref.job, func(t *testing.T) {
			t.Parallel() // each its own fixture copies and cache server
			d := loadDocsJob(t, ref.page, ref.snippet, ref.job)
			labels, pool := d.labels(t), d.gpus(t)
			var failing []string
			for _, f := range teFailing {
				if label, _, _ := strings.Cut(f, "/"); slices.Contains(labels, label) {
					failing = append(failing, f)
				}
			}
			slices.Sort(failing)
			cache := cachetest.New(t)
			dir := fixture(t, "te-current")
			trace := filepath.Join(t.TempDir(), "trace")
			r, out, sum := d.runAction(t, dir, 1, cache, "TE_FIXTURE_TRACE="+trace, "TE_FIXTURE_FAIL=test_sanity.ck distributed.test_sanity.ck")
			if r.code != 1 || out["result"] != "failure" {
				t.Fatalf("attempt 1: exit %d, result %q, want 1 and failure (%v fail)\n%s\n%s", r.code, out["result"], failing, r.stdout, r.stderr)
			}
			checkTERunAt(t, filepath.Join(dir, "test-results"), readTETrace(t, trace), pool, labels...)
			for _, f := range failing {
				if !strings.Contains(out["failed-items"], `"`+f+`"`) || !strings.Contains(sum, strings.SplitN(f, "/", 2)[1]) {
					t.Errorf("attempt 1: failed-items %s and the summary do not name %s", out["failed-items"], f)
				}
			}
			checkTEReport(t, dir, labels)

			// Re-run failed jobs: a new checkout, the cache keeps ci-rerun/.
			dir2 := fixture(t, "te-current")
			trace2 := filepath.Join(t.TempDir(), "trace")
			r, out, _ = d.runAction(t, dir2, 2, cache, "TE_FIXTURE_TRACE="+trace2)
			var ran []string
			for _, e := range readTETrace(t, trace2) {
				ran = append(ran, filepath.Base(strings.TrimSuffix(e.prefix, "/"))+"/"+e.tag)
			}
			slices.Sort(ran)
			if r.code != 0 || out["rerun"] != strconv.Itoa(len(failing)) || !slices.Equal(ran, failing) {
				t.Errorf("attempt 2: exit %d, rerun %q, ran %q; want 0 and only %q\n%s", r.code, out["rerun"], ran, failing, r.stdout)
			}
		})
	}
}

// checkTEReport runs the fixture's TE report step (ci/junit_report.py
// test-results/<label>, as TE's workflow does) on each list suite: it must find the
// items' JUnit files there, not "No JUnit XML files were produced".
func checkTEReport(t *testing.T, dir string, labels []string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Log("PYTHON3 MISSING: TE's report step not run")
		return
	}
	for _, l := range labels {
		if l == "examples" || l == "core" {
			continue // opaque: the fixture's write no JUnit
		}
		cmd := exec.Command(python, "ci/junit_report.py", filepath.Join("test-results", l), "--title", l)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		got, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(got), "No JUnit XML files") || !strings.Contains(string(got), " tests** -- ") {
			t.Errorf("TE's report step on test-results/%s: %v\n%s", l, err, got)
		}
	}
}

// TestTEItemEnvironment: under the migrated jobs of docs/te-migration.md, each item's
// environment is what TE's run_queue.sh gives it on the same tree and the same step
// environment (the fixture's ci/run_queue.sh, run as TE's step runs it: docker exec
// -e TEST_LEVEL -e HF_TOKEN -e JUNITXML_PREFIX … bash -c 'ulimit -c 0; ci/run_queue.sh'),
// but for the GPU pin (HIP_VISIBLE_DEVICES and the PET_MASTER_PORT it gives), the
// process mark, and what each shell keeps itself (PWD, OLDPWD, SHLVL, _): what
// run_queue.sh's sourcing of ci/_utils.sh gives every item (env-script), TE's secret
// (pass-env), TE_CI_ONLY_TESTS on every list item.
func TestTEItemEnvironment(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("BASH MISSING: TE's run_queue.sh cannot run")
	}
	for _, c := range []struct{ job, queue string }{{"sgpu", "sgpu"}, {"mgpu", "mgpu"}} {
		t.Run(c.job, func(t *testing.T) {
			t.Parallel()
			d := loadDocsJob(t, "docs/te-migration.md", 0, c.job)
			dir, dumps := fixture(t, "te-current"), t.TempDir()
			fixtureEnv := filepath.Join(dumps, "env")
			env, _, _ := d.actionEnv(t, dir, 1, cachetest.New(t), "TE_FIXTURE_ENV="+fixtureEnv)

			// TE's step: the runner's environment of a run: step (no INPUT_*, no
			// runtime credentials), what TE's docker exec passes, ulimit -c 0.
			var ref []string
			for _, kv := range env {
				if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "INPUT_") && !strings.HasPrefix(name, "ACTIONS_") {
					ref = append(ref, kv)
				}
			}
			ref = append(ref, "JUNITXML_PREFIX=test-results/", "JUNITXML_SUFFIX=.xml", "HF_TOKEN="+hfToken)
			cmd := exec.Command(bash, "-c", "ulimit -c 0; exec ci/run_queue.sh --queue "+c.queue)
			cmd.Dir, cmd.Env = dir, ref
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("TE's run_queue.sh: %v\n%s", err, out)
			}
			teDumps := filepath.Join(dumps, "run_queue.sh")
			if err := os.Rename(fixtureEnv, teDumps); err != nil {
				t.Fatal(err)
			}
			// The same tree, as a fresh checkout would have it.
			if err := os.RemoveAll(filepath.Join(dir, "test-results")); err != nil {
				t.Fatal(err)
			}
			if r := sgpu(t, dir, env, "action"); r.code != 0 {
				t.Fatalf("the migrated step: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			compareItemEnvs(t, teDumps, fixtureEnv)
		})
	}
}

// notCompared are the variables an item's environment may differ in between TE's
// run_queue.sh and sgpu-queue: its GPUs, the process mark, a shell's own.
func notCompared(name string) bool {
	return slices.Contains([]string{"HIP_VISIBLE_DEVICES", "PET_MASTER_PORT", "PWD", "OLDPWD", "SHLVL", "_"}, name) ||
		strings.HasPrefix(name, "SGPU_QUEUE_MARK_")
}

// compareItemEnvs compares the fixture's per-item environment dumps of two runs.
func compareItemEnvs(t *testing.T, want, got string) {
	t.Helper()
	read := func(dir string) map[string]map[string]string {
		files, _ := filepath.Glob(filepath.Join(dir, "*.env"))
		out := map[string]map[string]string{}
		for _, f := range files {
			vars := map[string]string{}
			for _, l := range lines(readFile(t, f)) {
				if k, v, ok := strings.Cut(l, "="); ok && !notCompared(k) {
					vars[k] = v
				}
			}
			out[filepath.Base(f)] = vars
		}
		return out
	}
	w, g := read(want), read(got)
	if len(w) < 3 {
		t.Fatalf("TE's run left %d item environments in %s", len(w), want)
	}
	for _, item := range sortedKeys(w) {
		gv, ok := g[item]
		if !ok {
			t.Errorf("%s ran under TE's run_queue.sh but not under sgpu-queue", item)
			continue
		}
		for _, k := range sortedKeys(w[item]) {
			if v, ok := gv[k]; !ok || v != w[item][k] {
				t.Errorf("%s: %s=%q under TE's run_queue.sh, %q (set %v) under sgpu-queue", item, k, w[item][k], v, ok)
			}
		}
		for _, k := range sortedKeys(gv) {
			if _, ok := w[item][k]; !ok {
				t.Errorf("%s: %s=%q under sgpu-queue only", item, k, gv[k])
			}
		}
	}
	for _, item := range sortedKeys(g) {
		if _, ok := w[item]; !ok {
			t.Errorf("%s ran under sgpu-queue but not under TE's run_queue.sh", item)
		}
	}
}
