package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/adaptertest"
	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
)

// rerunFixture is testdata/rerun (TE's current shapes: two list suites whose items
// write TE's .failed/.narrowed sidecars, an opaque suite) with the run's trace file.
type rerunFixture struct {
	dir, trace string
}

func newRerunFixture(t *testing.T) *rerunFixture {
	t.Helper()
	dir := fixture(t, "rerun")
	return &rerunFixture{dir: dir, trace: filepath.Join(dir, "trace.tsv")}
}

// run runs the queue on two fake GPUs with env, after emptying the trace; it
// returns the result and what ran: "<tag>\t<test>\t<TE_CI_ONLY_TESTS>" lines.
func (f *rerunFixture) run(t *testing.T, env []string, args ...string) (result, []string) {
	t.Helper()
	if err := os.WriteFile(f.trace, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := sgpu(t, f.dir, append(env, "RERUN_TRACE="+f.trace),
		append([]string{"run", "--gpus", "0,1", "--arch", "gfx942"}, append(args, "ci/ci_sgpu_queue.conf")...)...)
	ran := lines(readFile(t, f.trace))
	slices.Sort(ran)
	return r, ran
}

func (f *rerunFixture) file(t *testing.T, rel string) string {
	t.Helper()
	return readFile(t, filepath.Join(f.dir, rel))
}

// weights is every weight table's content, by name.
func (f *rerunFixture) weights(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(f.dir, "ci-weights", "*"))
	out := map[string]string{}
	for _, p := range files {
		out[filepath.Base(p)] = readFile(t, p)
	}
	return out
}

const (
	failedList = "ci-rerun/sgpu/failed.gfx942.l99.tsv"
	testsOfB   = "ci-rerun/sgpu/tests/torch.tests.test_b.txt"
)

// TestRerunOnlyWhatFailed: attempt 1 fails one test of torch's test_b and the
// opaque core suite; the failed list and test_b's tests file say so in TE's layout.
// Attempt 2 (everything fixed) runs only test_b's failed test and core, gives jax
// its passing "not re-run this attempt" verdict, learns nothing and passes; it
// leaves an empty list, so attempt 3 runs everything again.
func TestRerunOnlyWhatFailed(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	r, ran := f.run(t, []string{"RERUN_FAIL=tests.test_b::t2", "RERUN_CORE_FAIL=1"})
	if r.code != 1 || len(ran) != 21 {
		t.Fatalf("attempt 1: exit %d with %d tests run, want 1 and all 21\n%s\n%s", r.code, len(ran), r.stdout, r.stderr)
	}
	if got := f.file(t, failedList); got != "torch\ttests.test_b\ncore\t\n" {
		t.Errorf("%s after attempt 1:\n%q", failedList, got)
	}
	if got := f.file(t, testsOfB); got != "tests/test_b.py::t2\n" {
		t.Errorf("%s after attempt 1: %q", testsOfB, got)
	}
	if !strings.Contains(r.stdout, "re-run: torch/tests.test_b re-runs 1 test(s) → "+testsOfB) {
		t.Errorf("attempt 1 does not say what test_b re-runs:\n%s", r.stdout)
	}
	learned := f.weights(t)
	if len(learned) == 0 {
		t.Fatal("attempt 1 learned no weight table")
	}

	r, ran = f.run(t, nil)
	only := filepath.Join(f.dir, testsOfB)
	want := []string{"core\twhole\tunset", "tests.test_b\tt2\t" + only}
	if r.code != 0 || !slices.Equal(ran, want) {
		t.Fatalf("attempt 2: exit %d, ran %q, want 0 and only %q\n%s\n%s", r.code, ran, want, r.stdout, r.stderr)
	}
	for _, w := range []string{
		"re-run: 2 item(s) failed the last attempt (" + failedList + "); queueing the 2 of them this run has, 1 narrowed to their failed tests",
		"a re-run: the weight table is left as it is",
		"not re-run this attempt (nothing of theirs failed the last one), passing: jax",
		"a re-run: 2 of the 2 item(s) that failed the last attempt ran again",
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("attempt 2's console lacks %q:\n%s", w, r.stdout)
		}
	}
	logs := "test-results/logs/suites/"
	if got := f.file(t, logs+"jax.log"); got != "not re-run this attempt: no item of this suite failed the last one\n" || f.file(t, logs+"jax.log.rc") != "0\n" {
		t.Errorf("jax's verdict on attempt 2: %q", got)
	}
	if got := f.file(t, logs+"torch.log"); strings.Count(got, "\n") != 1 || !strings.Contains(got, "tests.test_b") || f.file(t, logs+"torch.log.rc") != "0\n" {
		t.Errorf("torch's verdict on attempt 2 is not test_b's one passing line:\n%s", got)
	}
	md := f.file(t, "test-results/logs/report/schedule.md")
	for _, w := range []string{"**A re-run**: 2 of the 2 item(s) that failed the last attempt ran again (1 narrowed to their failed tests)",
		"**1 suite(s) not re-run**"} {
		if !strings.Contains(md, w) {
			t.Errorf("the report lacks %q:\n%s", w, md)
		}
	}
	if got := f.weights(t); !mapsEqual(got, learned) {
		t.Errorf("attempt 2 (a re-run) changed the weight tables:\n%v\nwas\n%v", got, learned)
	}
	if got := f.file(t, failedList); got != "" {
		t.Errorf("attempt 2 passed but left %s = %q", failedList, got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, testsOfB)); !os.IsNotExist(err) {
		t.Errorf("attempt 2 left %s (err %v): an item that passed keeps no tests file", testsOfB, err)
	}

	r, ran = f.run(t, nil)
	if r.code != 0 || len(ran) != 21 || strings.Contains(r.stdout, "re-run") {
		t.Errorf("attempt 3 after a green re-run: exit %d, %d tests run, want 0 and all 21 with no re-run\n%s", r.code, len(ran), r.stdout)
	}
}

