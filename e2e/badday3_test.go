package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/adaptertest"
	"github.com/rocm/sgpu-queue/internal/logdir"
)

// writeXML is the shell line with which a fixture item writes its JUnit file as the
// hook contract asks (<prefix><tag><suffix>; every run has a prefix).
const writeXML = `[ -n "$JUNITXML_PREFIX" ] && printf '<testsuite name="x" tests="1"><testcase classname="x" name="%s"/></testsuite>\n' ` +
	`"$TEST_FILTER" >"$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX"
`

// tagsSuite writes ci/<name>.sh, a list suite whose items are the lines of $TAGS
// and whose item runs body (a shell script's lines).
func tagsSuite(t *testing.T, dir, name, body string) {
	t.Helper()
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then
    printf '%s\n' "$TAGS" | while IFS= read -r t; do [ -n "$t" ] && printf 'TE_CI_ITEM %s\n' "$t"; done
    exit 0
fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
` + body
	if err := os.WriteFile(filepath.Join(dir, "ci", name+".sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// codeSuite writes ci/codes.sh, a list suite whose items are the lines of $TAGS:
// an item named "exitN" exits N, any other passes.
func codeSuite(t *testing.T, dir string) {
	t.Helper()
	tagsSuite(t, dir, "codes", `echo "item $TEST_FILTER"
`+writeXML+`case $TEST_FILTER in exit*) exit "${TEST_FILTER#exit}" ;; esac
exit 0
`)
}

// An item that exits with one of the tool's own codes (2 usage, 70 internal, 130
// and 143 cancelled) by itself makes its suite's rc and the run's exit code 1: a
// run exiting 130 would read as cancelled. The item's own code stays in its verdict
// line and its .rc file.
func TestItemCodesThatAreTheTools(t *testing.T) {
	for _, code := range []string{"2", "70", "130", "143"} {
		t.Run(code, func(t *testing.T) {
			dir := fixture(t, "e2e")
			codeSuite(t, dir)
			conf := writeConf(t, dir, "codes.conf", "c c.log list ci/codes.sh\n")
			r := sgpu(t, dir, []string{"TAGS=ok1\nexit" + code + "\n"}, "run", "--gpus", "2", "--arch", "gfx942", conf)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			logs := filepath.Join(dir, "test-results", "logs")
			if rc := readFile(t, filepath.Join(logs, "suites", "c.log.rc")); rc != "1\n" {
				t.Errorf("c.log.rc = %q, want 1", rc)
			}
			verdict := readFile(t, filepath.Join(logs, "suites", "c.log"))
			if !strings.Contains(verdict, "FAIL rc="+code+" items/c.exit"+code+".log") {
				t.Errorf("verdict lost the item's own code %s:\n%s", code, verdict)
			}
			if rc := readFile(t, filepath.Join(logs, "items", "c.exit"+code+".log.rc")); strings.TrimSpace(rc) != code {
				t.Errorf("item .rc = %q, want %s", rc, code)
			}
			if !strings.Contains(r.stdout, "FAIL rc="+code+" c exit"+code) || !strings.Contains(r.stdout, "exit code 1\n") {
				t.Errorf("summary:\n%s", r.stdout)
			}
			if strings.Contains(r.stdout, "run cancelled") {
				t.Errorf("an item's own %s reads as a cancel:\n%s", code, r.stdout)
			}
		})
	}
}

// lockedBuffer is a run's console, read by the test while the run writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until the run's console holds want; a run that never prints it
// fails the test (the bound is generous: nothing here is timed).
func waitFor(t *testing.T, cmd *exec.Cmd, out *lockedBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); !strings.Contains(out.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%q never appeared:\n%s", want, out.String())
		}
	}
}

// A SIGTERM while phases 6–7 write the weights and the report (every item has
// ended) is honoured as docs/exit-codes.md says: what was measured is written in
// full (verdicts, weights, report), and the run exits 130, never 0, saying it was
// cancelled. The test hook holds phase 6 before the table is saved until the signal
// has been seen.
func TestSignalAfterItems(t *testing.T) {
	dir := fixture(t, "e2e")
	codeSuite(t, dir)
	conf := writeConf(t, dir, "codes.conf", "c c.log list ci/codes.sh\n")
	hold := filepath.Join(t.TempDir(), "go-on")
	cmd := exec.Command(binary, "run", "--gpus", "2", "--arch", "gfx942", conf)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TAGS=a\nb\n", "SGPU_TEST_HOLD_SAVE=" + hold}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, cmd, out, "== phase 6")
	cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, cmd, out, "SIGTERM: stopping dispatch")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code := waitExit(t, cmd, 60*time.Second)
	console := out.String()
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, console)
	}
	for _, w := range []string{"cancelled after its items ended", "== phase 7", "run cancelled", "exit code 130"} {
		if !strings.Contains(console, w) {
			t.Errorf("console lacks %q:\n%s", w, console)
		}
	}
	logs := filepath.Join(dir, "test-results", "logs")
	if rc := readFile(t, filepath.Join(logs, "suites", "c.log.rc")); rc != "0\n" {
		t.Errorf("c.log.rc = %q, want 0: both items passed", rc)
	}
	if w := lines(readFile(t, filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt"))); len(w) != 2 {
		t.Errorf("weight table %q, want both items learned", w)
	}
	readFile(t, filepath.Join(logs, "report", "schedule.md"))
	if meta := readFile(t, filepath.Join(logs, "queue", "run.json")); !strings.Contains(meta, `"cancelled": true`) {
		t.Errorf("run.json does not say cancelled:\n%s", meta)
	}
}

// A weight table that is there but cannot be read is never written over: the run
// orders without it, says the table will NOT be written, names it NOT written at the
// end, and the file keeps every key it held. A symlink loop is unreadable even to
// root; a file of mode 000 is, to anyone else.
func TestUnreadableWeightTableKept(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"symlink loop", func(t *testing.T, p string) {
			if err := os.Symlink(filepath.Base(p), p); err != nil {
				t.Fatal(err)
			}
		}},
		{"mode 000", func(t *testing.T, p string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 000")
			}
			if err := os.WriteFile(p, []byte("c/a 100.0\nc/z 7.0\n"), 0o000); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixture(t, "e2e")
			codeSuite(t, dir)
			conf := writeConf(t, dir, "codes.conf", "c c.log list ci/codes.sh\n")
			table := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt")
			os.MkdirAll(filepath.Dir(table), 0o755)
			tt.make(t, table)
			before, _ := os.Lstat(table)
			r := sgpu(t, dir, []string{"TAGS=a\nb\n"}, "run", "--gpus", "2", "--arch", "gfx942", conf)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0: the items passed\n%s%s", r.code, r.stdout, r.stderr)
			}
			rel := filepath.Join("ci-weights", "test_weights.gfx942.l99.txt")
			for _, w := range []string{"could not be read", "will NOT be written: the keys it holds are kept", "NOT written (see the warnings): " + rel} {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("console lacks %q:\n%s", w, r.stdout)
				}
			}
			after, err := os.Lstat(table)
			if err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the table was written over: %v → %v (%v)", before, after, err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(table)); len(entries) != 1 {
				t.Errorf("ci-weights holds %v, want the table alone", entries)
			}
		})
	}
}

// Hook and pin variables that share a name, with each other or with a variable the
// tool sets itself, are refused before anything runs: one line naming both uses,
// exit 2 (items would otherwise get their GPU id as their filter and run nothing,
// print the listing and pass, or run unpinned).
func TestClashingHookVariables(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"--pin-var", "TEST_FILTER"}, []string{"--pin-var \"TEST_FILTER\": TEST_FILTER is both the filter and the pin variable", "hook-var filter="}},
		{[]string{"--hook-var", "filter=TE_CI_LIST_ITEMS"}, []string{"--hook-var: TE_CI_LIST_ITEMS is both the filter and the list-items variable", "hook-var list-items="}},
		{[]string{"--pin-var", "TEST_LEVEL"}, []string{"--pin-var \"TEST_LEVEL\": TEST_LEVEL is both the level and the pin variable", "hook-var level="}},
		// Variables sgpu-queue sets of its own (the item's port, the other vendor's
		// visible-devices variable): items ran unpinned (--pin-var PET_MASTER_PORT)
		// or without their level.
		{[]string{"--pin-var", "PET_MASTER_PORT"},
			[]string{`--pin-var "PET_MASTER_PORT": PET_MASTER_PORT is both the pin and the port variable`, "pin-var and PET_MASTER_PORT"}},
		{[]string{"--hook-var", "level=PET_MASTER_PORT"},
			[]string{"--hook-var: PET_MASTER_PORT is both the level and the port variable", "hook-var level= and PET_MASTER_PORT"}},
		{[]string{"--pin-var", "HIP_VISIBLE_DEVICES", "--hook-var", "level=CUDA_VISIBLE_DEVICES"},
			[]string{"--hook-var: CUDA_VISIBLE_DEVICES is both the level and the also-pin variable", "hook-var level= and the other vendor's"}},
	} {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			dir := fixture(t, "e2e")
			codeSuite(t, dir)
			conf := writeConf(t, dir, "codes.conf", "c c.log list ci/codes.sh\n")
			args := append([]string{"run", "--gpus", "2", "--arch", "gfx942"}, tt.flags...)
			r := sgpu(t, dir, []string{"TAGS=a\n"}, append(args, conf)...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
			}
			errs := lines(r.stderr)
			if len(errs) != 1 {
				t.Fatalf("stderr %q, want one line", r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs[0], w) {
					t.Errorf("stderr %q lacks %q", errs[0], w)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "test-results")); err == nil {
				t.Error("the refused run wrote test-results/")
			}
		})
	}
}

// A list and an opaque suite see their env= settings (docs/config.md) in every
// command: both listing passes (queue and census), the setup, each item; the hook
// contract's own variables still win over an env= of the same name, and one suite's
// env= is not another's.
func TestEnvOptionOnListAndOpaque(t *testing.T) {
	dir := fixture(t, "e2e")
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then
    echo "list census=${TE_CI_SKIP_CHECK_SUPPORTED:-0} $1 ${MY_VAR-unset}" >>"$TRACE"
    [ "$MY_VAR" = from-config ] && printf 'TE_CI_ITEM a\nTE_CI_ITEM b\n'
    exit 0
fi
if [ -n "$TE_CI_SETUP_ONLY" ]; then
    echo "setup $1 ${MY_VAR-unset}" >>"$TRACE"
    exit 0
fi
echo "item $1 ${TEST_FILTER:-whole} ${MY_VAR-unset}" >>"$TRACE"
[ -n "$TEST_FILTER" ] && ` + writeXML + `[ "$MY_VAR" = "$2" ] || exit 5
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "envs.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "envs.conf", "l l.log list,env=MY_VAR=from-config,env=TEST_FILTER=wrong ci/envs.sh l from-config\n"+
		"o o.log opaque,env=MY_VAR=opaque-config ci/envs.sh o opaque-config\n")
	trace := filepath.Join(t.TempDir(), "trace")
	r := sgpu(t, dir, []string{"TRACE=" + trace}, "run", "--gpus", "2", "--arch", "gfx942", conf)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s\n%s", r.code, r.stdout, r.stderr, readFile(t, trace))
	}
	got := lines(readFile(t, trace))
	sort.Strings(got)
	want := []string{
		"item l a from-config", "item l b from-config", "item o whole opaque-config",
		"list census=0 l from-config", "list census=1 l from-config", "setup l from-config",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the commands saw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(r.stdout, "l               2 item(s) queued, census 2") {
		t.Errorf("listing:\n%s", r.stdout)
	}
}

// A list item's JUnit folder <prefix><label>/ is there before the item (and the
// setup) runs: a script that writes "$JUNITXML_PREFIX$TEST_FILTER.xml" without
// mkdir -p passes, and its XML reaches the merged file, instead of a no-run.
func TestListItemJUnitFolder(t *testing.T) {
	dir := fixture(t, "e2e")
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then printf 'TE_CI_ITEM a\nTE_CI_ITEM b\n'; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && { [ -d "$JUNITXML_PREFIX" ] || exit 9; exit 0; }
printf '<testsuite name="x" tests="1"><testcase classname="x" name="%s"/></testsuite>\n' "$TEST_FILTER" >"$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX"
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "xml.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "xml.conf", "x x.log list ci/xml.sh\n")
	r := sgpu(t, dir, []string{"JUNITXML_PREFIX=test-results/xml/"}, "run", "--gpus", "2", "--arch", "gfx942", conf)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	verdict := readFile(t, filepath.Join(dir, "test-results", "logs", "suites", "x.log"))
	if strings.Contains(verdict, "no-run") || strings.Count(verdict, "ok rc=0") != 2 {
		t.Errorf("verdict:\n%s", verdict)
	}
	for _, tag := range []string{"a", "b"} {
		readFile(t, filepath.Join(dir, "test-results", "xml", "x", tag+".xml"))
	}
	merged := readFile(t, filepath.Join(dir, "test-results", "junit", "x.xml"))
	if !strings.Contains(merged, `name="a"`) || !strings.Contains(merged, `name="b"`) {
		t.Errorf("merged JUnit lacks the items' cases:\n%s", merged)
	}
}

// A user's file in cwd/<label>.<tag>/ of a log dir that a --log-dir-reuse run wrote
// into (the item ran there, beside it) survives every later normal run: that folder
// was not the tool's, so run.json records it (foreign_cwd) and no run deletes it.
func TestReusedLogDirCwdSurvives(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then printf 'TE_CI_ITEM a\nTE_CI_ITEM b\n'; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
echo "$TEST_FILTER" >left_by_item
` + writeXML
	if err := os.WriteFile(filepath.Join(dir, "ci", "cwd.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "cwd.conf", "c c.log list ci/cwd.sh\n")
	logs := filepath.Join(dir, "logs")
	mine := filepath.Join(logs, "cwd", "c.a", "mine.txt")
	os.MkdirAll(filepath.Dir(mine), 0o755)
	if err := os.WriteFile(mine, []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--gpus", "2", "--arch", "gfx942", "--log-dir", "logs", conf}
	r := sgpu(t, dir, nil, append([]string{"run", "--log-dir-reuse"}, args[1:]...)...)
	if r.code != 0 {
		t.Fatalf("--log-dir-reuse run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(logs, "cwd", "c.a", "left_by_item")); got != "a\n" {
		t.Fatalf("the item did not run in cwd/c.a: %q", got)
	}
	for i := 1; i <= 2; i++ {
		r = sgpu(t, dir, nil, args...)
		if r.code != 0 {
			t.Fatalf("normal run %d: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
		}
		if got, err := os.ReadFile(mine); err != nil || string(got) != "the user's\n" {
			t.Fatalf("normal run %d deleted or changed the user's %s: %q, %v", i, mine, got, err)
		}
		if meta := readFile(t, filepath.Join(logs, "queue", "run.json")); !strings.Contains(meta, `"foreign_cwd": [`) {
			t.Errorf("run %d: run.json does not record the foreign cwd:\n%s", i, meta)
		}
	}
	// The folder the reuse run made for item b was the tool's: it goes as before.
	if got := readFile(t, filepath.Join(logs, "cwd", "c.b", "left_by_item")); got != "b\n" {
		t.Errorf("cwd/c.b holds %q, want the last run's item's file", got)
	}
}

// A pytest suite with one test file that does not import: that file is an item
// which fails with its traceback (in its log and its JUnit), its suite's other file
// and every other suite still run, and the listing warns naming the file; the run
// exits 1, not 2 (pytest's own 2 is the tool's usage code).
func TestPytestCollectionErrorFailsOneItem(t *testing.T) {
	py := adaptertest.Python(t)
	dir := fixture(t, "e2e")
	copyFixture(t, "adapters/pytest-broken", dir)
	codeSuite(t, dir)
	bin := filepath.Join(t.TempDir(), "bin")
	os.Mkdir(bin, 0o755)
	if err := os.Symlink(py, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "broken.conf", "py py.log pytest tests\nc c.log list ci/codes.sh\n")
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1", "TAGS=a\nb\n"}
	r := sgpu(t, dir, env, "run", "--gpus", "2", "--arch", "gfx942", conf)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "warning: ") || !strings.Contains(r.stdout, "pytest could not collect tests/test_import_error.py") {
		t.Errorf("no warning naming the file:\n%s", r.stdout)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	verdict := readFile(t, filepath.Join(logs, "suites", "py.log"))
	broken := logdir.ItemLogRel("py", "tests/test_import_error.py")
	if !strings.Contains(verdict, "ok rc=0 "+logdir.ItemLogRel("py", "tests/test_ok.py")) || !strings.Contains(verdict, "FAIL rc=2 "+broken) {
		t.Errorf("py.log:\n%s", verdict)
	}
	if rc := readFile(t, filepath.Join(logs, "suites", "py.log.rc")); rc != "1\n" {
		t.Errorf("py.log.rc = %q, want 1", rc)
	}
	if log := readFile(t, filepath.Join(logs, broken)); !strings.Contains(log, "no_such_module_sgpu_fixture") {
		t.Errorf("the item's log lacks the traceback:\n%s", log)
	}
	if rc := readFile(t, filepath.Join(logs, "suites", "c.log.rc")); rc != "0\n" {
		t.Errorf("the other suite did not run: c.log.rc = %q", rc)
	}
}

// With no JUNITXML_PREFIX in its environment, sgpu-queue run gives the items one
// under its log dir (<log dir>/junit/<label>/), as the action does: an item whose
// re-entry ran nothing (exit 0, no XML) is a no-run, judged from that evidence, and
// the items' XML is merged per suite. A prefix the environment sets wins.
func TestCLIJUnitPrefixInLogDir(t *testing.T) {
	dir := fixture(t, "e2e")
	codeSuite(t, dir)
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then printf 'TE_CI_ITEM ran\nTE_CI_ITEM gone\n'; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
[ "$TEST_FILTER" = gone ] && exit 0   # its test left the tree: the re-entry runs nothing
` + writeXML
	if err := os.WriteFile(filepath.Join(dir, "ci", "gone.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "gone.conf", "g g.log list ci/gone.sh\n")
	args := []string{"run", "--full", "--gpus", "2", "--arch", "gfx942", conf} // each run whole
	r := sgpu(t, dir, nil, args...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: the no-run fails\n%s%s", r.code, r.stdout, r.stderr)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	verdict := readFile(t, filepath.Join(logs, "suites", "g.log"))
	if !strings.Contains(verdict, "ok rc=0 items/g.ran.log") || !strings.Contains(verdict, "FAIL rc=0 items/g.gone.log (no-run: its re-entry ran nothing)") {
		t.Errorf("g.log:\n%s", verdict)
	}
	readFile(t, filepath.Join(logs, "junit", "g", "ran.xml"))
	merged := filepath.Join(dir, "test-results", "junit", "g.xml")
	if m := readFile(t, merged); !strings.Contains(m, `name="ran"`) {
		t.Errorf("merged JUnit:\n%s", m)
	}

	// The environment's prefix wins; the log dir's folder is not used.
	other := filepath.Join(t.TempDir(), "xml") + "/"
	r = sgpu(t, dir, []string{"JUNITXML_PREFIX=" + other}, args...)
	if r.code != 1 {
		t.Fatalf("with a prefix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	readFile(t, filepath.Join(other, "g", "ran.xml"))
	validateJUnit(t, merged) // last: it skips without xmllint
}
