package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/adaptertest"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/proctest"
	"github.com/rocm/sgpu-queue/internal/record"
)

// adapterRepo is a repo root holding the pytest tree and TE's CMake project of
// testdata/adapters and the configs of testdata/adapters/e2e, and the environment
// that runs it: python3 first on the PATH is an interpreter with pytest (skips
// loudly without one, or without CMake).
func adapterRepo(t *testing.T) (dir string, env []string) {
	t.Helper()
	py := adaptertest.Python(t)
	adaptertest.NeedCTest(t)
	dir = filepath.Join(t.TempDir(), "repo")
	for _, name := range []string{"adapters/pytest", "adapters/te", "adapters/e2e"} {
		copyFixture(t, name, dir)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1", "JUNITXML_PREFIX=test-results/junit/"}
}

// adapterItems are the items of testdata/adapters/e2e/ci/adapters.conf, by suite.
var adapterItems = map[string][]string{
	"unit": {"tests/test_error.py", "tests/test_fail.py", "tests/test_pass.py", "tests/test_skip.py",
		"tests/dir with space/test_with space.py", "tests/nested/deeper/test_deep.py"},
	"unit-ids": {"tests/test_pass.py::test_one", "tests/test_pass.py::test_two", "tests/test_error.py::test_fine_too"},
	"core": {"OperatorTest/CastTestSuite.TestCast", "OperatorTest/NormTestSuite.TestNorm", `Weird.Name(1)|[x]*?+$^\`,
		"Weird.Name", "Weird.Name2", "Space Name.Case", "Fails.Always", "Slow.PastTimeout"},
	"core-hipblaslt": {"OperatorTest/GEMMTestSuite.Testfp32xfp32"},
	"core-rocblas":   {"OperatorTest/GEMMTestSuite.Testfp32xfp32", "OperatorTest/GEMMTestSuite.Testbf16xbf16", "OperatorTest/GEMMTestSuite.Testfp8xfp8"},
	"kern": {"OperatorTest/CastTestSuite.TestCast/0", "OperatorTest/CastTestSuite.TestCast/1", "OperatorTest/CastTestSuite.TestCast/fp32Xfp16X1x2048",
		"OperatorTest/CastTestSuite.TestCast/bf16Xfp8X64x64", `Weird.Name(1)|[x]*?+$^\`, "Weird.Name", "Weird.Name2"},
	"smoke": {"hello", "junit", "fails"},
}

// The suite verdicts: the largest exit code of a failed item (pytest 1, ctest 8 for a
// failed test and for one CTest stopped at its own TIMEOUT, the cmd line's 4).
var adapterRCs = map[string]string{
	"unit": "1", "unit-ids": "0", "core": "8", "core-hipblaslt": "0", "core-rocblas": "0", "kern": "0", "smoke": "4",
}

// Every adapter mode in one run, twice, on two fake GPUs: the items each suite lists,
// the GPU each item saw, verdicts and exit code, outcomes, the merged JUnit against
// the schema, and weights learned under <label>/<tag> that order the second run,
// whose tags are the first's.
func TestAdapters(t *testing.T) {
	t.Parallel()
	dir, env := adapterRepo(t)
	args := []string{"run", "--gpus", "0,1", "--arch", "gfx942", "ci/adapters.conf"}
	r := sgpu(t, dir, env, args...)
	if r.code != 8 {
		t.Fatalf("exit %d, want 8 (the failed ctest items)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	t.Run("one build for the four ctest suites, before their listing", func(t *testing.T) {
		if n := strings.Count(r.stdout, "setup ok"); n != 1 || !strings.Contains(r.stdout, "(also for core-hipblaslt, core-rocblas, kern)") {
			t.Errorf("%d setup lines, want one shared by the ctest suites:\n%s", n, r.stdout)
		}
		if log := readFile(t, filepath.Join(logs, "prerequisite_ck_jit_status", "core.log")); !strings.Contains(log, "Build files have been written") {
			t.Errorf("setup log:\n%s", log)
		}
		for _, w := range []string{`unit         pytest -m 'not slow' tests`, `-E 'OperatorTest/GEMMTestSuite|MultiGpu'`} {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("the config echo lacks %q, quoted as the config reads it back:\n%s", w, r.stdout)
			}
		}
	})
	t.Run("items listed, census and queue", func(t *testing.T) {
		if diff := cmp.Diff(itemKeys(adapterItems), census(t, logs)); diff != "" {
			t.Errorf("items.tsv (-want +got):\n%s", diff)
		}
	})
	rows := timingRows(t, logs)
	t.Run("each item ran once, on one GPU, and saw that GPU", func(t *testing.T) {
		var ran []string
		for key, row := range rows {
			ran = append(ran, key)
			if row.GPU() != "0" && row.GPU() != "1" {
				t.Errorf("%s ran on gpu %q", key, row.GPU())
			}
		}
		sort.Strings(ran)
		if diff := cmp.Diff(itemKeys(adapterItems), ran); diff != "" {
			t.Errorf("items that ran (-want +got):\n%s", diff)
		}
		// ctest items: each test printed the pin it saw into the item's JUnit.
		for _, label := range []string{"core", "core-hipblaslt", "core-rocblas", "kern"} {
			for _, tag := range adapterItems[label] {
				row := rows[label+"/"+tag]
				xml := readFile(t, itemJUnit(dir, label, tag))
				if row.RC == 0 && !strings.Contains(xml, "HIP_VISIBLE_DEVICES="+row.GPU()+"\n") {
					t.Errorf("%s/%s ran on gpu%s, its tests saw otherwise:\n%s", label, tag, row.GPU(), xml)
				}
				if label == "core-rocblas" && !strings.Contains(xml, "NVTE_USE_ROCBLAS=1") {
					t.Errorf("%s/%s: env= of its line not seen:\n%s", label, tag, xml)
				}
			}
		}
		// pytest: the conftest records the pin as a property.
		xml := readFile(t, itemJUnit(dir, "unit-ids", "tests/test_pass.py::test_two"))
		if !strings.Contains(xml, `name="gpus" value="`+rows["unit-ids/tests/test_pass.py::test_two"].GPU()+`"`) {
			t.Errorf("test_two saw another GPU than it ran on:\n%s", xml)
		}
		// cmd: from the repo root, pinned.
		if log := readFile(t, filepath.Join(logs, "items", "smoke.hello.log")); log != "hello from gpu "+rows["smoke/hello"].GPU()+" in "+dir+"\n" {
			t.Errorf("smoke/hello log %q", log)
		}
		if entries, _ := os.ReadDir(filepath.Join(logs, "cwd")); len(entries) != 0 {
			t.Errorf("adapter items got working directories of their own: %v", entries)
		}
	})
	t.Run("verdicts, exit codes and outcomes", func(t *testing.T) {
		for label, rc := range adapterRCs {
			if got := readFile(t, filepath.Join(logs, "suites", strings.ReplaceAll(label, "-", "_")+".log.rc")); got != rc+"\n" {
				t.Errorf("suites/%s.log.rc = %q, want %s", label, got, rc)
			}
		}
		outcomes := outcomesOf(t, logs)
		for key, want := range map[string]string{
			"unit/tests/test_fail.py": "failed", "unit/tests/test_error.py": "failed", "unit/tests/test_skip.py": "ok",
			// CTest stops the test at its own TIMEOUT: a failed test, not a hang.
			"core/Slow.PastTimeout": "failed", "core/Fails.Always": "failed", "smoke/fails": "failed",
			// A cmd item need not write JUnit.
			"smoke/hello": "ok",
		} {
			if outcomes[key] != want {
				t.Errorf("%s: outcome %q, want %q", key, outcomes[key], want)
			}
		}
		if log := readFile(t, filepath.Join(logs, "items", logdir.ItemFileName("core", "Slow.PastTimeout", 0, false))); !strings.Contains(log, "Timeout") {
			t.Errorf("core/Slow.PastTimeout: CTest does not say it stopped the test at its TIMEOUT:\n%s", log)
		}
		verdict := readFile(t, filepath.Join(logs, "suites", "unit.log"))
		if !strings.Contains(verdict, "FAIL rc=1 items/unit.tests_test_fail.py~") {
			t.Errorf("suites/unit.log:\n%s", verdict)
		}
	})
	t.Run("merged JUnit", func(t *testing.T) {
		for label := range adapterItems {
			validateJUnit(t, filepath.Join(dir, "test-results", "junit", label+".xml"))
		}
		unit := readFile(t, filepath.Join(dir, "test-results", "junit", "unit.xml"))
		for _, w := range []string{
			`name="test_broken_math"`, `<failure message="AssertionError: a real failure`,
			`name="test_needs_broken_fixture"`, `<error message="failed on setup with &#34;RuntimeError: fixture setup fails`,
			`<skipped`, `name="suite_env" value="from-the-line"`,
			`<property name="sgpu.source" value="tests/dir with space/test_with space.py.xml">`,
		} {
			if !strings.Contains(unit, w) {
				t.Errorf("unit.xml lacks %s", w)
			}
		}
		if strings.Contains(unit, "test_deep_slow") {
			t.Error(`unit.xml has test_deep_slow: -m "not slow" was not kept`)
		}
		kern := readFile(t, filepath.Join(dir, "test-results", "junit", "kern.xml"))
		if !regexp.MustCompile(`name="Weird\.Name\(1\)\|\[x\]\*\?\+\$\^\\"`).MatchString(kern) || strings.Count(kern, "<testcase ") != 7 {
			t.Errorf("kern.xml: want the 7 tests, the one with a backslash among them:\n%s", kern)
		}
		core := readFile(t, filepath.Join(dir, "test-results", "junit", "core.xml"))
		if !strings.Contains(core, `name="Fails.Always"`) || !strings.Contains(core, "<failure") {
			t.Errorf("core.xml has no failure of Fails.Always:\n%s", core)
		}
		if smoke := readFile(t, filepath.Join(dir, "test-results", "junit", "smoke.xml")); !strings.Contains(smoke, `name="wrote-junit"`) {
			t.Errorf("smoke.xml lacks the JUnit its cmd line wrote:\n%s", smoke)
		}
	})
	table := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt")
	learned := weightsOf(t, table)
	t.Run("weights learned under label/tag", func(t *testing.T) {
		if diff := cmp.Diff(itemKeys(adapterItems), sortedKeys(learned)); diff != "" {
			t.Errorf("weight keys (-want +got):\n%s", diff)
		}
	})

	// The second run: the same tags, every item known, nothing new, nothing pruned
	// (--full: the first run's failures would narrow it to a re-run, which learns
	// nothing).
	r2 := sgpu(t, dir, env, append([]string{"run", "--full"}, args[1:]...)...)
	if r2.code != 8 {
		t.Fatalf("second run: exit %d\n%s\n%s", r2.code, r2.stdout, r2.stderr)
	}
	t.Run("second run: same tags, ordered from the first's weights", func(t *testing.T) {
		if diff := cmp.Diff(itemKeys(adapterItems), census(t, logs)); diff != "" {
			t.Errorf("items.tsv of the second run (-want +got):\n%s", diff)
		}
		for key, row := range timingRows(t, logs) {
			if !row.Known {
				t.Errorf("%s: unknown in the second run", key)
			}
		}
		queue, err := logdir.ParseQueue(strings.NewReader(readFile(t, filepath.Join(logs, "queue", "queue.tsv"))))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queue {
			key := q.Label + "/" + q.Tag
			if w, ok := learned[key]; !ok || w != q.Weight {
				t.Errorf("%s queued with %v, the first run learned %v", key, q.Weight, w)
			}
		}
		if !strings.Contains(r2.stdout, ", 0 pruned, ") || len(weightsOf(t, table)) != len(learned) {
			t.Errorf("the second run pruned or added keys:\n%s", r2.stdout)
		}
	})
	t.Run("the report rebuilds from the files", func(t *testing.T) { rebuildsIdentically(t, dir, logs) })
}

