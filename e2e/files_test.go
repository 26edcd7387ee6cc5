package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/tmpfstest"
)

// namesSuite writes ci/names.sh, a list suite whose items are the lines of $TAGS and
// whose label is its first argument. An item prints its tag and the visible-devices
// variables it got, sleeps $NAMES_SLEEP, and fails with rc 3 when its tag holds
// "fail"; with $FILL it fills the disk its working directory is on first. Listing and
// setup append their pins to $PIN_TRACE.
func namesSuite(t *testing.T, dir string) {
	t.Helper()
	script := `#!/bin/sh
label=$1
pins="HIP=${HIP_VISIBLE_DEVICES-unset} CUDA=${CUDA_VISIBLE_DEVICES-unset}"
if [ -n "$TE_CI_LIST_ITEMS" ]; then
    [ -n "$PIN_TRACE" ] && echo "listing $label $pins" >>"$PIN_TRACE"
    printf '%s\n' "$TAGS" | while IFS= read -r t; do [ -n "$t" ] && printf 'TE_CI_ITEM %s\n' "$t"; done
    exit 0
fi
if [ -n "$TE_CI_SETUP_ONLY" ]; then
    [ -n "$PIN_TRACE" ] && echo "setup $label $pins" >>"$PIN_TRACE"
    exit 0
fi
printf 'item %s of %s %s\n' "$TEST_FILTER" "$label" "$pins"
# Its JUnit file, as the hook contract asks: <prefix><the tag the filter selects><suffix>.
printf '%s\n' "$TAGS" | while IFS= read -r t; do
    case $t in $TEST_FILTER) [ -z "$JUNITXML_PREFIX" ] || echo '<testsuite name="names" tests="0"/>' >"$JUNITXML_PREFIX$t$JUNITXML_SUFFIX" ;; esac
done
[ -n "$FILL" ] && { dd if=/dev/zero of=fill bs=4096 2>/dev/null; true; }
sleep "${NAMES_SLEEP:-0}"
case $TEST_FILTER in *fail*) exit 3 ;; esac
exit 0
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "names.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeConf(t *testing.T, dir, name, text string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// Tags whose names collided in the old layout get files of their own, and the
// verdict and the summary point at each item's own log. A label with '.' (the
// other collision) is a config error naming the fix.
func TestCollidingNamesDistinctFiles(t *testing.T) {
	dir := fixture(t, "e2e")
	namesSuite(t, dir)
	conf := writeConf(t, dir, "names.conf", "d d.log list ci/names.sh d\n")
	tags := "fail\nfail.attempt1\nfail@attempt1\nb c\nb_c\nwhole\n"
	// Without quarantine: three fast failures in a row on one GPU (as a busy
	// machine may order them) would rerun them once more to check the GPU, and
	// this test counts the files of exactly two attempts.
	r := sgpu(t, dir, []string{"TAGS=" + tags}, "run", "--gpus", "2", "--arch", "gfx942", "--retries", "1",
		"--quarantine-threshold", "0", conf)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (fail, fail.attempt1 and fail@attempt1 fail)\n%s%s", r.code, r.stdout, r.stderr)
	}
	items := filepath.Join(dir, "test-results", "logs", "items")
	es, _ := os.ReadDir(items)
	// 6 items, each a log and an rc; the 3 failing ones also keep attempt 1's,
	// and the JUnit XML it wrote (items/<label>.<safetag>@attempt1.xml).
	if len(es) != 6*2+3*3 {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("items/ holds %d files, want 21: %q", len(es), names)
	}
	owner := map[string]string{ // file → the tag whose output it must hold
		"d.fail.log": "fail", "d.fail@attempt1.log": "fail",
		"d.fail.attempt1.log": "fail.attempt1", "d.fail.attempt1@attempt1.log": "fail.attempt1",
	}
	for file, tag := range owner {
		if log := readFile(t, filepath.Join(items, file)); !strings.HasPrefix(log, "item "+tag+" of d ") {
			t.Errorf("%s holds %q, want tag %s's output", file, log, tag)
		}
	}
	verdict := readFile(t, filepath.Join(dir, "test-results", "logs", "suites", "d.log"))
	for _, want := range []string{"FAIL rc=3 items/d.fail.log\n", "FAIL rc=3 items/d.fail.attempt1.log\n", "FAIL rc=3 items/d.fail_attempt1~"} {
		if !strings.Contains(verdict, want) {
			t.Errorf("verdict lacks %q:\n%s", want, verdict)
		}
	}
	for _, want := range []string{"FAIL rc=3 d fail  test-results/logs/items/d.fail.log", "FAIL rc=3 d fail.attempt1  test-results/logs/items/d.fail.attempt1.log"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// Each of the hostile and reserved tags has its own log holding its own output.
	seen := map[string]string{}
	for _, e := range es {
		name := e.Name()
		if strings.HasSuffix(name, ".rc") || strings.Contains(name, "@attempt") {
			continue
		}
		first, _, _ := strings.Cut(readFile(t, filepath.Join(items, name)), "\n")
		if prev, dup := seen[first]; dup {
			t.Errorf("%s and %s hold the same item's output %q", prev, name, first)
		}
		seen[first] = name
	}

	// Label "a.b" + tag "c" and label "a" + tag "b.c" would share items/a.b.c.log:
	// such a label is refused before anything runs.
	bad := writeConf(t, dir, "dotted.conf", "a a.log list ci/names.sh a\na.b ab.log list ci/names.sh a.b\n")
	r = sgpu(t, dir, []string{"TAGS=c\nb.c\n"}, "run", "--gpus", "2", bad)
	if r.code != 2 || !strings.Contains(r.stderr, `dotted.conf:2: label "a.b" may not contain '.'`) || !strings.Contains(r.stderr, `("a_b")`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// A log dir holding someone's files is refused and left as it was; with
// --log-dir-reuse the run writes beside them; a later run deletes only what the
// earlier run wrote.
func TestLogDirUserDataSurvives(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	namesSuite(t, dir)
	conf := writeConf(t, dir, "names.conf", "d d.log list ci/names.sh d\n")
	gen := filepath.Join(dir, "report", "generator.py")
	os.MkdirAll(filepath.Dir(gen), 0o755)
	os.WriteFile(gen, []byte("print('the repo's own report generator')\n"), 0o644)
	env := []string{"TAGS=t1\nt2\n"}
	args := []string{"run", "--gpus", "1", "--arch", "gfx942", "--log-dir", ".", conf}

	r := sgpu(t, dir, env, args...)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	if errs := lines(r.stderr); len(errs) != 1 || !strings.Contains(errs[0], "holds files that no sgpu-queue run wrote") || !strings.Contains(errs[0], "--log-dir-reuse") {
		t.Errorf("stderr %q, want one line with the fix", r.stderr)
	}
	for _, p := range []string{".sgpu-queue.lock", "items", "queue", "expand.log"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("the refused run wrote %s", p)
		}
	}

	r = sgpu(t, dir, env, append([]string{"run", "--log-dir-reuse"}, args[1:]...)...)
	if r.code != 0 {
		t.Fatalf("with --log-dir-reuse: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "report", "schedule.md")); err != nil {
		t.Errorf("no report beside generator.py: %v", err)
	}
	notes := filepath.Join(dir, "items", "notes.txt")
	os.WriteFile(notes, []byte("mine\n"), 0o644)

	// The log dir now holds a run of ours: no flag needed; t2 is gone from the
	// listing, so its files (the earlier run's) go, and nothing of the user's does.
	r = sgpu(t, dir, []string{"TAGS=t1\n"}, args...)
	if r.code != 0 {
		t.Fatalf("third run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{gen, notes, filepath.Join(dir, "ci", "names.sh"), filepath.Join(dir, conf)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was deleted: %v", p, err)
		}
	}
	if data, _ := os.ReadFile(gen); !strings.Contains(string(data), "report generator") {
		t.Errorf("generator.py changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "items", "d.t2.log")); err == nil {
		t.Error("the earlier run's items/d.t2.log survived the next run")
	}
	if _, err := os.Stat(filepath.Join(dir, "items", "d.t1.log")); err != nil {
		t.Errorf("this run's log: %v", err)
	}
}

// Two runs on one log dir: the second exits 2 naming the first, which finishes and
// leaves its own verdicts.
func TestTwoRunsOneLogDir(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	namesSuite(t, dir)
	conf := writeConf(t, dir, "names.conf", "d d.log list ci/names.sh d\n")
	logs := filepath.Join(dir, "test-results", "logs")
	first, out := startRun(t, dir, []string{"TAGS=slow\n", "NAMES_SLEEP=3"}, filepath.Join(logs, "items", "d.slow.log"),
		"run", "--gpus", "1", "--arch", "gfx942", conf)
	r := sgpu(t, dir, []string{"TAGS=fail\n"}, "run", "--gpus", "1", "--arch", "gfx942", conf)
	if r.code != 2 {
		t.Errorf("second run: exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := fmt.Sprintf("log dir %s is in use by another sgpu-queue run (pid %d on host ", logs, first.Process.Pid)
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	if code := waitExit(t, first, 60*time.Second); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out.String())
	}
	if v := readFile(t, filepath.Join(logs, "suites", "d.log")); v != "ok rc=0 items/d.slow.log\n" {
		t.Errorf("verdict %q, want the first run's", v)
	}
	if rc := readFile(t, filepath.Join(logs, "suites", "d.log.rc")); rc != "0\n" {
		t.Errorf("d.log.rc %q", rc)
	}
	// Once it ended the log dir is free again (a dry run never needed the lock).
	if r := sgpu(t, dir, []string{"TAGS=x\n"}, "run", "--gpus", "1", "--arch", "gfx942", conf); r.code != 0 {
		t.Errorf("a run after the first ended: exit %d\n%s", r.code, r.stderr)
	}
}

// A weight table that is a symlink learns through the link and keeps its mode; tags
// with control characters and invalid UTF-8 are learned and read back next run.
func TestSymlinkedWeightTable(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	namesSuite(t, dir)
	conf := writeConf(t, dir, "names.conf", "d d.log list ci/names.sh d\n")
	shared := filepath.Join(t.TempDir(), "shared-weights.txt")
	os.WriteFile(shared, []byte("d/plain 1.0\n"), 0o644)
	os.Chmod(shared, 0o640)
	link := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	env := []string{"TAGS=plain\nesc\x1b[0m\nbad\xffbyte\n"}
	for run := 1; run <= 2; run++ {
		r := sgpu(t, dir, env, "run", "--gpus", "1", "--arch", "gfx942", conf)
		if r.code != 0 || strings.Contains(r.stdout, "corrupt") {
			t.Fatalf("run %d: exit %d\n%s%s", run, r.code, r.stdout, r.stderr)
		}
		if run == 2 && (strings.Contains(r.stdout, "unknown") || !strings.Contains(r.stdout, "(3 keys)")) {
			t.Errorf("run 2 did not read back every key:\n%s", r.stdout)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the table is no longer a symlink: %v", err)
	}
	data := readFile(t, shared)
	for _, want := range []string{"d/plain ", `d/esc\x1B[0m `, `d/bad\xFFbyte `} {
		if !strings.Contains(data, want) {
			t.Errorf("shared table lacks %q:\n%s", want, data)
		}
	}
	if fi, _ := os.Stat(shared); fi.Mode().Perm() != 0o640 {
		t.Errorf("shared table mode %v, want 0640 kept", fi.Mode().Perm())
	}
}

// With HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES both set to one list, every
// listing, setup and item sees its one GPU in both.
func TestBothVisibleDevicesPinned(t *testing.T) {
	dir := fixture(t, "e2e")
	namesSuite(t, dir)
	conf := writeConf(t, dir, "names.conf", "d d.log list ci/names.sh d\n")
	trace := filepath.Join(dir, "pins.txt")
	env := []string{"TAGS=a\nb\nc\nd\n", "HIP_VISIBLE_DEVICES=2,3", "CUDA_VISIBLE_DEVICES=2,3", "PIN_TRACE=" + trace}
	r := sgpu(t, dir, env, "run", "--arch", "gfx942", conf)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "pinned with HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES") {
		t.Errorf("console does not say how items are pinned:\n%s", r.stdout)
	}
	for _, l := range lines(readFile(t, trace)) {
		if !strings.HasSuffix(l, " HIP=2 CUDA=2") {
			t.Errorf("%q: want both variables pinned to the first GPU", l)
		}
	}
	for _, tag := range []string{"a", "b", "c", "d"} {
		log := readFile(t, filepath.Join(dir, "test-results", "logs", "items", "d."+tag+".log"))
		if !strings.Contains(log, " HIP=2 CUDA=2\n") && !strings.Contains(log, " HIP=3 CUDA=3\n") {
			t.Errorf("item %s got %q, want one GPU in both variables", tag, log)
		}
	}
}

// A disk that fills up mid-run: the console says which files were not written
// instead of claiming them, and no temporary or empty verdict file is left.
func TestFullDiskSaysWhatWasNotWritten(t *testing.T) {
	disk := tmpfstest.Mount(t, 256<<10)
	dir := fixture(t, "e2e")
	namesSuite(t, dir)
	conf := writeConf(t, dir, "names.conf", "d d.log list ci/names.sh d\n")
	logs := filepath.Join(disk, "logs")
	weights := filepath.Join(disk, "weights.txt")
	r := sgpu(t, dir, []string{"TAGS=filler\n", "FILL=1"}, "run", "--gpus", "1", "--arch", "gfx942",
		"--log-dir", logs, "--weights", weights, conf)
	if strings.Contains(r.stdout, "report → ") || !strings.Contains(r.stdout, "report NOT written") {
		t.Errorf("the console claims the report or does not say it is missing:\n%s", r.stdout)
	}
	var summary string
	for _, l := range lines(r.stdout) {
		if strings.HasPrefix(l, "NOT written (see the warnings): ") {
			summary = l
		}
	}
	for _, want := range []string{"schedule.md", "suites/d.log.rc", "queue/run.json", "weights.txt"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary line %q does not name %s\n%s", summary, want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "(verdict NOT written)") {
		t.Errorf("the verdict line claims a file:\n%s", r.stdout)
	}
	filepath.WalkDir(disk, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, _ := d.Info()
		switch {
		case strings.Contains(d.Name(), ".tmp"):
			t.Errorf("temporary file left: %s", p)
		case strings.HasSuffix(p, ".rc") && info.Size() == 0:
			t.Errorf("empty verdict or exit-code file: %s", p)
		}
		return nil
	})
}

// The merged JUnit never replaces a file sgpu-queue did not write: a user's
// <label>.xml in the JUnit directory (no manifest entry) stays byte for byte, with
// one warning line naming it, while the other suite's file is written; a merged
// file the user edited since is left likewise, and an unchanged one is replaced.
func TestJUnitLeavesUsersFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "repo")
	junitDir := filepath.Join(dir, "test-results", "junit")
	for p, data := range map[string]string{
		"ci/j.cmds":                     "one echo one\n",
		"ci/j.conf":                     "mine mine.log cmd ci/j.cmds\nours ours.log cmd ci/j.cmds\n",
		"test-results/junit/mine.xml":   "<testsuites name=\"the user's own\"/>\n",
		"test-results/junit/notes.txt":  "not XML\n",
		"test-results/junit/ours/x.xml": "<testsuite/>\n", // a stray raw file: not this run's
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func() result {
		t.Helper()
		r := sgpu(t, dir, []string{"JUNITXML_PREFIX=test-results/junit/"}, "run", "--gpus", "1", "--arch", "gfx942", "ci/j.conf")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0 (a file left alone is a warning)\n%s%s", r.code, r.stdout, r.stderr)
		}
		if got := readFile(t, filepath.Join(junitDir, "mine.xml")); got != "<testsuites name=\"the user's own\"/>\n" {
			t.Fatalf("the user's mine.xml was replaced:\n%s", got)
		}
		return r
	}
	r := run()
	want := `JUnit of suite "mine" not written: test-results/junit/mine.xml is not a file sgpu-queue wrote (.sgpu-queue-junit does not list it), so it is left as it is; move it away, or set another junit-dir`
	if n := strings.Count(r.stdout+r.stderr, want); n != 1 {
		t.Errorf("the warning %q appears %d times, want once:\n%s%s", want, n, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "junit mine ") || !strings.Contains(r.stdout, "junit ours ") {
		t.Errorf("junit lines: want ours written, mine not:\n%s", r.stdout)
	}
	ours := filepath.Join(junitDir, "ours.xml")
	if !strings.Contains(readFile(t, ours), `<testsuites name="ours"`) {
		t.Errorf("ours.xml:\n%s", readFile(t, ours))
	}
	// The second run replaces its own unchanged file and still leaves the user's.
	r = run()
	if !strings.Contains(r.stdout, "junit ours ") || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("second run:\n%s%s", r.stdout, r.stderr)
	}
	// A merged file the user edited is theirs now.
	os.WriteFile(ours, []byte("edited\n"), 0o644)
	r = run()
	if got := readFile(t, ours); got != "edited\n" {
		t.Errorf("an edited ours.xml was replaced:\n%s", got)
	}
	if !strings.Contains(r.stdout+r.stderr, `JUnit of suite "ours" not written: test-results/junit/ours.xml changed since sgpu-queue wrote it, so it is left as it is`) {
		t.Errorf("no warning for the edited file:\n%s%s", r.stdout, r.stderr)
	}
}
