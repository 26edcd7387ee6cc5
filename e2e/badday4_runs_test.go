package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Two runs in one checkout at once, each with its own log dir and suite, save one
// weight table (docs/weights.md "Runs at once") and write one JUnit dir: both reach
// phase 6 having loaded the table before either saved (the test hook holds each save
// until the test says go), yet the table ends with both runs' keys: learning is a
// read-modify-write under a lock. Before, the last run to save wrote its loaded
// table over the other's. Then both merge their JUnit at once into the default
// JUnit dir, whose manifest ends listing both files (it is rewritten under the
// dir's lock), so a later run of either suite replaces its file.
func TestConcurrentRunsKeepEachOthersState(t *testing.T) {
	dir := fixture(t, "e2e")
	codeSuite(t, dir)
	conf := writeConf(t, dir, "codes.conf", "ca ca.log list ci/codes.sh\ncb cb.log list ci/codes.sh\n")
	hold := filepath.Join(t.TempDir(), "go-on")
	run := func(suite string) (*exec.Cmd, *lockedBuffer) {
		return start(t, dir, []string{"TAGS=a\nb\n", "SGPU_TEST_HOLD_SAVE=" + hold}, "run", "--gpus", "2", "--arch", "gfx942",
			"--suites", suite, "--log-dir", filepath.Join("test-results", "logs-"+suite), conf)
	}
	a, outA := run("ca")
	b, outB := run("cb")
	waitFor(t, a, outA, "== phase 6")
	waitFor(t, b, outB, "== phase 6")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		cmd *exec.Cmd
		out *lockedBuffer
	}{{a, outA}, {b, outB}} {
		if code := waitExit(t, r.cmd, 120*time.Second); code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, r.out.String())
		}
	}
	table := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt")
	var keys []string
	for _, l := range lines(readFile(t, table)) {
		keys = append(keys, strings.Fields(l)[0])
	}
	if sort.Strings(keys); strings.Join(keys, " ") != "ca/a ca/b cb/a cb/b" {
		t.Errorf("the table holds %q, want both runs' keys\nrun ca:\n%s\nrun cb:\n%s", keys, outA.String(), outB.String())
	}
	if entries, _ := os.ReadDir(filepath.Dir(table)); len(entries) != 1 {
		t.Errorf("ci-weights holds %v, want the table alone (the lock leaves no file)", entries)
	}
	manifest := readFile(t, filepath.Join(dir, "test-results", "junit", ".sgpu-queue-junit"))
	for _, f := range []string{" ca.xml\n", " cb.xml\n"} {
		if !strings.Contains(manifest, f) {
			t.Errorf("the JUnit manifest lacks%q:\n%s\nrun ca:\n%s\nrun cb:\n%s", f, manifest, outA.String(), outB.String())
		}
	}
}

// A signal while a run waits for another run's lock on the weight table ends the
// wait (docs/weights.md "Runs at once"): the table is NOT written, saying why, the
// report is written and the run exits 130 at once. Before, the signal was not heard
// until the other run let go or the two-minute wait ran out. Run ca holds the lock
// (the test hook holds its save) until the test lets it go.
func TestSignalWhileWaitingForTheTableLock(t *testing.T) {
	dir := fixture(t, "e2e")
	codeSuite(t, dir)
	conf := writeConf(t, dir, "codes.conf", "ca ca.log list ci/codes.sh\ncb cb.log list ci/codes.sh\n")
	hold := filepath.Join(t.TempDir(), "go-on")
	run := func(suite string, env ...string) (*exec.Cmd, *lockedBuffer) {
		return start(t, dir, append([]string{"TAGS=a\nb\n"}, env...), "run", "--gpus", "2", "--arch", "gfx942", "--suites", suite,
			"--log-dir", filepath.Join("test-results", "logs-"+suite), "--junit-dir", filepath.Join("test-results", "junit-"+suite), conf)
	}
	a, outA := run("ca", "SGPU_TEST_HOLD_SAVE="+hold)
	defer a.Process.Kill()
	waitFor(t, a, outA, "== phase 6")
	waitLocked(t, filepath.Join(dir, "ci-weights"))
	b, outB := run("cb")
	waitFor(t, b, outB, "== phase 6")
	b.Process.Signal(syscall.SIGTERM)
	// Well within the two-minute wait the signal used to sit out.
	code := waitExit(t, b, 60*time.Second)
	console := outB.String()
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, console)
	}
	for _, w := range []string{"test_weights.gfx942.l99.txt NOT written (the weight table): a signal stopped the wait for another sgpu-queue run's lock",
		"== phase 7", "exit code 130"} {
		if !strings.Contains(console, w) {
			t.Errorf("console lacks %q:\n%s", w, console)
		}
	}
	readFile(t, filepath.Join(dir, "test-results", "logs-cb", "report", "schedule.md"))

	// Run ca, let go, saves its learning: cb's is in its log dir only.
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, a, 120*time.Second); code != 0 {
		t.Fatalf("run ca: exit %d, want 0\n%s", code, outA.String())
	}
	var keys []string
	for _, l := range lines(readFile(t, filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt"))) {
		keys = append(keys, strings.Fields(l)[0])
	}
	if sort.Strings(keys); strings.Join(keys, " ") != "ca/a ca/b" {
		t.Errorf("the table holds %q, want run ca's keys", keys)
	}
}

