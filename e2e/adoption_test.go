package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/proctest"
)

// A re-run sets up only the suites that have something queued: one failed torch item
// re-runs with torch's setup and not jax's (a pip install of its own in TE's tree),
// as TE's run_queue.sh skips the setup of a suite with nothing queued.
func TestTECurrentRerunSetsUpOnlyWhatRuns(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	ck := filepath.Join(t.TempDir(), "ck")
	env := []string{"TE_FIXTURE_CK_TRACE=" + ck, "JUNITXML_PREFIX=test-results/junit/", "TEST_LEVEL=3"}
	args := []string{"run", "--gpus", "4", "--arch", "gfx942", "ci/ci_sgpu_queue.conf"}
	setups := func() []string {
		var out []string
		for _, f := range ckTrace(t, ck) {
			if f[0] == "setup" {
				out = append(out, f[1])
			}
		}
		os.Remove(ck)
		return out
	}
	r := sgpu(t, dir, append(env, "TE_FIXTURE_FAIL=test_sanity.ck"), args...)
	if got := setups(); r.code != 1 || !slices.Equal(got, []string{"pytorch.sh", "jax.sh"}) {
		t.Fatalf("attempt 1: exit %d, setups %q, want 1 and torch's and jax's\n%s", r.code, got, r.stdout)
	}
	r = sgpu(t, dir, env, args...)
	if got := setups(); r.code != 0 || !slices.Equal(got, []string{"pytorch.sh"}) || !strings.Contains(r.stdout, "a re-run: 1 of the 1 item(s)") {
		t.Errorf("the re-run: exit %d, setups %q, want 0 and torch's alone\n%s", r.code, got, r.stdout)
	}
	if want := "jax          nothing to re-run: no setup"; !strings.Contains(r.stdout, want) {
		t.Errorf("the re-run does not say why jax is not set up (%q):\n%s", want, r.stdout)
	}
}

// An empty --suites selects no suite, as TE's run_queue.sh does with one (set means
// "only these"), over TE_CI_SUITES too: every suite passes without running, no GPU is looked
// for. The action's empty suites input is every suite (it cannot be told from an unset
// one: docs/config.md).
func TestSuitesEmptySelectsNone(t *testing.T) {
	t.Parallel()
	confs := []string{"ci/ci_sgpu_queue.conf", "--mgpu-config", "ci/ci_mgpu_queue.conf"}
	dir := fixture(t, "te-current")
	trace := filepath.Join(t.TempDir(), "trace")
	r := sgpu(t, dir, []string{"TE_FIXTURE_TRACE=" + trace, "TE_CI_SUITES=torch"}, append([]string{"run", "--suites", ""}, confs...)...)
	if r.code != 0 || strings.Contains(r.stdout, "gpus:") || len(readTETrace(t, trace)) != 0 {
		t.Fatalf("--suites '': exit %d, %d items ran; want 0, none, no GPU looked for\n%s\n%s", r.code, len(readTETrace(t, trace)), r.stdout,
			r.stderr)
	}
	checkNotSelected(t, filepath.Join(dir, "test-results", "logs"), sortedKeys(teLogFiles)...)

	dir = fixture(t, "te-current")
	trace = filepath.Join(t.TempDir(), "trace")
	env, _, _ := runner(t, dir, map[string]string{"config": "ci/ci_sgpu_queue.conf", "mgpu-config": "ci/ci_mgpu_queue.conf", "suites": "",
		"gpus": "8", "arch": "gfx942"}, "PATH="+os.Getenv("PATH"), "TE_FIXTURE_TRACE="+trace)
	if r := sgpu(t, dir, env, "action"); r.code != 0 || len(readTETrace(t, trace)) != 19 {
		t.Errorf("the action's empty suites input: exit %d, %d items ran, want every suite's 19\n%s", r.code, len(readTETrace(t, trace)), r.stdout)
	}
}

