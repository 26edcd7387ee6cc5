package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rocm/sgpu-queue/internal/action"
	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
)

const token = "ghs_e2eSecretToken0123456789"

// runner is the environment GitHub's runner gives a container action, with the
// inputs' defaults from action.yml (the runner passes those too).
func runner(t *testing.T, ws string, inputs map[string]string, extra ...string) ([]string, string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "output")
	summary := filepath.Join(t.TempDir(), "summary")
	os.WriteFile(out, nil, 0o644)
	os.WriteFile(summary, nil, 0o644)
	defaults := map[string]string{
		"level": "1", "log-dir": "test-results/logs", "junit-dir": "test-results/junit", "default-weight": "999999",
		"cache-key-prefix": "sgpu-weights", "dry-run": "false", "grace": "20s", "item-timeout-factor": "0",
		"item-timeout-min": "5m", "item-timeout-max": "0", "retries": "0", "flaky-is-failure": "false",
		"quarantine-threshold": "3", "publish": "summary", "github-token": token, "policy": "planned",
	}
	for k, v := range inputs {
		defaults[k] = v
	}
	env := []string{
		"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + ws, "GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + summary,
		"GITHUB_REPOSITORY=ROCm/TransformerEngine", "GITHUB_RUN_ID=4242", "GITHUB_RUN_ATTEMPT=1",
		"GITHUB_WORKFLOW=rocm-ci", "GITHUB_JOB=sgpu", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_SHA=0000000000000000000000000000000000000000", "HOME=" + t.TempDir(),
	}
	for k, v := range defaults {
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

// fakeGitHub records the REST calls the action makes.
type fakeGitHub struct {
	mu    sync.Mutex
	calls []string
	auth  []string
	check map[string]any
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/check-runs") {
		json.Unmarshal(body, &f.check)
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/check-runs"):
		w.WriteHeader(201)
		fmt.Fprint(w, `{"id":99,"html_url":"https://github.com/ROCm/TransformerEngine/runs/99"}`)
	case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/comments"):
		fmt.Fprint(w, `[]`)
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/comments"):
		w.WriteHeader(201)
		fmt.Fprint(w, `{"id":7,"html_url":"https://github.com/ROCm/TransformerEngine/pull/1234#issuecomment-7"}`)
	default:
		w.WriteHeader(404)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	}
}

