package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/dockerexec/dockertest"
	"github.com/rocm/sgpu-queue/internal/mdcheck"
)

// The docs' workflows under nektos/act, as the pages write them (the snippet is the
// workflow file, byte for byte), in container mode: TE's test container is started by
// the workflow's own `docker run` step and the action runs every command in it. What
// this machine lacks is faked at its edge, not in the workflow:
//   - the jobs' containers (runs-on) are the busybox fixture image with the host's /usr
//     mounted read-only (bash, python3, git: what ubuntu-latest has) and a fake docker
//     command line (e2e/internal/fakedocker: the Engine API; no GPUs, no registry);
//   - TE's image rocm/te-ci:latest is the fixture's: busybox, a bash that is its sh, a
//     pip that installs nothing, a rocminfo of 4 or 8 MI300X (the runner's count);
//   - actions/upload-artifact@v4 is a stub with v4's rule that matters here: a name the
//     run already has is refused (409) unless overwrite: true; rocm/sgpu-queue@v1 is
//     action.yml as shipped, run on the image built from this checkout. Both are served
//     from act's action cache (offline).
// Each workflow runs twice: attempt 1 with a failing item, then "Re-run failed jobs"
// (attempt 2 of the same run, a fresh checkout, the same cache and artifacts).

// docsActRuns are the docs workflows run under act, each with the matrix leg it runs.
var docsActRuns = []struct {
	name, page string
	snippet    int
	runID      string // each its own: its artifacts and cache entries apart
}{
	{"te-migration", "docs/te-migration.md", 0, "4711"},
	{"action.md", "docs/action.md", 0, "4712"},
}

