package e2e

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/action"
	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
)

// prRun is one run of the action on TE's tree (testdata/te-current): torch and
// core, the item TE_FIXTURE_FAIL names failing a test, TE_FIXTURE_CRASH's dying in
// one; a push to dev, or a pull request into dev.
type prRun struct {
	stdout, summary string
	outputs         map[string]string
	code            int
}

func runPR(t *testing.T, dir string, pr bool, extra ...string) prRun {
	t.Helper()
	env, outFile, sumFile := runner(t, dir, map[string]string{"config": "ci/pr.conf", "gpus": "2", "arch": "gfx942",
		"publish": "summary check comment"}, append([]string{"TEST_LEVEL=1", "GITHUB_REF=refs/heads/dev"}, extra...)...)
	if pr {
		event, _ := filepath.Abs(filepath.Join("..", "internal", "publish", "testdata", "events", "pull_request_opened.json"))
		env = append(env, "GITHUB_BASE_REF=dev", "GITHUB_REF=refs/pull/1234/merge", "GITHUB_EVENT_NAME=pull_request",
			"GITHUB_EVENT_PATH="+event)
	}
	r := sgpu(t, dir, env, "action")
	return prRun{stdout: r.stdout, summary: readFile(t, sumFile), outputs: parseOutputs(t, outFile), code: r.code}
}

// The pull request is told of tests, not items (SPEC §21), through the action as the
// runner starts it: one ::error per failed test at its file and line (the node id of
// TE's .failed sidecar, the line from its traceback), titled with the test; the test
// a crashed item died in, from its .partial, in the errors, the summary and the
// outputs; the counts first; the change against dev's last run, whose record the
// push run left in the Actions cache; a PR comment only when something failed or
// changed, edited green once fixed.
func TestActionTestsOnThePR(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	if err := os.WriteFile(filepath.Join(dir, "ci", "pr.conf"), []byte("torch torch.log list ci/pytorch.sh\ncore core.log opaque ci/core.sh\n"),
		0o644); err != nil {
		t.Fatal(err)
	}
	gh := newFakeGitHub()
	api := httptest.NewServer(gh)
	defer api.Close()
	cacheSrv := cachetest.New(t)
	env := append(cacheSrv.Env(), "GITHUB_API_URL="+api.URL+"/")
	leg := "sgpu-queue (sgpu)"

	// dev, green: its record is saved for the pull requests into dev.
	push := runPR(t, dir, false, env...)
	key := action.BaseKeyPrefix("sgpu-weights", leg, "dev") + "l1-4242-1"
	if push.code != 0 || !strings.Contains(push.stdout, "base: saved "+key) {
		t.Fatalf("push: exit %d, no record saved under %s\n%s", push.code, key, push.stdout)
	}
	if gh.count("POST", "/comments") != 0 {
		t.Errorf("a push commented on a pull request")
	}

	// The pull request breaks a test and crashes an item in another.
	red := runPR(t, dir, true, append(env, "TE_FIXTURE_FAIL=test_numerics.ck", "TE_FIXTURE_CRASH=test_sanity.ck")...)
	if red.code == 0 {
		t.Fatalf("the red run passed\n%s", red.stdout)
	}
	for _, want := range []string{
		"::error file=tests/pytorch/test_numerics.py,line=12,title=tests/pytorch/test_numerics.py%3A%3Atest_x[1%2C 2]::" +
			"failed in torch/test_numerics.ck (log test-results/logs/items/torch.test_numerics.ck.log)%0AAssertionError: Tensor-likes are not close!\n",
		"::error file=tests/pytorch/test_sanity.py,title=tests/pytorch/test_sanity.py%3A%3Atest_b[1]::started and never finished " +
			"(its item died in it) in torch/test_sanity.ck",
		"base: restored " + key,
	} {
		if !strings.Contains(red.stdout, want) {
			t.Errorf("log lacks %q:\n%s", want, grepLines(red.stdout, "::error", "base:"))
		}
	}
	if n := strings.Count(red.stdout, "::error "); n != 2 {
		t.Errorf("%d errors, want one per failed test (no suite's: its tests stand for it):\n%s", n, grepLines(red.stdout, "::error"))
	}
	for _, want := range []string{
		"## ✗ sgpu-queue: 2 of 8 tests failed; 2 of 7 items failed at level 1\n",
		"**Since `dev`'s last run**, `0000000`: +2 tests · +1 failed · +1 errored · **2 new failure(s)**",
		"| `tests/pytorch/test_sanity.py::test_b[1]` | died in it, **new** | `torch/test_sanity.ck` | `tests/pytorch/test_sanity.py` |",
		"| `\"tests/pytorch/test_numerics.py::test_x[1, 2]\"` | failed, **new** | `torch/test_numerics.ck` | `tests/pytorch/test_numerics.py:12` |",
	} {
		if !strings.Contains(red.summary, want) {
			t.Errorf("summary lacks %q:\n%.2500s", want, red.summary)
		}
	}
	var counts map[string]any
	if err := json.Unmarshal([]byte(red.outputs["tests"]), &counts); err != nil || counts["failed"] != 1.0 || counts["errored"] != 1.0 ||
		counts["unfinished"] != 1.0 || counts["total"] != 8.0 {
		t.Errorf("tests output %s (%v)", red.outputs["tests"], err)
	}
	if got := red.outputs["failed-tests"]; got != `["tests/pytorch/test_numerics.py::test_x[1, 2]","tests/pytorch/test_sanity.py::test_b[1]"]` {
		t.Errorf("failed-tests output %s", got)
	}
	marker := "<!-- sgpu-queue:rocm-ci/" + leg + " -->"
	gh.mu.Lock()
	comment := gh.comments[marker]
	gh.mu.Unlock()
	if !strings.Contains(comment, "test_b[1]` | died in it") || len(comment) > 8<<10 {
		t.Errorf("comment (%d bytes):\n%s", len(comment), comment)
	}

	// Fixed: the comment is edited green; a green run with nothing to say, on a
	// pull request it never commented on, comments nothing.
	green := runPR(t, dir, true, env...)
	gh.mu.Lock()
	comment = gh.comments[marker]
	gh.mu.Unlock()
	if green.code != 0 || !strings.Contains(comment, "## ✓ sgpu-queue: 6 tests, none failed; all 7 items passed at level 1") {
		t.Errorf("the comment was not marked green:\n%s", comment)
	}
	gh.mu.Lock()
	gh.comments = map[string]string{}
	gh.mu.Unlock()
	quiet := runPR(t, dir, true, env...)
	if gh.count("POST", "/comments") != 1 || !strings.Contains(quiet.stdout, "no PR comment: nothing failed and nothing changed") {
		t.Errorf("a green run with nothing changed commented (%d creates):\n%s", gh.count("POST", "/comments"), quiet.stdout)
	}
}

// grepLines are the lines of s that contain any of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range lines(s) {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