// itemJUnit is the JUnit file of an item of label, as the run names it.
func itemJUnit(dir, label, tag string) string {
	rel, _ := junit.ItemFile(tag, ".xml", true)
	return filepath.Join(dir, "test-results", "junit", label, filepath.FromSlash(rel))
}

// census reads queue/items.tsv as "label/tag" keys, sorted.
func census(t *testing.T, logs string) []string {
	t.Helper()
	var keys []string
	for _, line := range lines(readFile(t, filepath.Join(logs, "queue", "items.tsv"))) {
		label, tag, _ := strings.Cut(line, "\t")
		keys = append(keys, label+"/"+logdir.UnescapeField(tag))
	}
	sort.Strings(keys)
	return keys
}

// timingRows reads the run's attempts, by "label/tag" ("label/whole" for an opaque
// item); an item that ran twice fails the test.
func timingRows(t *testing.T, logs string) map[string]record.Attempt {
	t.Helper()
	run, _, err := logdir.Load(logs)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]record.Attempt{}
	for _, row := range run.Attempts {
		key := row.Label + "/" + row.Column()
		if _, dup := rows[key]; dup {
			t.Errorf("%s ran twice", key)
		}
		rows[key] = row
	}
	return rows
}

// itemKeys is every "label/tag" of m, sorted.
func itemKeys(m map[string][]string) []string {
	var keys []string
	for label, tags := range m {
		for _, tag := range tags {
			keys = append(keys, label+"/"+tag)
		}
	}
	sort.Strings(keys)
	return keys
}