// waitLocked waits until another process holds the flock(2) on dir (a run saving
// the weight table in it).
func waitLocked(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d, err := os.Open(dir)
		if err == nil {
			err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			d.Close() // drops a lock this test took
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing took the lock on %s", dir)
		}
	}
}

// An item that exits 0 with a JUnit file cut off mid-element fails (bad-junit): the
// run exits 1, the item is in the failed list and the failed-items file of the next
// attempt, its log and the report say why, and the merged JUnit holds an error case
// for it. Before, it passed while the merged JUnit held that error case.
func TestCutJUnitFails(t *testing.T) {
	dir := fixture(t, "e2e")
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then printf 'TE_CI_ITEM good\nTE_CI_ITEM cut\n'; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
xml="$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX"
case $TEST_FILTER in
good) printf '<testsuite name="x" tests="1"><testcase classname="x" name="good"/></testsuite>\n' >"$xml" ;;
cut)  printf '<testsuite name="x" tests="2"><testcase classname="x" name="first"/><testcase classname="x" na' >"$xml" ;;
esac
exit 0
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "cut.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "cut.conf", "c c.log list ci/cut.sh\n")
	r := sgpu(t, dir, nil, "run", "--gpus", "2", "--arch", "gfx942", conf)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: an item's JUnit cannot be parsed\n%s%s", r.code, r.stdout, r.stderr)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	if !strings.Contains(r.stdout, "FAIL rc=0 c cut") || strings.Contains(r.stdout, "FAIL rc=0 c good") {
		t.Errorf("the failed items are not c/cut alone:\n%s", r.stdout)
	}
	verdict := readFile(t, filepath.Join(logs, "suites", "c.log"))
	if !strings.Contains(verdict, "bad JUnit: its JUnit XML cannot be parsed") {
		t.Errorf("the verdict does not say why:\n%s", verdict)
	}
	if log := readFile(t, filepath.Join(logs, "items", "c.cut.log")); !strings.Contains(log, "sgpu-queue: bad JUnit: it exited 0, but its JUnit XML ") ||
		!strings.Contains(log, "XML syntax error") {
		t.Errorf("the item's log does not say why:\n%s", log)
	}
	report := readFile(t, filepath.Join(logs, "report", "schedule.md"))
	if !strings.Contains(report, "bad JUnit") || !strings.Contains(report, "malformed JUnit XML cut.xml: XML syntax error") {
		t.Errorf("the report does not say why:\n%s", report)
	}
	if xml := readFile(t, filepath.Join(dir, "test-results", "junit", "c.xml")); !strings.Contains(xml, "sgpu-queue.malformed-junit") {
		t.Errorf("the merged JUnit holds no error case for it:\n%s", xml)
	}
}

// A suite whose gpus= is above a runner's GPUs: run clamps it with a warning, and
// plan, which splits the same items over runners of that size, clamps it with the
// same warning instead of refusing the plan (one rule: schedule.FitWidths).
func TestPlanClampsAsRunDoes(t *testing.T) {
	dir := fixture(t, "e2e")
	codeSuite(t, dir)
	conf := writeConf(t, dir, "codes.conf", "c c.log list,gpus=4 ci/codes.sh\n")
	items := writeConf(t, dir, "items.tsv", "c\ta\nc\tb\n")
	want := `suite "c" says gpus=4 at codes.conf:1 but the pool has 2: its 2 items run on 2, so cases that need more skip`
	plan := sgpu(t, dir, nil, "plan", "--shards", "2", "--gpus", "2", "--arch", "gfx942", "--items", items, "--out", "plan.json", conf)
	if plan.code != 0 || !strings.Contains(plan.stderr, "warning: "+want) {
		t.Errorf("plan: exit %d, want 0 and the warning %q\n%s%s", plan.code, want, plan.stdout, plan.stderr)
	}
	run := sgpu(t, dir, []string{"TAGS=a\nb\n"}, "run", "--gpus", "2", "--arch", "gfx942", conf)
	if run.code != 0 || !strings.Contains(run.stdout+run.stderr, want) {
		t.Errorf("run: exit %d, want 0 and the warning %q\n%s%s", run.code, want, run.stdout, run.stderr)
	}
}