func TestDocsWorkflowsUnderAct(t *testing.T) {
	t.Parallel()
	act := actBinary(t)
	cli := dockertest.Engine(t)
	for _, tool := range []string{"/usr/bin/bash", "/usr/bin/python3"} {
		if _, err := os.Stat(tool); err != nil {
			t.Skipf("NO %s ON THIS HOST: the jobs' containers borrow the host's /usr for it", tool)
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("GIT MISSING: act's action cache is git repositories")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // the image build, as TestActWorkflow
	defer cancel()
	if _, err := cli.ImageInspect(ctx, goBase); err != nil {
		t.Skipf("GO BASE IMAGE MISSING (%v): the act test builds the action's image on %s (.ci/run makes it)", err, goBase)
	}
	// Its own images first: the action's is shared, and another test may be building it.
	h := newActHarness(t, ctx, cli, act)
	h.serveAction(t, actionImage(t, ctx, cli))
	// One after the other: the docs name TE's container te-runner, and one engine
	// serves both.
	for _, w := range docsActRuns {
		t.Run(w.name, func(t *testing.T) { h.runTwice(t, w.page, w.snippet, w.runID) })
	}
}

// actHarness holds what the act runs share: images, act's action cache, the cache
// server's and the artifacts' directories.
type actHarness struct {
	cli                    *client.Client
	ctx                    context.Context
	act                    string
	teci, runner4, runner8 string
	home, cacheSrv, art    string
	mounts                 []string // the host's /usr and /lib*: host paths of the job containers
}

func newActHarness(t *testing.T, ctx context.Context, cli *client.Client, act string) *actHarness {
	t.Helper()
	h := &actHarness{cli: cli, ctx: ctx, act: act, home: t.TempDir(), cacheSrv: t.TempDir(), art: t.TempDir()}
	h.buildImages(t)
	cachedAction(t, h.home, "actions/upload-artifact@v4", map[string]string{"action.yml": uploadArtifactStub})
	removeTERunners(t, cli)
	t.Cleanup(func() { removeTERunners(t, cli) })
	return h
}

// serveAction puts the shipped action.yml into act's cache as rocm/sgpu-queue@v1, only
// runs.image pointed at the image built from this checkout.
func (h *actHarness) serveAction(t *testing.T, tag string) {
	t.Helper()
	manifest := readFile(t, filepath.Join("..", "action.yml"))
	cachedAction(t, h.home, "rocm/sgpu-queue@v1", map[string]string{
		"action.yml": regexp.MustCompile(`(?m)^  image: .*$`).ReplaceAllLiteralString(manifest, "  image: docker://"+tag),
	})
}

// uploadArtifactStub is actions/upload-artifact@v4 as far as these runs need it: the
// path's files are kept under the run and the name, and a name the run already has is
// refused as v4 refuses it, unless overwrite is true.
const uploadArtifactStub = `name: upload-artifact (e2e stub of v4)
inputs:
  name: {default: artifact}
  path: {required: true}
  overwrite: {default: "false"}
  if-no-files-found: {default: warn}
  retention-days: {default: ""}
runs:
  using: composite
  steps:
    - shell: sh
      env:
        NAME: ${{ inputs.name }}
        PATHS: ${{ inputs.path }}
        OVERWRITE: ${{ inputs.overwrite }}
      run: |
        dest="/artifacts/$GITHUB_RUN_ID/$NAME"
        if [ -e "$dest" ] && [ "$OVERWRITE" != true ]; then
          echo "::error::Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run"
          exit 1
        fi
        rm -rf "$dest" && mkdir -p "$dest"
        for p in $PATHS; do
          if [ -d "$p" ]; then cp -R "$p/." "$dest/"; else cp "$p" "$dest/"; fi
        done
        echo "uploaded artifact $NAME"
`

// cachedAction puts an action into act's action cache as the git repository act
// would have cloned, tagged with the ref uses names.
func cachedAction(t *testing.T, home, uses string, files map[string]string) {
	t.Helper()
	repo, ref, _ := strings.Cut(uses, "@")
	dir := filepath.Join(home, "cache", "act", strings.ReplaceAll(repo, "/", "-")+"@"+ref)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@local", "commit", "-qm", uses}, {"tag", ref}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// removeTERunners removes the containers fakedocker started (a run that died before
// its cleanup step leaves TE's te-runner behind).
func removeTERunners(t *testing.T, cli *client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", "sgpu-queue-e2e=fakedocker")})
	if err != nil {
		t.Logf("listing fakedocker's containers: %v", err)
		return
	}
	for _, c := range list.Items {
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	}
}

// ctxFile is one file of an image build's context: content and mode, or a symlink.
type ctxFile struct {
	body []byte
	mode int64
	link string
}

// buildImage builds an image from a Dockerfile and files (no RUN steps: it builds on
// any engine in a second), removed when the test ends.
func (h *actHarness) buildImage(t *testing.T, tag, dockerfile string, files map[string]ctxFile) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files["Dockerfile"] = ctxFile{body: []byte(dockerfile), mode: 0o644}
	for _, name := range sortedKeys(files) {
		f := files[name]
		hdr := &tar.Header{Name: name, Mode: f.mode, Size: int64(len(f.body))}
		if f.link != "" {
			hdr = &tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: f.link, Mode: 0o777}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := h.cli.ImageBuild(h.ctx, &buf, client.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	defer res.Body.Close()
	var log strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		var m struct{ Stream, Error string }
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			log.WriteString(m.Stream)
			if m.Error != "" {
				t.Fatalf("build %s: %s\n%s", tag, m.Error, log.String())
			}
		}
	}
	t.Cleanup(func() {
		_, _ = h.cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
}

// buildImages builds TE's fixture image and the jobs' image (fakedocker compiled here).
func (h *actHarness) buildImages(t *testing.T) {
	t.Helper()
	id := strings.TrimPrefix(dockertest.UniqueName(t), "sgpu-test-")
	h.teci, h.runner4, h.runner8 = "sgpu-e2e-teci:"+id, "sgpu-e2e-runner:"+id+"-4", "sgpu-e2e-runner:"+id+"-8"
	te := map[string]ctxFile{
		"root/bin/bash":               {body: []byte("#!/bin/sh\n# The fixture's bash is its sh.\nexec /bin/sh \"$@\"\n"), mode: 0o755},
		"root/usr/local/bin/pip":      {body: []byte("#!/bin/sh\necho \"pip (fixture, installs nothing): $*\"\n"), mode: 0o755},
		"root/usr/local/bin/rocminfo": {body: []byte("#!/bin/sh\nexec cat /usr/local/share/rocminfo-\"${SGPU_FAKE_GPUS:-4}\"gpu.txt\n"), mode: 0o755},
	}
	for _, n := range []string{"4", "8"} {
		te["root/usr/local/share/rocminfo-"+n+"gpu.txt"] = ctxFile{body: []byte(readFile(t, filepath.Join("..", "internal", "gpu", "testdata",
			"rocminfo-mi300x-"+n+"gpu.txt"))), mode: 0o644}
	}
	h.buildImage(t, h.teci, "FROM "+dockertest.Image+"\nCOPY root/ /\n"+
		"ENV PATH=/usr/local/bin:/bin TE_FIXTURE_TRACE=/workspace/.fixture/trace TE_FIXTURE_ENV=/workspace/.fixture/env "+
		"TE_FIXTURE_CK_TRACE=/workspace/.fixture/ck\nCMD [\"sleep\", \"86400\"]\n", te)

	shim := filepath.Join(t.TempDir(), "docker")
	build := exec.Command("go", "build", "-o", shim, "./internal/fakedocker")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building fakedocker: %v\n%s", err, out)
	}
	body, err := os.ReadFile(shim)
	if err != nil {
		t.Fatal(err)
	}
	job := map[string]ctxFile{"root/opt/fake/bin/docker": {body: body, mode: 0o755}}
	h.mounts = []string{"/usr:/usr:ro"}
	for _, d := range []string{"lib", "lib32", "lib64", "libx32"} {
		fi, err := os.Lstat("/" + d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			link, _ := os.Readlink("/" + d)
			job["root/"+d] = ctxFile{link: link}
		case fi.IsDir():
			h.mounts = append(h.mounts, "/"+d+":/"+d+":ro")
		}
	}
	for tag, gpus := range map[string]string{h.runner4: "4", h.runner8: "8"} {
		h.buildImage(t, tag, "FROM "+dockertest.Image+"\nCOPY root/ /\n"+
			"ENV PATH=/opt/fake/bin:/usr/local/bin:/usr/bin:/bin FAKEDOCKER_IMAGE="+h.teci+" FAKEDOCKER_PASS=SGPU_FAKE_GPUS SGPU_FAKE_GPUS="+gpus+"\n",
			job)
	}
}

// actResult is what one act run did.
type actResult struct {
	jobs        map[string]string // job id → success/failure
	logs        map[string]*strings.Builder
	annotations []actEvent
	out         []byte
}

func (r actResult) log() string { return actLog(r.logs) }

// actRun runs the workflow of ws (.github/workflows/docs.yml) as attempt n of the run,
// the first leg of each job's matrix, one job at a time. act gives the steps its cache
// server (ACTIONS_CACHE_URL); the runtime token the runner gives a container action
// comes with --env (act sets one only with its artifact server, whose fixed port two
// act runs at once would share).
func (h *actHarness) actRun(t *testing.T, ws string, wf *mdcheck.Workflow, runID string, attempt int) actResult {
	t.Helper()
	args := []string{"push", "-W", ".github/workflows/docs.yml", "--json", "--pull=false", "--action-offline-mode", "--bind", "--rm",
		"--concurrent-jobs", "1", "--cache-server-path", h.cacheSrv, "-s", "HF_TOKEN=" + hfToken,
		"--env", "GITHUB_RUN_ID=" + runID, "--env", "GITHUB_RUN_ATTEMPT=" + strconv.Itoa(attempt), "--env", "ACTIONS_RUNTIME_TOKEN=" + cachetest.NewToken(t, []byte("act"), cachetest.RunnerClaims(time.Hour)),
		"--container-options", "-v " + strings.Join(append(h.mounts, h.art+":/artifacts"), " -v ")}
	labels := map[string]bool{}
	for _, j := range wf.Jobs {
		runsOn := j.RunsOn
		if r := j.Matrix["runner"]; len(r) > 0 {
			runsOn = strings.ReplaceAll(runsOn, "${{ matrix.runner }}", r[0])
			args = append(args, "--matrix", "runner:"+r[0])
		}
		labels[runsOn] = true
	}
	for _, l := range sortedKeys(labels) {
		img := h.runner8
		if strings.HasSuffix(l, "-4") || l == "ubuntu-latest" {
			img = h.runner4
		}
		args = append(args, "-P", l+"="+img)
	}
	cmd := exec.CommandContext(h.ctx, h.act, args...)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+h.home, "XDG_CACHE_HOME="+filepath.Join(h.home, "cache"))
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("act: %v\n%s", err, out)
	}
	r := actResult{jobs: map[string]string{}, logs: map[string]*strings.Builder{}, out: out}
	for _, e := range parseActEvents(t, out) {
		if e.JobResult != "" {
			r.jobs[e.JobID] = e.JobResult
		}
		if r.logs[e.JobID] == nil {
			r.logs[e.JobID] = &strings.Builder{}
		}
		r.logs[e.JobID].WriteString(e.Msg + "\n")
		if e.Command == "error" {
			r.annotations = append(r.annotations, e)
		}
	}
	return r
}

// docsActWorkspace is a checkout of testdata/te-current holding the page's workflow
// snippet, byte for byte, as its workflow file, committed with fixed dates so that
// every call makes the same commit (a re-run is of the same GITHUB_SHA, which keys
// the re-run state: docs/reruns.md#keys); failing names the items that fail
// (ci/fixture-fail, left uncommitted: no variable reaches TE's container but through
// the workflow, and the attempt's flake is not the commit's).
func docsActWorkspace(t *testing.T, yaml string, failing []string) string {
	t.Helper()
	ws := fixture(t, "te-current")
	write := func(name, body string) {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".github/workflows/docs.yml", yaml)
	for _, args := range [][]string{{"init", "-q", "-b", "dev"}, {"add", "-A"}, {"-c", "user.name=e2e", "-c", "user.email=e2e@local", "commit", "-qm", "te"}} {
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if len(failing) > 0 {
		var tags []string
		for _, f := range failing {
			tags = append(tags, strings.SplitN(f, "/", 2)[1])
		}
		write("ci/fixture-fail", strings.Join(tags, "\n")+"\n")
	}
	return ws
}

// queueJobs are the jobs of wf that run the queue, with the GPU count of their leg.
func queueJobs(wf *mdcheck.Workflow) map[string]int {
	out := map[string]int{}
	for _, j := range wf.Jobs {
		if !slices.ContainsFunc(j.Steps, func(s mdcheck.Step) bool { return strings.HasPrefix(s.Uses, "rocm/sgpu-queue@") }) {
			continue
		}
		n := 8
		if r := j.Matrix["runner"]; len(r) > 0 && strings.HasSuffix(r[0], "-4") {
			n = 4
		}
		out[j.ID] = n
	}
	return out
}

// runTwice runs the page's workflow: attempt 1 fails the failing items, attempt 2
// re-runs them alone and passes.
func (h *actHarness) runTwice(t *testing.T, page string, snippet int, runID string) {
	snips := mdcheck.Workflows(readFile(t, filepath.Join("..", page)))
	wf, err := mdcheck.ParseWorkflow(snips[snippet].YAML)
	if err != nil {
		t.Fatal(err)
	}
	jobs := queueJobs(wf)
	failing := teFailing
	ws := docsActWorkspace(t, snips[snippet].YAML, failing)
	r := h.actRun(t, ws, wf, runID, 1)
	for _, j := range wf.Jobs {
		want := "success"
		if _, ok := jobs[j.ID]; ok {
			want = "failure"
		}
		if r.jobs[j.ID] != want {
			t.Fatalf("attempt 1: job %s %q, want %s (jobs %v)\n%s", j.ID, r.jobs[j.ID], want, r.jobs, r.log())
		}
	}
	h.checkAttempt1(t, ws, wf, jobs, runID, r)

	ws2 := docsActWorkspace(t, snips[snippet].YAML, nil)
	r = h.actRun(t, ws2, wf, runID, 2)
	for _, j := range wf.Jobs {
		if r.jobs[j.ID] != "success" {
			t.Fatalf("attempt 2 (re-run failed jobs): job %s %q, want success (jobs %v)\n%s", j.ID, r.jobs[j.ID], r.jobs, r.log())
		}
	}
	var ran []string
	for _, e := range readTETrace(t, filepath.Join(ws2, ".fixture", "trace")) {
		ran = append(ran, filepath.Base(strings.TrimSuffix(e.prefix, "/"))+"/"+e.tag)
	}
	slices.Sort(ran)
	if !slices.Equal(ran, failing) {
		t.Errorf("attempt 2 ran %q, want only what failed: %q", ran, failing)
	}
	for job := range jobs {
		if !strings.Contains(r.logs[job].String(), "a re-run: 1 of the 1 item(s)") && !strings.Contains(r.logs[job].String(), "a re-run: 2 of the 2 item(s)") {
			t.Errorf("attempt 2: job %s does not say it re-ran what failed:\n%s", job, r.logs[job])
		}
	}
	h.checkArtifacts(t, jobs, runID, 2)
}

// checkAttempt1 checks what the first attempt left: each job's items ran once each with
// TE's environment in TE's container (core dumps off though it allows them), with the
// step's secret (pass-env) and ci/_utils.sh's exports (env-script); TE's report step
// found each item's JUnit (its ::error for the failed test case); the artifacts hold
// what TE's tools read.
func (h *actHarness) checkAttempt1(t *testing.T, ws string, wf *mdcheck.Workflow, jobs map[string]int, runID string, r actResult) {
	t.Helper()
	tr := readTETrace(t, filepath.Join(ws, ".fixture", "trace"))
	for job, pool := range jobs {
		j, _ := wf.Job(job)
		step := j.Steps[slices.IndexFunc(j.Steps, func(s mdcheck.Step) bool { return strings.HasPrefix(s.Uses, "rocm/sgpu-queue@") })]
		d := &docsJob{page: "act", job: job, wf: wf, j: j, step: step}
		labels := d.labels(t)
		var mine []teTrace
		for _, e := range tr {
			if slices.Contains(labels, filepath.Base(strings.TrimSuffix(e.prefix, "/"))) {
				mine = append(mine, e)
			}
		}
		checkTERunAt(t, "/workspace/test-results", mine, pool, labels...)
	}
	dumps, _ := filepath.Glob(filepath.Join(ws, ".fixture", "env", "*.env"))
	if len(dumps) == 0 {
		t.Fatal("no item left its environment")
	}
	for _, f := range dumps {
		env := "\n" + readFile(t, f)
		for _, want := range []string{"HF_TOKEN=" + hfToken, "CI=1", "TE_PATH=/workspace/"} {
			if !strings.Contains(env, "\n"+want+"\n") {
				t.Errorf("%s: the item did not get %s in TE's container:\n%s", filepath.Base(f), want, env)
			}
		}
	}
	// TE's report prints ::error title=failed: <class>::<name>::…, which a runner reads
	// as a title cut at the first "::": the whole line is in the message.
	reported := slices.ContainsFunc(r.annotations, func(e actEvent) bool {
		return e.JobID == "sgpu" && strings.Contains(e.Msg, "failed: tests.pytorch.test_sanity::test_x[1, 2]")
	})
	if _, ok := wf.Job("sgpu"); ok && !reported {
		t.Errorf("TE's report step did not find the failed test case's JUnit (no ::error for it): %+v", r.annotations)
	}
	h.checkArtifacts(t, jobs, runID, 1)
	if _, ok := wf.Job("sgpu"); ok {
		h.compareWithTE(t, ws)
	}
}

// checkArtifacts checks the uploads of attempt n: each queue job's artifact holds the
// verdict files TE's gate reads, the merged JUnit, each list item's own JUnit where
// TE's report reads it, and the report; attempt 2's replaced attempt 1's.
func (h *actHarness) checkArtifacts(t *testing.T, jobs map[string]int, runID string, attempt int) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(h.art, runID, "*"))
	if len(dirs) < len(jobs) {
		t.Fatalf("attempt %d: artifacts %q, want one per queue job %v", attempt, dirs, jobs)
	}
	for _, d := range dirs {
		for _, want := range []string{"logs/report/schedule.md", "logs/queue/run.json"} {
			if _, err := os.Stat(filepath.Join(d, want)); err != nil {
				t.Errorf("attempt %d: artifact %s lacks %s", attempt, filepath.Base(d), want)
			}
		}
		rcs, _ := filepath.Glob(filepath.Join(d, "logs", "suites", "*.rc"))
		merged, _ := filepath.Glob(filepath.Join(d, "junit", "*.xml"))
		raw, _ := filepath.Glob(filepath.Join(d, "*", "*.xml"))
		if len(rcs) == 0 || len(merged) == 0 || len(raw) <= len(merged) {
			t.Errorf("attempt %d: artifact %s: %d verdicts, %d merged and %d per-item JUnit files", attempt, filepath.Base(d), len(rcs),
				len(merged), len(raw)-len(merged))
		}
		run := readFile(t, filepath.Join(d, "logs", "queue", "run.json"))
		if rerun := strings.Contains(run, `"rerun"`); rerun != (attempt == 2) {
			t.Errorf("attempt %d: artifact %s is of another attempt (run.json: %.300s)", attempt, filepath.Base(d), run)
		}
	}
}