// TE's core.conf as it is: its non-GEMM line lists MultiGpu/AllReduce.Sum, whose
// tests ask for two GPUs (RESOURCE_GROUPS): the item runs with two GPUs pinned. On
// one GPU the run refuses it before any item runs, naming it (exit 2).
func TestAdapterMultiGPUItem(t *testing.T) {
	t.Parallel()
	dir, env := adapterRepo(t)
	r := sgpu(t, dir, env, "run", "--gpus", "0,1", "--arch", "gfx942", "ci/core.conf")
	if r.code != 8 {
		t.Fatalf("exit %d, want 8 (its failing tests)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	xml := readFile(t, itemJUnit(dir, "core", "MultiGpu/AllReduce.Sum"))
	if !regexp.MustCompile(`HIP_VISIBLE_DEVICES=(0,1|1,0)\n`).MatchString(xml) {
		t.Errorf("the two-GPU item's tests did not see two GPUs:\n%s", xml)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "test-results", "logs", "queue", "timings.tsv")), "core\tMultiGpu/AllReduce.Sum\t0,1\t") {
		t.Error("timings.tsv does not name both GPUs of the two-GPU item")
	}
	r = sgpu(t, dir, env, "run", "--gpus", "0,", "--arch", "gfx942", "--log-dir", "one-gpu", "ci/core.conf")
	want := "item core/MultiGpu/AllReduce.Sum needs 2 GPUs but the pool has 1 (its own metadata asks for 2 (a ctest test's RESOURCE_GROUPS))"
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("on one GPU: exit %d, want 2 and %q\n%s", r.code, want, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "one-gpu", "queue", "timings.tsv")); err == nil {
		t.Error("an item ran on one GPU before the refusal")
	}
}