// The action's log names the cache service that served the weights: nektos/act serves
// only v1, and the v2 service's 404 moves the store to it; the log said v2.
func TestActionNamesTheCacheThatServed(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	cache := cachetest.New(t)
	cache.SetMode(cachetest.NotFound, cachetest.OpGetDownloadURL, cachetest.OpCreate, cachetest.OpFinalize)
	env, _, _ := runner(t, dir, map[string]string{"config": "ci/ci_sgpu_queue.conf", "gpus": "2", "arch": "gfx942"},
		append([]string{"PATH=" + os.Getenv("PATH"), "ACTIONS_CACHE_URL=" + cache.CacheURL()}, cache.Env()...)...)
	r := sgpu(t, dir, env, "action")
	if r.code != 0 || !strings.Contains(r.stdout, "weights: Actions cache (v1) sgpu-weights-gfx942-l99-*") ||
		!strings.Contains(r.stdout, "cache: saved sgpu-weights-gfx942-l99-4242-1-") {
		t.Errorf("exit %d; the log does not name v1, which served:\n%s", r.code, r.stdout)
	}
}

// --env-script: what it exports reaches every item (an opaque one included); one that
// fails stops the run before anything ran (exit 1, its output in the message); a
// variable sgpu-queue sets for each command keeps sgpu-queue's value, with a warning.
func TestEnvScript(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	envs := filepath.Join(t.TempDir(), "env")
	base := []string{"TE_FIXTURE_ENV=" + envs}
	args := []string{"run", "--gpus", "2", "--arch", "gfx942", "ci/ci_sgpu_queue.conf", "--env-script"}
	r := sgpu(t, dir, base, append(args, "#!/bin/bash\nexport FROM_SCRIPT='a b' HIP_VISIBLE_DEVICES=7\necho sourced >&1")...)
	if r.code != 0 || !strings.Contains(r.stdout, "--env-script: 1 variable(s) for every command: FROM_SCRIPT") ||
		!strings.Contains(r.stdout, "    | sourced") ||
		!strings.Contains(r.stdout, "--env-script sets HIP_VISIBLE_DEVICES, which sgpu-queue sets itself for each command: its value is not used") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, item := range []string{"core.sh.whole.env", "pytorch.sh.test_jit.env"} {
		if env := "\n" + readFile(t, filepath.Join(envs, item)); !strings.Contains(env, "\nFROM_SCRIPT=a b\n") || strings.Contains(env, "HIP_VISIBLE_DEVICES=7") {
			t.Errorf("%s:\n%s", item, env)
		}
	}
	trace := filepath.Join(t.TempDir(), "trace")
	r = sgpu(t, dir, append(base, "TE_FIXTURE_TRACE="+trace), append(args, "echo cannot source >&2; false")...)
	if r.code != 1 || !strings.Contains(r.stderr, "--env-script exited with 1 before its end") || !strings.Contains(r.stderr, "cannot source") ||
		len(readTETrace(t, trace)) != 0 {
		t.Errorf("a failing env-script: exit %d, %d items ran, want 1 and none\n%s\n%s", r.code, len(readTETrace(t, trace)), r.stdout, r.stderr)
	}
}

// A hostile or careless --env-script: one that leaves processes behind (holding its
// output, or out of its group with setsid) neither hangs the run nor outlives it; one
// that hangs is stopped at --list-timeout; one that exits early, even with 0, is not
// taken as having run (its exports may be half made). The last two stop the run, exit
// 1, before any item ran.
func TestEnvScriptHostile(t *testing.T) {
	t.Parallel()
	mark := proctest.Mark()
	dir := fixture(t, "te-current")
	args := []string{"run", "--gpus", "2", "--arch", "gfx942", "--list-timeout", "3s", "ci/ci_sgpu_queue.conf", "--env-script"}
	r := sgpu(t, dir, nil, append(args, "export A=1\nsleep "+mark+" &\nsetsid sleep "+mark+" >/dev/null 2>&1 &\n")...)
	proctest.NoSurvivors(t, mark)
	if r.code != 0 || !strings.Contains(r.stdout, "--env-script: 1 variable(s) for every command: A") {
		t.Errorf("a script that leaves processes: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ name, script, want string }{
		{"hangs", "sleep " + mark, "--env-script did not end within 3s (--list-timeout) and was stopped"},
		{"exits 0 early", "export A=1\nexit 0\nexport B=2", "--env-script exited with 0 before its end"},
	} {
		trace := filepath.Join(t.TempDir(), "trace")
		r := sgpu(t, dir, []string{"TE_FIXTURE_TRACE=" + trace}, append(args, c.script)...)
		proctest.NoSurvivors(t, mark)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || len(readTETrace(t, trace)) != 0 {
			t.Errorf("a script that %s: exit %d, %d items ran; want 1, none and %q\n%s", c.name, r.code, len(readTETrace(t, trace)), c.want, r.stderr)
		}
	}
}