// compareWithTE runs the fixture's ci/run_queue.sh as TE's workflow runs it (docker exec
// -e TEST_LEVEL -e HF_TOKEN -e JUNITXML_PREFIX … bash -c 'ulimit -c 0; ci/run_queue.sh')
// in TE's container on the same tree, and compares each sGPU item's environment with
// the migrated job's.
func (h *actHarness) compareWithTE(t *testing.T, ws string) {
	t.Helper()
	act := filepath.Join(ws, ".fixture", "act-env")
	if err := os.Rename(filepath.Join(ws, ".fixture", "env"), act); err != nil {
		t.Fatal(err)
	}
	host := &container.HostConfig{Binds: []string{ws + ":/workspace"},
		Resources: container.Resources{Ulimits: []*container.Ulimit{{Name: "core", Soft: -1, Hard: -1}}}}
	name := dockertest.StartConfig(t, h.cli, &container.Config{Image: h.teci, Hostname: "te-runner", WorkingDir: "/workspace",
		Env: []string{"SGPU_FAKE_GPUS=4"}}, host, true)
	ex, err := h.cli.ExecCreate(h.ctx, name, client.ExecCreateOptions{AttachStdout: true, AttachStderr: true,
		Env: []string{"TEST_LEVEL=3", "HF_TOKEN=" + hfToken, "JUNITXML_PREFIX=/workspace/test-results/", "JUNITXML_SUFFIX=.xml"},
		Cmd: []string{"bash", "-c", "ulimit -c 0; exec ci/run_queue.sh --queue sgpu"}})
	if err != nil {
		t.Fatal(err)
	}
	att, err := h.cli.ExecAttach(h.ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, _ = out.ReadFrom(att.Reader)
	att.Close()
	te := filepath.Join(ws, ".fixture", "env")
	if files, _ := filepath.Glob(filepath.Join(te, "*.env")); len(files) == 0 {
		t.Fatalf("TE's run_queue.sh in TE's container left no item environment:\n%s", out.String())
	}
	sgpuOnly := filepath.Join(ws, ".fixture", "act-env-sgpu")
	os.MkdirAll(sgpuOnly, 0o755)
	files, _ := filepath.Glob(filepath.Join(act, "*.env"))
	for _, f := range files {
		if !strings.Contains(filepath.Base(f), ".mgpu.") {
			os.Link(f, filepath.Join(sgpuOnly, filepath.Base(f)))
		}
	}
	compareItemEnvs(t, te, sgpuOnly)
}