// verify checks every ctest and pytest item's own selection and skips the cmd suite.
func TestAdapterVerify(t *testing.T) {
	t.Parallel()
	dir, env := adapterRepo(t)
	r := sgpu(t, dir, env, "verify", "ci/adapters.conf")
	want := `unit: 6 pytest items each select exactly themselves, 0 mismatches
unit-ids: 3 pytest items each select exactly themselves, 0 mismatches
core: 8 ctest items each select exactly themselves, 0 mismatches
core-hipblaslt: 1 ctest items each select exactly themselves, 0 mismatches
core-rocblas: 3 ctest items each select exactly themselves, 0 mismatches
kern: 7 ctest items each select exactly themselves, 0 mismatches
smoke: cmd, skipped (each line is its own command: no selection to check)
`
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}

// A SIGINT while an adapter suite's setup= runs: the setup's processes are stopped,
// every suite gets its verdict ("cancelled before its items were listed"), the run
// exits 130 and learns nothing.
func TestAdapterSetupCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := proctest.Mark()
	t.Cleanup(func() { proctest.Kill(mark) })
	writeConf(t, dir, "smoke.cmds", "a true\n")
	writeConf(t, dir, "c.conf", "smoke smoke.log 'cmd,setup=touch started && sleep "+mark+"' smoke.cmds\n")
	cmd := exec.Command(binary, "run", "--gpus", "0,1", "--arch", "gfx942", "--grace", "1s", "c.conf")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Since(start) > time.Minute {
			cmd.Process.Kill()
			t.Fatalf("the setup never started:\n%s", out.String())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, 30*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, out.String())
	}
	proctest.NoSurvivors(t, mark)
	logs := filepath.Join(dir, "test-results", "logs")
	if rc := readFile(t, filepath.Join(logs, "suites", "smoke.log.rc")); rc != "130\n" {
		t.Errorf("smoke.log.rc = %q, want 130", rc)
	}
	if v := readFile(t, filepath.Join(logs, "suites", "smoke.log")); v != "FAIL rc=- (cancelled before its items were listed: none ran)\n" {
		t.Errorf("smoke.log = %q", v)
	}
	if _, err := os.Stat(filepath.Join(dir, "ci-weights")); !os.IsNotExist(err) {
		t.Errorf("a run that ran nothing wrote weights: %v", err)
	}
}

// An adapter suite's listing is its census: a line gone from a cmd file has its
// weight pruned, the others keep theirs.
func TestAdapterCensusPrunes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeConf(t, dir, "c.conf", "smoke smoke.log cmd smoke.cmds\n")
	run := func(lines string) result {
		t.Helper()
		writeConf(t, dir, "smoke.cmds", lines)
		r := sgpu(t, dir, nil, "run", "--gpus", "1", "--arch", "gfx942", "c.conf")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		return r
	}
	run("a true\nb true\ngone true\n")
	r := run("a true\nb true\n")
	if !strings.Contains(r.stdout, "pruned smoke/gone (no longer listed by its suite's census)") {
		t.Errorf("smoke/gone not pruned:\n%s", r.stdout)
	}
	w := weightsOf(t, filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt"))
	if diff := cmp.Diff([]string{"smoke/a", "smoke/b"}, sortedKeys(w)); diff != "" {
		t.Errorf("weight keys (-want +got):\n%s", diff)
	}
}