// The action, run as the runner runs it, on the e2e fixtures: outputs, summary,
// annotations, merged JUnit, check run and comment, weights through the v2 cache.
func TestActionLikeTheRunner(t *testing.T) {
	dir := fixture(t, "e2e")
	gh := &fakeGitHub{}
	api := httptest.NewServer(gh)
	defer api.Close()
	cacheSrv := cachetest.New(t)
	event, _ := filepath.Abs(filepath.Join("..", "internal", "publish", "testdata", "events", "pull_request_opened.json"))
	inputs := map[string]string{"config": "ci/queue.conf", "gpus": "0,1,2", "arch": "gfx942", "publish": "summary check comment"}
	env, outFile, sumFile := runner(t, dir, inputs, append(cacheSrv.Env(),
		"GITHUB_API_URL="+api.URL+"/", "GITHUB_EVENT_PATH="+event, "SGPU_TRACE="+filepath.Join(dir, "trace"))...)
	r := sgpu(t, dir, env, "action")
	if r.code != 139 {
		t.Fatalf("exit %d, want 139\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := parseOutputs(t, outFile)

	t.Run("every output is set", func(t *testing.T) {
		for _, name := range append(action.Outputs, "rc-alpha", "rc-beta", "rc-gamma") {
			if _, ok := out[name]; !ok {
				t.Errorf("output %s missing", name)
			}
		}
		want := map[string]string{
			"result": "failure", "exit-code": "139", "failed-suites": `["alpha"]`, "rc-alpha": "139", "rc-beta": "0",
			"report": "test-results/logs/report/schedule.md", "weights-file": "ci-weights/test_weights.gfx942.l1.txt",
			"cache-hit": "false", "flaky-items": "[]", "quarantined-gpus": "[]",
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
		if err := json.Unmarshal([]byte(out["suites"]), &suites); err != nil || suites["alpha"]["failed"] != 2 || suites["beta"]["items"] != 4 {
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
	t.Run("log: groups, annotations, token", func(t *testing.T) {
		for _, want := range []string{"::group::Phase 0: read the config", "::group::Phase 4: run 11 items on 3 GPUs", "::endgroup::",
			"::error title=suite alpha failed::2 of 6 items failed (rc=139)", "cache miss for sgpu-weights-gfx942-l1-*", "cache: saved sgpu-weights-gfx942-l1-4242-1",
			"check run: https://github.com/ROCm/TransformerEngine/runs/99"} {
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
	t.Run("summary", func(t *testing.T) {
		s := readFile(t, sumFile)
		if !strings.Contains(s, "✗ sgpu-queue: 2 of 11 items failed") || !strings.Contains(s, "alpha") || len(s) > 1<<20 {
			t.Errorf("summary (%d bytes):\n%.500s", len(s), s)
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
		if gh.check["head_sha"] != "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01" || gh.check["conclusion"] != "failure" {
			t.Errorf("check run payload head_sha=%v conclusion=%v", gh.check["head_sha"], gh.check["conclusion"])
		}
		output, _ := gh.check["output"].(map[string]any)
		if anns, _ := output["annotations"].([]any); len(anns) != 2 {
			t.Errorf("%d annotations, want one per failed item", len(anns))
		}
	})
	t.Run("weights round-trip through the cache", func(t *testing.T) {
		if _, ok := cacheSrv.Lookup("sgpu-weights-gfx942-l1-4242-1", ""); !ok {
			t.Fatalf("no cache entry saved; entries %v", cacheSrv.Entries())
		}
		// A later run restores by prefix and is ordered from it, even with the
		// local file gone (a fresh runner).
		os.RemoveAll(filepath.Join(dir, "ci-weights"))
		env2, out2, _ := runner(t, dir, map[string]string{"config": "ci/queue.conf", "gpus": "3", "arch": "gfx942"},
			append(cacheSrv.Env(), "GITHUB_RUN_ID=4243")...)
		r2 := sgpu(t, dir, env2, "action")
		o2 := parseOutputs(t, out2)
		if o2["cache-hit"] != "true" || o2["cache-key"] != "sgpu-weights-gfx942-l1-4242-1" {
			t.Errorf("second run: cache-hit %q cache-key %q\n%s", o2["cache-hit"], o2["cache-key"], r2.stdout)
		}
		if !strings.Contains(r2.stdout, "(10 keys)") {
			t.Errorf("second run did not order from the restored table")
		}
		if _, ok := cacheSrv.Lookup("sgpu-weights-gfx942-l1-4243-1", ""); !ok {
			t.Error("second run saved nothing")
		}
	})
}

// A cache service that fails every call costs warnings, never the step.
func TestActionCacheDown(t *testing.T) {
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
}

func TestActionConfigError(t *testing.T) {
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
	if !strings.Contains(r.stdout, `::error title=sgpu-queue stopped before running the suites::`) || !strings.Contains(r.stdout, `bad.conf:1: unknown mode "sideways"`) {
		t.Errorf("log:\n%s", r.stdout)
	}
	if !strings.Contains(readFile(t, sumFile), "stopped before running") {
		t.Error("summary does not say why")
	}
	env, _, _ = runner(t, dir, map[string]string{"config": "ci/queue.conf", "gpus": "2", "retries": "many"})
	if r := sgpu(t, dir, env, "action"); r.code != 2 || !strings.Contains(r.stdout, `input retries "many": want a whole number`) {
		t.Errorf("bad input: exit %d\n%s", r.code, r.stdout)
	}
}
