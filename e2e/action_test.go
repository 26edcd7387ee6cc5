package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/action"
	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/mdcheck"
	"github.com/rocm/sgpu-queue/internal/proctest"
)

const token = "ghs_e2eSecretToken0123456789"

// actionDefaults are the inputs' defaults as action.yml declares them: the runner
// passes every one of them, so the tests do too (expressions as the runner would
// evaluate them here: the token, and no matrix).
func actionDefaults(t *testing.T) map[string]string {
	t.Helper()
	defaults := map[string]string{}
	name := regexp.MustCompile(`^  ([a-z0-9-]+):$`)
	def := regexp.MustCompile(`^    default: (.*)$`)
	section, cur := "", ""
	for _, l := range lines(readFile(t, filepath.Join("..", "action.yml"))) {
		switch {
		case l != "" && !strings.HasPrefix(l, " "):
			section = strings.TrimSuffix(l, ":")
		case section != "inputs":
		case name.MatchString(l):
			cur = name.FindStringSubmatch(l)[1]
		case def.MatchString(l):
			v := def.FindStringSubmatch(l)[1]
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			switch v {
			case "${{ github.token }}":
				v = token
			case "${{ toJSON(matrix) }}":
				v = "null"
			}
			defaults[cur] = v
		}
	}
	if len(defaults) < 20 {
		t.Fatalf("read %d input defaults from action.yml", len(defaults))
	}
	return defaults
}

// runner is the environment GitHub's runner gives a container action, with the
// inputs' defaults from action.yml (the runner passes those too).
func runner(t *testing.T, ws string, inputs map[string]string, extra ...string) ([]string, string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "output")
	summary := filepath.Join(t.TempDir(), "summary")
	os.WriteFile(out, nil, 0o644)
	os.WriteFile(summary, nil, 0o644)
	values := actionDefaults(t)
	for k, v := range inputs {
		values[k] = v
	}
	env := []string{
		"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + ws, "GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + summary,
		"GITHUB_REPOSITORY=ROCm/TransformerEngine", "GITHUB_RUN_ID=4242", "GITHUB_RUN_ATTEMPT=1",
		"GITHUB_WORKFLOW=rocm-ci", "GITHUB_JOB=sgpu", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_SHA=0000000000000000000000000000000000000000", "HOME=" + t.TempDir(),
	}
	for k, v := range values {
		// Inputs keep their hyphens: INPUT_LOG-DIR.
		env = append(env, "INPUT_"+strings.ToUpper(k)+"="+v)
	}
	return append(env, extra...), out, summary
}

// parseOutputs reads GITHUB_OUTPUT as the runner does: name=value or name<<DELIM
// ... DELIM.
func parseOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	ls := strings.Split(readFile(t, path), "\n")
	out := map[string]string{}
	for i := 0; i < len(ls); i++ {
		l := ls[i]
		if l == "" {
			continue
		}
		if name, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for i++; i < len(ls) && ls[i] != delim; i++ {
				val = append(val, ls[i])
			}
			if i == len(ls) {
				t.Fatalf("output %s: delimiter %s never closed", name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("bad output line %q", l)
		}
		out[name] = val
	}
	return out
}

// fakeGitHub is a local GitHub REST API for the calls the action makes: it records
// them with their bodies, keeps the check runs and comments it was given, and can
// answer a route with errors first (route = "METHOD /last/path/part").
type fakeGitHub struct {
	mu       sync.Mutex
	calls    []string
	auth     []string
	checks   []map[string]any
	comments map[string]string // marker line -> body
	nextID   int
	fail     map[string][]int // route -> statuses to answer first, in order
}

func newFakeGitHub() *fakeGitHub {
	return &fakeGitHub{comments: map[string]string{}, fail: map[string][]int{}}
}

func route(r *http.Request) string {
	return r.Method + " " + r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/json")
	if q := f.fail[route(r)]; len(q) > 0 {
		f.fail[route(r)] = q[1:]
		if q[0] >= 500 {
			w.Header().Set("Retry-After", "0") // retried at once: keeps the test fast
		}
		w.WriteHeader(q[0])
		fmt.Fprint(w, `{"message":"Resource not accessible by integration"}`)
		return
	}
	var payload map[string]any
	json.Unmarshal(body, &payload)
	f.nextID++
	switch {
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/check-runs"):
		f.checks = append(f.checks, payload)
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"id":%d,"html_url":"https://github.com/ROCm/TransformerEngine/runs/%d"}`, f.nextID, f.nextID)
	case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/comments"):
		var list []map[string]any
		for _, b := range f.comments {
			list = append(list, map[string]any{"id": 7, "body": b})
		}
		json.NewEncoder(w).Encode(list)
	case strings.HasSuffix(r.URL.Path, "/comments") || strings.Contains(r.URL.Path, "/comments/"):
		b, _ := payload["body"].(string)
		marker, _, _ := strings.Cut(b, "\n")
		f.comments[marker] = b
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"id":%d,"html_url":"https://github.com/ROCm/TransformerEngine/pull/1234#issuecomment-%d"}`, f.nextID, f.nextID)
	default:
		w.WriteHeader(404)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	}
}

// count is how many calls of method and path suffix the server saw.
func (f *fakeGitHub) count(method, suffix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, method+" ") && strings.HasSuffix(c, suffix) {
			n++
		}
	}
	return n
}