// TestRerunWholeItem: an item that fails more than half its tests re-runs whole
// (no tests file; TE_CI_ONLY_TESTS set empty), and --full ignores the list.
func TestRerunWholeItem(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	r, _ := f.run(t, []string{"RERUN_FAIL=tests.jax.test_y::t1 tests.jax.test_y::t2 tests.jax.test_y::t3"})
	if r.code != 1 || !strings.Contains(r.stdout, "re-run: jax/tests.jax.test_y re-runs whole: 3 of its 4 tests is more than half of it") {
		t.Fatalf("attempt 1: exit %d\n%s", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "ci-rerun/sgpu/tests/jax.tests.jax.test_y.txt")); !os.IsNotExist(err) {
		t.Errorf("a tests file for an item that re-runs whole (err %v)", err)
	}
	r, ran := f.run(t, nil)
	want := []string{"tests.jax.test_y\tt1\t", "tests.jax.test_y\tt2\t", "tests.jax.test_y\tt3\t", "tests.jax.test_y\tt4\t"}
	if r.code != 0 || !slices.Equal(ran, want) {
		t.Errorf("attempt 2: exit %d, ran %q, want test_y whole with TE_CI_ONLY_TESTS empty\n%s", r.code, ran, r.stdout)
	}

	if err := os.WriteFile(filepath.Join(f.dir, failedList), []byte("jax\ttests.jax.test_x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, ran = f.run(t, nil, "--full")
	if r.code != 0 || len(ran) != 21 || strings.Contains(r.stdout, "re-run:") {
		t.Errorf("--full with a failed list: exit %d, %d tests run, want 0 and all 21\n%s", r.code, len(ran), r.stdout)
	}
}

// TestRerunGoneItems: a failed list that names no item this run has (the config
// changed under the re-run) runs everything, with a warning naming the list.
func TestRerunGoneItems(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	if err := os.MkdirAll(filepath.Join(f.dir, "ci-rerun", "sgpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, failedList), []byte("torch\ttests.test_gone\nexamples\t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, ran := f.run(t, nil)
	want := "warning: none of the 2 item(s) that failed the last attempt (" + failedList + ") is in this run's queue: running everything"
	if r.code != 0 || len(ran) != 21 || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d, %d tests run; want 0, all 21 and %q\n%s", r.code, len(ran), want, r.stdout)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestActionRerun: the action carries ci-rerun/ in the Actions cache by itself.
// Attempt 1 of run 4242 fails one test of test_b and core; attempt 2 of the same run,
// in a fresh checkout of the workspace, runs only those (output rerun: 2); a new run
// finds no state of its own and runs everything.
func TestActionRerun(t *testing.T) {
	t.Parallel()
	cacheSrv := cachetest.New(t)
	attempt := func(runID, n string, env ...string) (result, []string, map[string]string) {
		t.Helper()
		f := newRerunFixture(t) // a fresh checkout: nothing of an earlier attempt on disk
		inputs := map[string]string{"config": "ci/ci_sgpu_queue.conf", "gpus": "0,1", "arch": "gfx942", "publish": "summary"}
		renv, outFile, _ := runner(t, f.dir, inputs, append(cacheSrv.Env(),
			append(env, "GITHUB_RUN_ID="+runID, "GITHUB_RUN_ATTEMPT="+n, "RERUN_TRACE="+f.trace)...)...)
		if err := os.WriteFile(f.trace, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r := sgpu(t, f.dir, renv, "action")
		ran := lines(readFile(t, f.trace))
		slices.Sort(ran)
		return r, ran, parseOutputs(t, outFile)
	}
	r, ran, out := attempt("4242", "1", "RERUN_FAIL=tests.test_b::t2", "RERUN_CORE_FAIL=1")
	if r.code != 1 || len(ran) != 21 || out["rerun"] != "0" || !strings.Contains(r.stdout, "re-run state: saved 3 file(s) of ci-rerun/") {
		t.Fatalf("attempt 1: exit %d, %d tests, rerun %q\n%s", r.code, len(ran), out["rerun"], r.stdout)
	}
	r, ran, out = attempt("4242", "2")
	if r.code != 0 || len(ran) != 2 || ran[0] != "core\twhole\tunset" || !strings.HasPrefix(ran[1], "tests.test_b\tt2\t") || out["rerun"] != "2" {
		t.Errorf("attempt 2: exit %d, ran %q, rerun %q; want 0, core and test_b's t2, 2\n%s", r.code, ran, out["rerun"], r.stdout)
	}
	if !strings.Contains(r.stdout, "re-run state: restored sgpu-weights-rerun-4242-") {
		t.Errorf("attempt 2 does not say it restored the state:\n%s", r.stdout)
	}
	r, ran, out = attempt("4343", "1")
	if r.code != 0 || len(ran) != 21 || out["rerun"] != "0" {
		t.Errorf("a new run: exit %d, %d tests, rerun %q; want 0, all 21, 0\n%s", r.code, len(ran), out["rerun"], r.stdout)
	}
}

// TestRerunPytestAdapter: a pytest adapter item re-runs only its failed node id
// (from its JUnit: the adapter's items write xunit1), its passing file is not re-run.
func TestRerunPytestAdapter(t *testing.T) {
	t.Parallel()
	py := adaptertest.Python(t)
	dir := fixture(t, "rerun-pytest")
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace.txt")
	run := func(env ...string) (result, []string) {
		t.Helper()
		if err := os.WriteFile(trace, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "PATH="+bin+":"+os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1", "RERUN_TRACE="+trace)
		r := sgpu(t, dir, env, "run", "--gpus", "0,1", "--arch", "gfx942", "ci/pytest.conf")
		ran := lines(readFile(t, trace))
		slices.Sort(ran)
		return r, ran
	}
	r, ran := run("RERUN_FAIL_B=1")
	const id = "tests/test_four.py::test_b[x y]"
	if r.code != 1 || len(ran) != 5 {
		t.Fatalf("attempt 1: exit %d, ran %q; want 1 and all 5 tests\n%s", r.code, ran, r.stdout)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ci-rerun", "sgpu", "tests", "*.txt"))
	if len(files) != 1 || readFile(t, files[0]) != id+"\n" {
		t.Errorf("tests files %q: want one, holding %q", files, id)
	}
	r, ran = run()
	if r.code != 0 || !slices.Equal(ran, []string{id}) {
		t.Errorf("attempt 2: exit %d, ran %q; want 0 and only %q\n%s", r.code, ran, id, r.stdout)
	}
}