// noJUnitSuite writes ci/plain.sh, a list suite whose items ($TAGS) write no JUnit
// (plain scripts).
func noJUnitSuite(t *testing.T, dir string) {
	t.Helper()
	tagsSuite(t, dir, "plain", `echo "plain $TEST_FILTER"
exit 0
`)
}

// --junit-optional '*' marks every item, tags with '/' included ('*' crosses '/' in
// a key pattern), and a pattern that matches no item of the run is named in a
// warning. Before, '*' matched no key with a '/', and nothing was said.
func TestJUnitOptionalPatterns(t *testing.T) {
	dir := fixture(t, "e2e")
	noJUnitSuite(t, dir)
	conf := writeConf(t, dir, "plain.conf", "p p.log list ci/plain.sh\n")
	r := sgpu(t, dir, []string{"TAGS=a\ntests/b.py\n"}, "run", "--gpus", "2", "--arch", "gfx942",
		"--junit-optional", "*", "--junit-optional", "torch/bench*", conf)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0: every item is junit-optional\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := `--junit-optional "torch/bench*" matches no item of this run: a pattern is matched against each item's key`
	if !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("no warning %q:\n%s%s", want, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, `"*" matches no item`) {
		t.Errorf("'*' warned as matching nothing:\n%s", r.stdout)
	}
}

// A listing line that is easy to misread says what was read: "TE_CI_ITEM tag 4
// extra" lists the tag "tag 4 extra" (only the last word gives a width), and a tag
// listed with widths 2 and 3 is queued once with the first line's, each named.
func TestListingHints(t *testing.T) {
	dir := fixture(t, "e2e")
	noJUnitSuite(t, dir)
	conf := writeConf(t, dir, "plain.conf", "p p.log list ci/plain.sh\n")
	r := sgpu(t, dir, []string{"TAGS=tag 4 extra\nw 2\nw 3\n"}, "run", "--gpus", "4", "--arch", "gfx942", "--junit-optional", "*", conf)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{
		`suite "p" listing: line 1: tag "tag 4 extra" read whole: its word "4" is not the line's last, and only the last word gives a width ` +
			`(TE_CI_ITEM <tag> <N>, or gpus=N); if 4 is the item's width, print it last`,
		`suite "p" listing: line 3: tag "w" listed again with gpus=3 (line 2 gave gpus=2): queued once, as line 2 gives it; give each width a ` +
			`tag of its own`,
	} {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("no warning %q:\n%s%s", w, r.stdout, r.stderr)
		}
	}
}

// A missing --after program is found before anything runs, as --before's is (exit
// 2, one line naming it), not after the whole queue has run; a bare name not on
// PATH likewise. Both at once are said at once.
func TestMissingAfterFoundFirst(t *testing.T) {
	dir := fixture(t, "e2e")
	codeSuite(t, dir)
	conf := writeConf(t, dir, "codes.conf", "c c.log list ci/codes.sh\n")
	trace := filepath.Join(t.TempDir(), "ran")
	r := sgpu(t, dir, []string{"TAGS=a\n", "TRACE=" + trace}, "run", "--gpus", "2", "--arch", "gfx942",
		"--before", "no-such-program-sgpu --x", "--after", "'ci/check drift.sh'", conf)
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := []string{
		"sgpu-queue: --before no-such-program-sgpu --x: no-such-program-sgpu is not on PATH; give its path (a relative one is taken from the repo root)",
		"sgpu-queue: --after 'ci/check drift.sh': 'ci/check drift.sh' not found (looked for " + filepath.Join(dir, "ci", "check drift.sh") +
			"; a relative program is taken from the repo root)",
	}
	if got := lines(r.stderr); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, strings.Join(want, "\n"))
	}
	if strings.Contains(r.stdout, "== phase 1") {
		t.Errorf("the run went on past phase 0:\n%s", r.stdout)
	}
}