// noRelativeLinks fails for a link in text GitHub shows that would resolve nowhere.
func noRelativeLinks(t *testing.T, what, md string) {
	t.Helper()
	if bad := mdcheck.RelativeLinks(md); len(bad) > 0 {
		t.Errorf("%s has relative links: %q", what, bad)
	}
}

// The action, run as the runner runs it, on the e2e fixtures: outputs, summary,
// annotations, merged JUnit, check run and comment, weights through the v2 cache,
// the level from TEST_LEVEL (the input is left at its default).
func TestActionLikeTheRunner(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	dir := fixture(t, "e2e")
	gh := newFakeGitHub()
	api := httptest.NewServer(gh)
	defer api.Close()
	cacheSrv := cachetest.New(t)
	event, _ := filepath.Abs(filepath.Join("..", "internal", "publish", "testdata", "events", "pull_request_opened.json"))
	inputs := map[string]string{"config": "ci/queue.conf", "gpus": "0,1,2", "arch": "gfx942", "publish": "summary check comment"}
	env, outFile, sumFile := runner(t, dir, inputs, append(cacheSrv.Env(), "TEST_LEVEL=1",
		"GITHUB_API_URL="+api.URL+"/", "GITHUB_EVENT_PATH="+event, "SGPU_TRACE="+filepath.Join(dir, "trace"))...)
	r := sgpu(t, dir, env, "action")
	if r.code != 139 {
		t.Fatalf("exit %d, want 139\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := parseOutputs(t, outFile)
	leg := "sgpu-queue (sgpu)"

	t.Run("every output is set, and only those action.yml declares", func(t *testing.T) {
		declared := map[string]bool{}
		for _, o := range action.Outputs {
			declared[o.Name] = true
			if _, ok := out[o.Name]; !ok {
				t.Errorf("output %s missing", o.Name)
			}
		}
		for name := range out {
			if !declared[name] {
				t.Errorf("output %s is set but not declared (actionlint would reject its use)", name)
			}
		}
		want := map[string]string{
			"result": "failure", "exit-code": "139", "failed-suites": `["alpha"]`,
			"report": "test-results/logs/report/schedule.md", "weights-file": "ci-weights/test_weights.gfx942.l1.txt",
			"cache-hit": "false", "cache-matched-key": "", "flaky-items": "[]", "quarantined-gpus": "[]",
		}
		for k, v := range want {
			if out[k] != v {
				t.Errorf("%s = %q, want %q", k, out[k], v)
			}
		}
		var failed []string
		json.Unmarshal([]byte(out["failed-items"]), &failed)
		sort.Strings(failed)
		if strings.Join(failed, ",") != "alpha/crash,alpha/fails" {
			t.Errorf("failed-items %q", out["failed-items"])
		}
		var suites map[string]map[string]float64
		if err := json.Unmarshal([]byte(out["suites"]), &suites); err != nil || suites["alpha"]["failed"] != 2 || suites["alpha"]["rc"] != 139 || suites["beta"]["rc"] != 0 || suites["beta"]["items"] != 4 {
			t.Errorf("suites %q (%v)", out["suites"], err)
		}
		for _, k := range []string{"wall-seconds", "utilisation", "lower-bound-seconds"} {
			var v float64
			if _, err := fmtSscan(out[k], &v); err != nil || v <= 0 {
				t.Errorf("%s = %q", k, out[k])
			}
		}
	})
	t.Run("files the outputs name", func(t *testing.T) {
		files := lines(out["junit-files"])
		if len(files) != 3 {
			t.Fatalf("junit-files %q", out["junit-files"])
		}
		for _, f := range files {
			validateJUnit(t, filepath.Join(dir, f))
		}
		for _, f := range []string{out["report"], out["weights-file"]} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("log: level, groups, annotations, token", func(t *testing.T) {
		for _, want := range []string{"level 1, log dir", "::group::Phase 0: read the config", "::group::Phase 4: run 11 items on 3 GPUs", "::endgroup::",
			// One error per failed test, at its suite's config line (its JUnit names no file);
			// the suite's own for the item no failed test stands for.
			"::error file=ci/queue.conf,line=2,title=e2e%3A%3Afails::failed in alpha/fails (log test-results/logs/items/alpha.fails.log)" +
				"%0AAssertionError: fails exits 3 (in ",
			"::error file=ci/queue.conf,line=2,title=suite alpha failed::2 of 6 items failed (rc=139); 1 of them by their failed tests, " +
				"annotated one by one%0Acrash rc=139 test-results/logs/items/alpha.crash.log (cut off)", "cache miss for sgpu-weights-gfx942-l1-* and sgpu-weights-gfx942-*",
			"cache: saved sgpu-weights-gfx942-l1-4242-1-" + action.CacheLeg(leg),
			"check run: https://github.com/ROCm/TransformerEngine/runs/"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("log lacks %q", want)
			}
		}
		for i, l := range lines(r.stdout + r.stderr) {
			if strings.Contains(l, token) && l != "::add-mask::"+token {
				t.Errorf("log line %d shows the token: %q", i, l)
			}
		}
		if !strings.HasPrefix(r.stdout, "::add-mask::"+token+"\n") {
			t.Error("the token is not masked first")
		}
		for _, f := range []string{outFile, sumFile} {
			if strings.Contains(readFile(t, f), token) {
				t.Errorf("%s holds the token", f)
			}
		}
	})
	t.Run("summary: links that resolve on github.com, log tails inline", func(t *testing.T) {
		s := readFile(t, sumFile)
		if !strings.HasPrefix(s, "## ✗ sgpu-queue: 1 of 8 tests failed; 2 of 11 items failed at level 1\n") || len(s) > 1<<20 {
			t.Errorf("summary (%d bytes):\n%.500s", len(s), s)
		}
		// What failed comes first, each failed test case with its message from the
		// item's JUnit, its log folded below; then how the run went.
		at := 0
		for _, want := range []string{"### Failed suites (1)", "| `alpha` |", "### Failed items (2)", "#### ✗ `alpha/fails`: rc 3",
			"**`e2e::fails`** (failure)", "AssertionError: fails exits 3", "<summary>Last 30 lines of <code>items/alpha.fails.log</code></summary>",
			"item fails on GPU", "### Efficiency", "### Timeline", "[the run's artifacts](https://github.com/ROCm/TransformerEngine/actions/runs/4242)"} {
			i := strings.Index(s[at:], want)
			if i < 0 {
				t.Errorf("summary lacks %q after byte %d:\n%s", want, at, s)
				break
			}
			at += i + len(want)
		}
		if strings.Contains(s, dir) {
			t.Errorf("the summary names the workspace's absolute path %s", dir)
		}
		noRelativeLinks(t, "the job summary", s)
		if md := readFile(t, filepath.Join(dir, out["report"])); len(mdcheck.RelativeLinks(md)) == 0 {
			t.Error("report/schedule.md lost its links into the log dir")
		}
	})
	t.Run("check run and comment", func(t *testing.T) {
		gh.mu.Lock()
		defer gh.mu.Unlock()
		calls := strings.Join(gh.calls, "\n")
		for _, want := range []string{"POST /repos/ROCm/TransformerEngine/check-runs", "GET /repos/ROCm/TransformerEngine/issues/1234/comments", "POST /repos/ROCm/TransformerEngine/issues/1234/comments"} {
			if !strings.Contains(calls, want) {
				t.Errorf("no %s in\n%s", want, calls)
			}
		}
		for _, a := range gh.auth {
			if a != "Bearer "+token {
				t.Errorf("Authorization %q", a)
			}
		}
		if len(gh.checks) != 1 {
			t.Fatalf("%d check runs", len(gh.checks))
		}
		check := gh.checks[0]
		if check["head_sha"] != "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01" || check["conclusion"] != "failure" || check["name"] != leg {
			t.Errorf("check run head_sha=%v conclusion=%v name=%v", check["head_sha"], check["conclusion"], check["name"])
		}
		output, _ := check["output"].(map[string]any)
		if anns, _ := output["annotations"].([]any); len(anns) != 2 {
			t.Errorf("%d annotations, want one for the failed test and one for the item no test stands for", len(anns))
		}
		summary, _ := output["summary"].(string)
		noRelativeLinks(t, "the check run", summary)
		if len(gh.comments) != 1 {
			t.Fatalf("%d comments", len(gh.comments))
		}
		for marker, body := range gh.comments {
			if marker != "<!-- sgpu-queue:rocm-ci/"+leg+" -->" {
				t.Errorf("comment marker %q", marker)
			}
			noRelativeLinks(t, "the comment", body)
		}
	})
	t.Run("a workflow_run job publishes the run for a fork PR", func(t *testing.T) {
		fork, _ := filepath.Abs(filepath.Join("..", "internal", "publish", "testdata", "events", "workflow_run_fork.json"))
		env, outFile, sumFile := runner(t, dir, map[string]string{"report-from": "test-results/logs", "pr-number": "87",
			"publish": "check comment"}, "GITHUB_API_URL="+api.URL+"/", "GITHUB_EVENT_PATH="+fork, "GITHUB_RUN_ID=5555", "GITHUB_JOB=publish")
		checks := gh.count("POST", "/check-runs")
		r := sgpu(t, dir, env, "action")
		if r.code != 0 {
			t.Fatalf("exit %d (publishing a failed run is no failure)\n%s", r.code, r.stdout)
		}
		if o := parseOutputs(t, outFile); o["result"] != "failure" || o["exit-code"] != "139" {
			t.Errorf("outputs describe the published run: %v", o)
		}
		if readFile(t, sumFile) != "" || gh.count("POST", "/check-runs") != checks+1 || gh.count("POST", "/issues/87/comments") != 1 {
			t.Fatalf("calls %v\n%s", gh.calls, r.stdout)
		}
		gh.mu.Lock()
		defer gh.mu.Unlock()
		check := gh.checks[len(gh.checks)-1]
		output, _ := check["output"].(map[string]any)
		summary, _ := output["summary"].(string)
		if check["head_sha"] != "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d" || check["details_url"] != "https://github.com/ROCm/TransformerEngine/actions/runs/13579246802" ||
			!strings.Contains(summary, "[the run's artifacts](https://github.com/ROCm/TransformerEngine/actions/runs/13579246802)") || !strings.Contains(summary, "item fails on GPU") {
			t.Errorf("check run %v %v\n%.600s", check["head_sha"], check["details_url"], summary)
		}
		noRelativeLinks(t, "the published check run", summary)
	})
	t.Run("weights round-trip through the cache", func(t *testing.T) {
		key := "sgpu-weights-gfx942-l1-4242-1-" + action.CacheLeg(leg)
		if _, ok := cacheSrv.Lookup(key, ""); !ok {
			t.Fatalf("no cache entry saved; entries %v", cacheSrv.Entries())
		}
		// A later run restores by prefix and is ordered from it, even with the
		// local file gone (a fresh runner).
		os.RemoveAll(filepath.Join(dir, "ci-weights"))
		env2, out2, _ := runner(t, dir, map[string]string{"config": "ci/queue.conf", "gpus": "3", "arch": "gfx942"},
			append(cacheSrv.Env(), "GITHUB_RUN_ID=4243", "TEST_LEVEL=1")...)
		r2 := sgpu(t, dir, env2, "action")
		o2 := parseOutputs(t, out2)
		if o2["cache-hit"] != "true" || o2["cache-matched-key"] != key {
			t.Errorf("second run: cache-hit %q cache-matched-key %q\n%s", o2["cache-hit"], o2["cache-matched-key"], r2.stdout)
		}
		if !strings.Contains(r2.stdout, "(10 keys)") {
			t.Errorf("second run did not order from the restored table")
		}
		if _, ok := cacheSrv.Lookup("sgpu-weights-gfx942-l1-4243-1-"+action.CacheLeg(leg), ""); !ok {
			t.Error("second run saved nothing")
		}
	})
}

// Two legs of TE's matrix on one arch, in one run: each has its own check run, its
// own sticky comment and its own cache entry. The first leg runs level 1 where the
// cache only has a level-3 table: it is restored and said, but is no hit; the
// second finds the first leg's level-1 table: a hit.
func TestActionMatrixLegs(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	gh := newFakeGitHub()
	cacheSrv := cachetest.New(t)
	level3 := "sgpu-weights-gfx942-l3-4000-1-sgpu-queue__build_and_test__linux-mi325-8-01234567"
	cacheSrv.Put(level3, "", []byte("torch/test_numerics.ck 30.0\njax/test_fused_attn.auto 20.0\n"))
	legs := []string{`{"runner":"linux-mi325-8"}`, `{"runner":"linux-mi300x-8"}`}
	// An earlier red run left each leg its comment: a green run edits it, marked
	// green (it makes none where there is none: TestActionTestsOnThePR).
	for _, runner := range []string{"linux-mi325-8", "linux-mi300x-8"} {
		marker := "<!-- sgpu-queue:rocm-ci/sgpu-queue (build_and_test, " + runner + ") -->"
		gh.comments[marker] = marker + "\n## ✗ sgpu-queue: an earlier red run"
	}
	var names []string
	for i, matrix := range legs {
		// Each leg on its own runner: its own workspace, one cache and one GitHub.
		dir, env, outFile, _ := demoAction(t, gh, map[string]string{"config": "ci/sgpu.conf", "matrix": matrix, "publish": "summary check comment"},
			append(cacheSrv.Env(), "TEST_LEVEL=1", "GITHUB_JOB=build_and_test")...)
		r := sgpu(t, dir, env, "action")
		if r.code != 0 {
			t.Fatalf("leg %d: exit %d\n%s", i, r.code, r.stdout)
		}
		out := parseOutputs(t, outFile)
		var runner map[string]string
		json.Unmarshal([]byte(matrix), &runner)
		name := "sgpu-queue (build_and_test, " + runner["runner"] + ")"
		names = append(names, name)
		key := "sgpu-weights-gfx942-l1-4242-1-" + action.CacheLeg(name)
		if _, ok := cacheSrv.Lookup(key, ""); !ok {
			t.Errorf("leg %d saved no %s; entries %v", i, key, cacheSrv.Entries())
		}
		switch i {
		case 0:
			if out["cache-hit"] != "false" || out["cache-matched-key"] != level3 ||
				!strings.Contains(r.stdout, "restored another level's table "+level3) || !strings.Contains(r.stdout, "(2 keys)") {
				t.Errorf("level-1 leg with a level-3 table: cache-hit %q cache-matched-key %q\n%s", out["cache-hit"], out["cache-matched-key"], r.stdout)
			}
			if !strings.Contains(readFile(t, filepath.Join(dir, out["report"])), "seeded from another level") {
				t.Error("the report does not say the table came from another level")
			}
		case 1:
			prev := "sgpu-weights-gfx942-l1-4242-1-" + action.CacheLeg(names[0])
			if out["cache-hit"] != "true" || out["cache-matched-key"] != prev {
				t.Errorf("second leg: cache-hit %q cache-matched-key %q, want %s", out["cache-hit"], out["cache-matched-key"], prev)
			}
		}
	}
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if len(gh.checks) != 2 || gh.checks[0]["name"] != names[0] || gh.checks[1]["name"] != names[1] {
		t.Errorf("check runs %v, want one named for each leg %q", len(gh.checks), names)
	}
	if len(gh.comments) != 2 {
		t.Errorf("%d comments, want one per leg", len(gh.comments))
	}
	for _, n := range names {
		if c, ok := gh.comments["<!-- sgpu-queue:rocm-ci/"+n+" -->"]; !ok || !strings.Contains(c, "## ✓ sgpu-queue:") || strings.Contains(c, "✗") {
			t.Errorf("no green comment for %s among %v:\n%s", n, sortedKeys(gh.comments), c)
		}
	}
}

// demoAction is the demo fixture with its fake GPU tools on PATH, a pull_request
// event and gh as the GitHub API: the environment to run the action with inputs.
func demoAction(t *testing.T, gh *fakeGitHub, inputs map[string]string, extra ...string) (dir string, env []string, outFile, sumFile string) {
	t.Helper()
	dir = fixture(t, "demo")
	api := httptest.NewServer(gh)
	t.Cleanup(api.Close)
	event, _ := filepath.Abs(filepath.Join("..", "internal", "publish", "testdata", "events", "pull_request_opened.json"))
	env, outFile, sumFile = runner(t, dir, inputs, append([]string{"PATH=" + filepath.Join(dir, "bin") + ":" + os.Getenv("PATH"),
		"GITHUB_API_URL=" + api.URL + "/", "GITHUB_EVENT_PATH=" + event}, extra...)...)
	return dir, env, outFile, sumFile
}

// demoAtLevel1 runs the action on a copy of the demo with these config files at
// level 1, its fake GPU tools on PATH, and fails unless it exits 0; it returns the
// copy, the PATH assignment and the step's outputs.
func demoAtLevel1(t *testing.T, config string) (dir, path string, out map[string]string) {
	t.Helper()
	dir = fixture(t, "demo")
	path = "PATH=" + filepath.Join(dir, "bin") + ":" + os.Getenv("PATH")
	env, outFile, _ := runner(t, dir, map[string]string{"config": config}, path, "TEST_LEVEL=1")
	if r := sgpu(t, dir, env, "action"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	return dir, path, parseOutputs(t, outFile)
}

// publish: none writes nothing anywhere: no summary, no API call (with a token and a
// pull request there to publish to).
func TestActionPublishNone(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	gh := newFakeGitHub()
	dir, env, outFile, sumFile := demoAction(t, gh, map[string]string{"config": "ci/sgpu.conf", "publish": "none"})
	r := sgpu(t, dir, env, "action")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	if s := readFile(t, sumFile); s != "" {
		t.Errorf("publish: none wrote a summary:\n%.300s", s)
	}
	if n := gh.count("", ""); n != 0 {
		t.Errorf("publish: none made %d API calls", n)
	}
	if out := parseOutputs(t, outFile); out["result"] != "success" {
		t.Errorf("outputs %v", out)
	}
	// A config error with publish: none writes no summary either.
	env, _, sumFile = runner(t, dir, map[string]string{"config": "missing.conf", "publish": "none"})
	if r := sgpu(t, dir, env, "action"); r.code != 2 || readFile(t, sumFile) != "" {
		t.Errorf("config error: exit %d, summary %q", r.code, readFile(t, sumFile))
	}
}

// A token without the permission is a warning that names it and says where the
// report really is (no summary here); a 5xx is retried until it works, each retry
// seen by the server and noted in the log.
func TestActionPublishForbiddenAndRetried(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	gh := newFakeGitHub()
	gh.fail["POST check-runs"] = []int{403}
	// The green run edits the comment an earlier run left (as id 7).
	marker := "<!-- sgpu-queue:rocm-ci/sgpu-queue (sgpu) -->"
	gh.comments[marker] = marker + "\n## ✗ sgpu-queue: an earlier red run"
	gh.fail["PATCH 7"] = []int{502, 503}
	dir, env, _, sumFile := demoAction(t, gh, map[string]string{"config": "ci/sgpu.conf", "publish": "check comment"})
	r := sgpu(t, dir, env, "action")
	if r.code != 0 {
		t.Fatalf("a publishing failure failed the step: exit %d\n%s", r.code, r.stdout)
	}
	var warn string
	for _, l := range lines(r.stdout) {
		if strings.HasPrefix(l, "::warning::publish: cannot publish the check run") {
			warn = l
		}
	}
	if !strings.Contains(warn, "the token lacks `checks: write`") || strings.Contains(warn, "job summary") ||
		!strings.Contains(warn, "the report is test-results/logs/report/schedule.md") {
		t.Errorf("403 warning %q\n%s", warn, r.stdout)
	}
	if readFile(t, sumFile) != "" {
		t.Error("a summary was written without publish: summary")
	}
	if n := gh.count("POST", "/check-runs"); n != 1 {
		t.Errorf("%d check-run attempts: a 403 is not retried", n)
	}
	if n := gh.count("PATCH", "/comments/7"); n != 3 {
		t.Errorf("%d comment attempts, want 2 failures and the retry that worked", n)
	}
	for _, want := range []string{"publish: GitHub API: retry 1 of 4 of PATCH /repos/ROCm/TransformerEngine/issues/comments/7 after HTTP 502",
		"retry 2 of 4 of PATCH /repos/ROCm/TransformerEngine/issues/comments/7 after HTTP 503", "PR comment: https://github.com/"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// An API that refuses connections costs one retry of the check run (its schedule:
// publish.Retry.NoAnswerWaits), a warning, and no try at the comment, never the step.
func TestActionPublishUnreachable(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	// The port is held on 127.0.0.1, so no parallel test's server takes it, and
	// dialled on 127.0.0.2, where nothing listens: refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	refused := "http://127.0.0.2:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "/"
	dir, env, _, _ := demoAction(t, newFakeGitHub(), map[string]string{"config": "ci/sgpu.conf", "publish": "summary check comment"},
		"GITHUB_API_URL="+refused)
	r := sgpu(t, dir, env, "action")
	if r.code != 0 {
		t.Fatalf("an unreachable API failed the step: exit %d\n%s", r.code, r.stdout)
	}
	var warns, retries []string
	for _, l := range lines(r.stdout) {
		switch {
		case strings.HasPrefix(l, "::warning::publish"):
			warns = append(warns, l)
		case strings.Contains(l, "publish: GitHub API: retry"):
			retries = append(retries, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "cannot publish the check run: the GitHub API cannot be reached (2 attempt(s))") ||
		!strings.Contains(warns[0], "the report is in the job summary") {
		t.Errorf("warnings %q, want one for the check run", warns)
	}
	if len(retries) != 1 || !strings.Contains(retries[0], "retry 1 of 4 of POST /repos/ROCm/TransformerEngine/check-runs after no answer") {
		t.Errorf("retries %q, want one", retries)
	}
	if !strings.Contains(r.stdout, "publish: no PR comment: the GitHub API could not be reached for the check run") {
		t.Errorf("the log does not say the comment was skipped:\n%s", r.stdout)
	}
}

// A cache service that fails every call costs warnings, never the step.
func TestActionCacheDown(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	dir := fixture(t, "demo")
	cacheSrv := cachetest.New(t)
	cacheSrv.SetMode(cachetest.Fail)
	env, outFile, _ := runner(t, dir, map[string]string{"config": "ci/sgpu.conf"},
		append(cacheSrv.Env(), "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"))...)
	r := sgpu(t, dir, env, "action")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	out := parseOutputs(t, outFile)
	if out["result"] != "success" || out["cache-hit"] != "false" {
		t.Errorf("outputs %v", out)
	}
	n := 0
	for _, l := range lines(r.stdout) {
		if strings.HasPrefix(l, "::warning::") && strings.Contains(l, "weights cache: ") && strings.Contains(l, "HTTP 500") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d cache warnings, want one for the restore and one for the save:\n%s", n, r.stdout)
	}
	// One line per outcome: the failed restore is its warning, not also a miss.
	if strings.Contains(r.stdout, "cache miss") {
		t.Errorf("a failed restore is also said as a cache miss:\n%s", r.stdout)
	}
}

func TestActionConfigError(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	dir := fixture(t, "e2e")
	os.WriteFile(filepath.Join(dir, "bad.conf"), []byte("alpha alpha.log sideways ci/alpha.sh\n"), 0o644)
	env, outFile, sumFile := runner(t, dir, map[string]string{"config": "bad.conf", "gpus": "2"})
	r := sgpu(t, dir, env, "action")
	if r.code != 2 {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	out := parseOutputs(t, outFile)
	if out["result"] != "failure" || out["exit-code"] != "2" {
		t.Errorf("outputs %v", out)
	}
	if !strings.Contains(r.stdout, `::error title=sgpu-queue stopped before running the suites::`) || !strings.Contains(r.stdout, `bad.conf:1: suite "alpha": unknown mode "sideways"`) {
		t.Errorf("log:\n%s", r.stdout)
	}
	if !strings.Contains(readFile(t, sumFile), "stopped before running") {
		t.Error("summary does not say why")
	}
	env, _, _ = runner(t, dir, map[string]string{"config": "ci/nothing*.conf", "gpus": "2"})
	if r := sgpu(t, dir, env, "action"); r.code != 2 || !strings.Contains(r.stdout, `input config: "ci/nothing*.conf" matches nothing`) {
		t.Errorf("a config glob that matches nothing: exit %d\n%s", r.code, r.stdout)
	}
	env, _, _ = runner(t, dir, map[string]string{"config": "ci/queue.conf", "gpus": "2", "retries": "many"})
	if r := sgpu(t, dir, env, "action"); r.code != 2 || !strings.Contains(r.stdout, `input retries "many": want a whole number`) {
		t.Errorf("bad input: exit %d\n%s", r.code, r.stdout)
	}
}

// TE's scripts write <prefix><tag><suffix> and add no extension themselves (the
// demo's _utils.sh does the same): the action sets both variables, so every item's
// file is found and merged, with its test cases' file, line and properties; the raw
// files are where TE's layout puts them, test-results/<label>/<tag>.xml (TE's report
// step reads that folder; the upload of test-results/ carries it), and the merged
// ones in test-results/junit/, which the junit-files output lists. A later CLI run
// with a prefix but no suffix still merges (the engine passes the suffix), and
// removes the merged file of a suite it no longer runs, never a user's file.
func TestActionJUnitLikeTE(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	dir, path, out := demoAtLevel1(t, "ci/sgpu.conf")
	if got := out["junit-files"]; got != "test-results/junit/examples.xml\ntest-results/junit/torch.xml\ntest-results/junit/jax.xml\ntest-results/junit/core.xml" {
		t.Errorf("junit-files %q", got)
	}
	torch := readFile(t, filepath.Join(dir, "test-results", "junit", "torch.xml"))
	if !strings.Contains(torch, `tests="8"`) ||
		!strings.Contains(torch, `<testcase name="test_test_sanity.ck" classname="demo.test_sanity.ck" time="0.800" file="tests/demo/test_test_sanity.ck.py" line="42">`) ||
		!strings.Contains(torch, `<property name="item" value="test_sanity.ck"></property>`) {
		t.Errorf("torch.xml lost cases, file/line or properties:\n%s", torch)
	}
	validateJUnit(t, filepath.Join(dir, "test-results", "junit", "torch.xml"))
	if _, err := os.Stat(filepath.Join(dir, "test-results", "torch", "test_sanity.ck.xml")); err != nil {
		t.Errorf("the raw file is not where TE's layout puts it: %v", err)
	}
	var globbed []string
	cases := 0
	filepath.WalkDir(filepath.Join(dir, "test-results", "junit"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".xml") && filepath.Dir(p) == filepath.Join(dir, "test-results", "junit") {
			rel, _ := filepath.Rel(dir, p)
			globbed = append(globbed, rel)
			cases += strings.Count(readFile(t, p), "<testcase ")
		}
		return nil
	})
	if len(globbed) != 4 || cases != 12 {
		t.Errorf("test-results/junit/*.xml finds %d cases in %q, want the 12 of the 4 merged files", cases, globbed)
	}

	// The CLI, a prefix without suffix, a config without jax, and a user's file.
	os.WriteFile(filepath.Join(dir, "test-results", "junit", "mine.xml"), []byte("<testsuites/>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ci", "two.conf"), []byte("torch torch.log list ci/pytorch.sh\ncore core.log opaque ci/core.sh\n"), 0o644)
	r := sgpu(t, dir, []string{path, "TEST_LEVEL=1", "JUNITXML_PREFIX=raw-junit/"}, "run", "--gpus", "4", "ci/two.conf")
	if r.code != 0 {
		t.Fatalf("CLI: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "raw-junit", "torch", "test_sanity.ck.xml")); err != nil {
		t.Errorf("no suffix was passed with the prefix: %v", err)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "test-results", "junit", "torch.xml")), `tests="8"`) {
		t.Error("the CLI's merge found nothing")
	}
	// Suites this run did not run keep an earlier run's files (docs/files.md): none is
	// deleted, and the run says which it left.
	for _, keep := range []string{"mine.xml", "examples.xml", "jax.xml"} {
		if _, err := os.Stat(filepath.Join(dir, "test-results", "junit", keep)); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
	if !strings.Contains(r.stdout, "junit: left test-results/junit/examples.xml, test-results/junit/jax.xml (not run here") {
		t.Errorf("the files left are not said:\n%s", r.stdout)
	}
}

// The step's credentials stay with the action: its suites' processes (an item that
// dumps its whole environment, hyphenated names included, and fails) never see the
// github-token input, the runtime token of the cache or the OIDC request token, so
// no item log, JUnit file, summary, output, check run or comment holds one. A token
// the workflow hands the step on purpose (env: GH_TOKEN) does reach the items, but
// what the action publishes is scrubbed of it.
func TestActionKeepsCredentialsFromSuites(t *testing.T) {
	t.Parallel() // sleep-bound: each has its own fixture copy, fake GitHub and cache server
	dir := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(filepath.Join(dir, "ci"), 0o755)
	os.WriteFile(filepath.Join(dir, "ci", "env.cmds"), []byte("dump tr '\\0' '\\n' </proc/$$/environ; exit 1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ci", "env.conf"), []byte("env env.log cmd ci/env.cmds\n"), 0o644)
	gh := newFakeGitHub()
	api := httptest.NewServer(gh)
	defer api.Close()
	cacheSrv := cachetest.New(t)
	event, _ := filepath.Abs(filepath.Join("..", "internal", "publish", "testdata", "events", "pull_request_opened.json"))
	const oidc = "oidcRequestToken0123456789"
	env, outFile, sumFile := runner(t, dir, map[string]string{"config": "ci/env.conf", "gpus": "1", "arch": "gfx942", "publish": "summary check comment"},
		append(cacheSrv.Env(), "GITHUB_API_URL="+api.URL+"/", "GITHUB_EVENT_PATH="+event, "ACTIONS_ID_TOKEN_REQUEST_TOKEN="+oidc,
			"ACTIONS_ID_TOKEN_REQUEST_URL=https://token.actions.example/x", "GH_TOKEN="+token, "MY_SETTING=kept")...)
	r := sgpu(t, dir, env, "action")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the item fails)\n%s", r.code, r.stdout)
	}
	log := readFile(t, filepath.Join(dir, "test-results", "logs", "items", "env.dump.log"))
	if !strings.Contains(log, "MY_SETTING=kept") || !strings.Contains(log, "GH_TOKEN=") {
		t.Fatalf("the item did not see the step's own environment:\n%s", log)
	}
	for _, name := range []string{"INPUT_", "ACTIONS_RUNTIME_TOKEN=", "ACTIONS_ID_TOKEN_REQUEST_", "ACTIONS_RESULTS_URL=", "ACTIONS_CACHE_URL="} {
		if strings.Contains(log, name) {
			t.Errorf("the item saw the action's %s…", name)
		}
	}
	secrets := map[string]string{"github-token": token, "runtime token": cacheSrv.Token(), "OIDC request token": oidc}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		for what, s := range secrets {
			if what != "github-token" && strings.Contains(string(data), s) {
				t.Errorf("%s holds the %s", p, what)
			}
		}
		return nil
	})
	published := map[string]string{"the summary": readFile(t, sumFile), "the outputs": readFile(t, outFile)}
	gh.mu.Lock()
	for i, c := range gh.checks {
		b, _ := json.Marshal(c)
		published[fmt.Sprintf("check run %d", i)] = string(b)
	}
	for _, b := range gh.comments {
		published["the comment"] = b
	}
	gh.mu.Unlock()
	if len(published) != 4 || !strings.Contains(published["the summary"], "GH_TOKEN=***") {
		t.Errorf("published %v; want the summary (with the item's log tail), the outputs, a check run and a comment", sortedKeys(published))
	}
	for where, text := range published {
		for what, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the %s", where, what)
			}
		}
	}
	for i, l := range lines(r.stdout + r.stderr) {
		for what, s := range secrets {
			if strings.Contains(l, s) && l != "::add-mask::"+s {
				t.Errorf("log line %d shows the %s: %q", i, what, l)
			}
		}
	}
}

// A cancel of the job (the runner's SIGTERM) while a multi-GPU item runs: the step
// stops it, leaves no process behind, and still presents the run as cancelled: the
// outputs agree with the exit code, the summary says so without a relative link,
// and the check run and the comment are published with the cancelled conclusion.
func TestActionCancelled(t *testing.T) {
	dir := fixture(t, "procs")
	mark := proctest.Mark()
	started := filepath.Join(dir, "started")
	gh := newFakeGitHub()
	api := httptest.NewServer(gh)
	defer api.Close()
	event, _ := filepath.Abs(filepath.Join("..", "internal", "publish", "testdata", "events", "pull_request_opened.json"))
	env, outFile, sumFile := runner(t, dir, map[string]string{"config": "ci/block.conf", "gpus": "0,1,2", "arch": "gfx942", "grace": "1s",
		"publish": "summary check comment"}, "ITEMS=escape plain", "STARTED="+started, "GITHUB_API_URL="+api.URL+"/", "GITHUB_EVENT_PATH="+event)
	var out strings.Builder
	cmd := procsRun(t, dir, mark, env, "action")
	startUntil(t, cmd, &out, started)
	cmd.Process.Signal(syscall.SIGTERM)
	code := finish(t, cmd, &out)
	proctest.NoSurvivors(t, mark)
	o := parseOutputs(t, outFile)
	if code == 0 || o["exit-code"] != strconv.Itoa(code) || o["result"] != "failure" {
		t.Errorf("exit %d, outputs result %q exit-code %q\n%s", code, o["result"], o["exit-code"], out.String())
	}
	var failed []string
	if err := json.Unmarshal([]byte(o["failed-items"]), &failed); err != nil || !slices.Contains(failed, "block/escape") {
		t.Errorf("failed-items %q (%v), want the cancelled block/escape", o["failed-items"], err)
	}
	s := readFile(t, sumFile)
	if !strings.Contains(s, "cancelled") {
		t.Errorf("the summary does not say the run was cancelled:\n%.600s", s)
	}
	noRelativeLinks(t, "the summary", s)
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if len(gh.checks) != 1 || gh.checks[0]["conclusion"] != "cancelled" || len(gh.comments) != 1 {
		t.Errorf("%d check runs (%v), %d comments; want one each, the check run cancelled\n%s", len(gh.checks), gh.checks, len(gh.comments), out.String())
	}
}

// ACTIONS_CACHE_MODE, as the runner passes it to a container action whose job's cache
// access is limited: read restores and saves nothing, write-only saves without a
// lookup, none does neither; the log says what was skipped and the outputs agree.
func TestActionCacheMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode            string
		restore, save   bool
		skipped, hitOut string
	}{
		{"read", true, false, "cache: save skipped: ACTIONS_CACHE_MODE=read", "true"},
		{"write-only", false, true, "cache: restore skipped: ACTIONS_CACHE_MODE=write-only", "false"},
		{"none", false, false, "cache: restore skipped: ACTIONS_CACHE_MODE=none", "false"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t, "e2e")
			cacheSrv := cachetest.New(t)
			cacheSrv.Put("sgpu-weights-gfx942-l1-4000-1", "", []byte("gamma 0.7\nnorth/n.one 0.4\n"))
			env, outFile, _ := runner(t, dir, map[string]string{"config": "ci/shards.conf", "gpus": "0,1", "arch": "gfx942"},
				append(cacheSrv.Env(), "TEST_LEVEL=1", "ACTIONS_CACHE_MODE="+tc.mode)...)
			r := sgpu(t, dir, env, "action")
			out := parseOutputs(t, outFile)
			lookups, creates := len(cacheSrv.CallsTo(cachetest.OpGetDownloadURL)), len(cacheSrv.CallsTo(cachetest.OpCreate))
			if r.code != 0 || (lookups > 0) != tc.restore || (creates > 0) != tc.save || out["cache-hit"] != tc.hitOut || !strings.Contains(r.stdout, tc.skipped) {
				t.Errorf("exit %d, %d lookups, %d saves, cache-hit %q; want restore %v, save %v, %q in the log\n%s",
					r.code, lookups, creates, out["cache-hit"], tc.restore, tc.save, tc.skipped, r.stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, out["weights-file"])); err != nil {
				t.Errorf("the local table is written whatever the mode: %v", err)
			}
		})
	}
}

// A step with several bad inputs says every one at once, each on its own line
// naming the input, and runs nothing: a bad publish or shards no longer hides the
// bad retries and grace.
func TestActionInputErrorsAtOnce(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	trace := filepath.Join(t.TempDir(), "trace")
	env, outFile, sumFile := runner(t, dir, map[string]string{"config": "ci/queue.conf", "gpus": "2", "publish": "bogus",
		"shards": "3", "retries": "many", "grace": "soon"}, "SGPU_TRACE="+trace)
	r := sgpu(t, dir, env, "action")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stdout)
	}
	if out := parseOutputs(t, outFile); out["result"] != "failure" || out["exit-code"] != "2" {
		t.Errorf("outputs %v", out)
	}
	sum := readFile(t, sumFile)
	for _, w := range []string{`input publish "bogus": want any of`, "input shards is read by mode plan only", `input retries "many": want a whole number`, `input grace "soon": want a duration`} {
		if !strings.Contains(sum, "\n"+w) {
			t.Errorf("the summary has no line starting %q:\n%s", w, sum)
		}
		if !strings.Contains(r.stdout, w) {
			t.Errorf("the log does not say %q:\n%s", w, r.stdout)
		}
	}
	if _, err := os.Stat(trace); err == nil {
		t.Error("a suite ran although the inputs were bad")
	}
}