// A suite none of whose items writes JUnit gets its cause said once, for the suite,
// with how to mark it (--junit-optional 'p/*'), on the console and in the report,
// instead of a tag round-trip hint per item.
func TestSuiteWithoutJUnitSaidOnce(t *testing.T) {
	dir := fixture(t, "e2e")
	noJUnitSuite(t, dir)
	conf := writeConf(t, dir, "plain.conf", "p p.log list ci/plain.sh\n")
	r := sgpu(t, dir, []string{"TAGS=a\nb\nc\n"}, "run", "--gpus", "2", "--arch", "gfx942", conf)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: its items are no-run\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := `warning: suite "p" wrote no JUnit XML: none of its 3 items wrote its file, so each is no-run and fails. A suite of plain ` +
		`scripts writes none: judge its items by their exit codes with --junit-optional 'p/*'. If it should write JUnit, check the tag ` +
		`round trip: sgpu-queue verify`
	if strings.Count(r.stdout+r.stderr, want) != 1 {
		t.Errorf("the suite's cause is not said once (%q):\n%s%s", want, r.stdout, r.stderr)
	}
	report := readFile(t, filepath.Join(dir, "test-results", "logs", "report", "schedule.md"))
	if !strings.Contains(report, "**Suite `p` wrote no JUnit XML**") || strings.Contains(report, "item(s) ran nothing") {
		t.Errorf("the report does not say it once for the suite:\n%s", report)
	}
}

// Runs one after another in one checkout, each with its own log dir and the default
// JUnit dir, keep each other's merged JUnit (docs/files.md#merged-junit-and-its-manifest):
// a suite another config ran keeps its file (before, the second run deleted it as
// "not in this run"), and a suite --suites left out keeps its file (before, it was
// overwritten with one of zero tests).
func TestRunsKeepEachOthersJUnit(t *testing.T) {
	for _, tt := range []struct {
		name   string
		second func(dir, both string) []string // the second run's arguments after "run"
	}{
		{"another config", func(dir, _ string) []string {
			return []string{"--log-dir", "test-results/logs-2", writeConf(t, dir, "cb.conf", "cb cb.log list ci/codes.sh\n")}
		}},
		{"--suites", func(_, both string) []string {
			return []string{"--log-dir", "test-results/logs-2", "--suites", "cb", both}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixture(t, "e2e")
			codeSuite(t, dir)
			both := writeConf(t, dir, "both.conf", "ca ca.log list ci/codes.sh\ncb cb.log list ci/codes.sh\n")
			first := []string{"run", "--gpus", "2", "--arch", "gfx942", "--log-dir", "test-results/logs-1"}
			if tt.name == "another config" {
				first = append(first, writeConf(t, dir, "ca.conf", "ca ca.log list ci/codes.sh\n"))
			} else {
				first = append(first, "--suites", "ca", both)
			}
			env := []string{"TAGS=a\nb\n"}
			if r := sgpu(t, dir, env, first...); r.code != 0 {
				t.Fatalf("first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			caXML := filepath.Join(dir, "test-results", "junit", "ca.xml")
			before := readFile(t, caXML)
			if !strings.Contains(before, `tests="2"`) {
				t.Fatalf("the first run's ca.xml holds no 2 tests:\n%s", before)
			}
			r := sgpu(t, dir, env, append([]string{"run", "--gpus", "2", "--arch", "gfx942"}, tt.second(dir, both)...)...)
			if r.code != 0 {
				t.Fatalf("second run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if after := readFile(t, caXML); after != before {
				t.Errorf("the second run changed ca.xml:\n%s\n→\n%s", before, after)
			}
			if cb := readFile(t, filepath.Join(dir, "test-results", "junit", "cb.xml")); !strings.Contains(cb, `tests="2"`) {
				t.Errorf("cb.xml:\n%s", cb)
			}
			if !strings.Contains(r.stdout, "junit: left test-results/junit/ca.xml (not run here: an earlier run's results)") {
				t.Errorf("the second run does not say it left ca.xml:\n%s", r.stdout)
			}
			// A third run of ca replaces its file: it is still this tool's.
			if r := sgpu(t, dir, env, first...); r.code != 0 || !strings.Contains(readFile(t, caXML), `tests="2"`) {
				t.Errorf("third run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
