package e2e

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The state one run leaves for the next in ci-rerun/ (SPEC §20, docs/reruns.md):
// never written through a link, keyed by queue, arch, level and code, rewritten
// only where the run ran, and carried by a re-run shard into its merge.

// TestRerunStateNeverThroughLinks: a pull request commits a symlink (or makes a
// FIFO) where a run writes its re-run state. The run refuses before anything runs,
// exit 2, in one line naming the path; the file the link aims at, and every foreign
// file, stay as they were.
func TestRerunStateNeverThroughLinks(t *testing.T) {
	t.Parallel()
	const testsB = "ci-rerun/sgpu/tests/torch.tests.test_b.txt"
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir, outside string)
		refused string // the path named
		kind    string
		green   bool // the run passes (it would empty the list, delete the tests files); else test_b fails
	}{
		{"failed list is a link to a file of the repo", func(t *testing.T, dir, outside string) {
			writeTo(t, filepath.Join(dir, "precious.txt"), "precious\n")
			symlink(t, "../../precious.txt", filepath.Join(dir, failedList))
		}, failedList, "a symbolic link", true},
		{"failed list is a FIFO", func(t *testing.T, dir, outside string) {
			mkdirAll(t, filepath.Join(dir, "ci-rerun/sgpu"))
			if err := syscall.Mkfifo(filepath.Join(dir, failedList), 0o644); err != nil {
				t.Fatal(err)
			}
		}, failedList, "a named pipe (FIFO)", false},
		{"tests folder is a link to foreign files", func(t *testing.T, dir, outside string) {
			writeTo(t, filepath.Join(outside, "torch.tests.test_b.txt"), "precious\n")
			symlink(t, outside, filepath.Join(dir, "ci-rerun/sgpu/tests"))
		}, "ci-rerun/sgpu/tests", "a symbolic link", true},
		{"tests folder is a link, a failing run", func(t *testing.T, dir, outside string) {
			writeTo(t, filepath.Join(outside, "torch.tests.test_b.txt"), "precious\n")
			symlink(t, outside, filepath.Join(dir, "ci-rerun/sgpu/tests"))
		}, "ci-rerun/sgpu/tests", "a symbolic link", false},
		{"a tests file is a link", func(t *testing.T, dir, outside string) {
			writeTo(t, filepath.Join(outside, "precious.txt"), "precious\n")
			symlink(t, filepath.Join(outside, "precious.txt"), filepath.Join(dir, testsB))
		}, testsB, "a symbolic link", false},
		{"the queue folder is a link", func(t *testing.T, dir, outside string) {
			writeTo(t, filepath.Join(outside, "failed.gfx942.l99.tsv"), "precious\n")
			symlink(t, outside, filepath.Join(dir, "ci-rerun/sgpu"))
		}, "ci-rerun/sgpu", "a symbolic link", false},
		{"ci-rerun is a link", func(t *testing.T, dir, outside string) {
			symlink(t, outside, filepath.Join(dir, "ci-rerun"))
		}, "ci-rerun", "a symbolic link", false},
		{"the state record is a FIFO", func(t *testing.T, dir, outside string) {
			mkdirAll(t, filepath.Join(dir, "ci-rerun/sgpu"))
			if err := syscall.Mkfifo(filepath.Join(dir, "ci-rerun/sgpu/state.gfx942.l99.json"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "ci-rerun/sgpu/state.gfx942.l99.json", "a named pipe (FIFO)", false},
		{"the state record is a link", func(t *testing.T, dir, outside string) {
			writeTo(t, filepath.Join(outside, "precious.txt"), "precious\n")
			symlink(t, filepath.Join(outside, "precious.txt"), filepath.Join(dir, "ci-rerun/sgpu/state.gfx942.l99.json"))
		}, "ci-rerun/sgpu/state.gfx942.l99.json", "a symbolic link", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newRerunFixture(t)
			outside := t.TempDir()
			c.prepare(t, f.dir, outside)
			before := snapshot(t, f.dir, outside)
			// A failing test_b would write its tests file; a green run empties its
			// list and deletes the tests files of its items.
			env := []string{"RERUN_FAIL=tests.test_b::t2"}
			if c.green {
				env = nil
			}
			r, ran := f.runWithin(t, 2*time.Minute, env)
			want := c.refused + " is " + c.kind
			if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("exit %d, want 2 and one line naming %q\nstderr: %s\nstdout: %s", r.code, want, r.stderr, r.stdout)
			}
			if len(ran) != 0 || strings.Contains(r.stdout, "== phase 1") {
				t.Errorf("the run went on to list or run its items: %d tests ran\n%s", len(ran), r.stdout)
			}
			if after := snapshot(t, f.dir, outside); !mapsEqual(before, after) {
				t.Errorf("files changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// runWithin is run, failing the test when the run has not ended within d (a run
// blocked on a FIFO), instead of hanging it.
func (f *rerunFixture) runWithin(t *testing.T, d time.Duration, env []string, args ...string) (result, []string) {
	t.Helper()
	if err := os.WriteFile(f.trace, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"run", "--gpus", "0,1", "--arch", "gfx942"}, append(args, "ci/ci_sgpu_queue.conf")...)...)
	cmd.Dir = f.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "RERUN_TRACE=" + f.trace}, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within %s (blocked?)\n%s", d, out.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	ran := lines(readFile(t, f.trace))
	slices.Sort(ran)
	return r, ran
}

// snapshot is the content of every file outside holds, and of precious.txt in dir.
func snapshot(t *testing.T, dir, outside string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(outside, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			rel, _ := filepath.Rel(outside, p)
			out["outside/"+rel] = readFile(t, p)
		}
		return nil
	})
	if data, err := os.ReadFile(filepath.Join(dir, "precious.txt")); err == nil {
		out["precious.txt"] = string(data)
	}
	return out
}

func writeTo(t *testing.T, path, text string) {
	t.Helper()
	mkdirAll(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdirAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	mkdirAll(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestRerunTestsFileOfAnotherLevel (issue 27, case 2): the tests file of an item
// is shared by every level's list; a level-1 run that rewrites it must not narrow
// the next level-99 re-run to level 1's failure. Level 99 fails test_b's t1, level
// 1 its t2 (rewriting the tests file), and level 99 again re-runs test_b whole
// (t1 included), saying why.
func TestRerunTestsFileOfAnotherLevel(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	if r, _ := f.run(t, []string{"RERUN_FAIL=tests.test_b::t1"}, "--level", "99"); r.code != 1 {
		t.Fatalf("level 99: exit %d\n%s", r.code, r.stdout)
	}
	if r, _ := f.run(t, []string{"RERUN_FAIL=tests.test_b::t2"}, "--level", "1"); r.code != 1 || f.file(t, testsOfB) != "tests/test_b.py::t2\n" {
		t.Fatalf("level 1: exit %d, tests file %q\n%s", r.code, f.file(t, testsOfB), r.stdout)
	}
	r, ran := f.run(t, nil, "--level", "99")
	want := []string{"tests.test_b\tt1\t", "tests.test_b\tt2\t", "tests.test_b\tt3\t", "tests.test_b\tt4\t"}
	if r.code != 0 || !slices.Equal(ran, want) {
		t.Errorf("level 99 again: exit %d, ran %q; want test_b whole (t1 is what failed at this level)\n%s", r.code, ran, r.stdout)
	}
	note := "re-run: torch/tests.test_b re-runs whole: " + testsOfB + " is not the tests file the last attempt wrote"
	if !strings.Contains(r.stdout, note) {
		t.Errorf("no notice %q:\n%s", note, r.stdout)
	}
}

// TestRerunNewCodeRunsEverything (issue 27, case 4): a failed list narrows only a
// run of the code it was written for. In a git checkout: a re-run of the same
// commit narrows; after a new commit, or an uncommitted change to a tracked file,
// the run runs everything with a one-line notice; an untracked file changes
// nothing. GITHUB_SHA, when set, is the code.
func TestRerunNewCodeRunsEverything(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("GIT MISSING: the code key of a git checkout is not tested")
	}
	f := newRerunFixture(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"},
			args...)...)
		cmd.Dir = f.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "ci")
	git("commit", "-q", "-m", "fixture")
	fail := []string{"RERUN_FAIL=tests.test_b::t2", "RERUN_CORE_FAIL=1"}
	if r, ran := f.run(t, fail); r.code != 1 || len(ran) != 21 {
		t.Fatalf("attempt 1: exit %d, %d tests\n%s", r.code, len(ran), r.stdout)
	}
	writeTo(t, filepath.Join(f.dir, "untracked.txt"), "not the code\n")
	if r, ran := f.run(t, fail); r.code != 1 || len(ran) != 2 {
		t.Fatalf("a re-run of the same commit (an untracked file added): exit %d, %d tests, want the 2 that failed\n%s", r.code, len(ran), r.stdout)
	}
	// The code changes and is committed: everything runs, with one notice.
	writeTo(t, filepath.Join(f.dir, "ci/core.sh"), readFile(t, filepath.Join(f.dir, "ci/core.sh"))+"# changed\n")
	git("commit", "-q", "-am", "change")
	r, ran := f.run(t, fail)
	notice := "re-run: " + failedList + " is not this run's (it was written for code "
	if r.code != 1 || len(ran) != 21 || strings.Count(r.stdout, notice) != 1 || !strings.Contains(r.stdout, "): running everything\n") {
		t.Errorf("after a new commit: exit %d, %d tests, want 1, all 21 and the notice %q once\n%s", r.code, len(ran), notice, r.stdout)
	}
	// An uncommitted change to a tracked file is new code too.
	writeTo(t, filepath.Join(f.dir, "ci/core.sh"), readFile(t, filepath.Join(f.dir, "ci/core.sh"))+"# again\n")
	if r, ran := f.run(t, fail); len(ran) != 21 || !strings.Contains(r.stdout, notice) {
		t.Errorf("after an uncommitted change: %d tests, want all 21 with the notice\n%s", len(ran), r.stdout)
	}
	if r, ran := f.run(t, nil); r.code != 0 || len(ran) != 2 {
		t.Errorf("a re-run of that same uncommitted change: exit %d, %d tests, want 0 and the 2 that failed\n%s", r.code, len(ran), r.stdout)
	}
	// GITHUB_SHA names the code when set (the action, a workflow).
	if r, _ := f.run(t, []string{"GITHUB_SHA=aaaa", "RERUN_CORE_FAIL=1"}); r.code != 1 {
		t.Fatalf("GITHUB_SHA=aaaa: exit %d\n%s", r.code, r.stdout)
	}
	if _, ran := f.run(t, []string{"GITHUB_SHA=aaaa", "RERUN_CORE_FAIL=1"}); len(ran) != 1 {
		t.Errorf("a re-run of GITHUB_SHA=aaaa: %d tests, want core's 1", len(ran))
	}
	if r, ran := f.run(t, []string{"GITHUB_SHA=bbbb", "RERUN_CORE_FAIL=1"}); len(ran) != 21 || !strings.Contains(r.stdout, notice+"aaaa, this run tests bbbb)") {
		t.Errorf("GITHUB_SHA=bbbb after aaaa's failure: %d tests, want all 21 with the notice\n%s", len(ran), r.stdout)
	}
}

// TestRerunSuitesKeepsOtherSuites (issue 27, case 3): a run rewrites only what it
// ran. Attempt 1 fails torch's test_b and jax's test_x; a run of --suites torch
// (fixed) leaves jax's entry in the list; the next plain run re-runs test_x, and
// does not pass jax as "not re-run this attempt".
func TestRerunSuitesKeepsOtherSuites(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	if r, _ := f.run(t, []string{"RERUN_FAIL=tests.test_b::t2 tests.jax.test_x::t1"}); r.code != 1 {
		t.Fatalf("attempt 1: exit %d\n%s", r.code, r.stdout)
	}
	r, ran := f.run(t, nil, "--suites", "torch")
	if r.code != 0 || len(ran) != 1 {
		t.Fatalf("--suites torch: exit %d, ran %q, want 0 and test_b's t2\n%s", r.code, ran, r.stdout)
	}
	if got := f.file(t, failedList); got != "jax\ttests.jax.test_x\n" {
		t.Errorf("%s after --suites torch: %q, want jax's entry kept", failedList, got)
	}
	if !strings.Contains(r.stdout, "re-run: left in the list for the runs that have them (another --suites, another shard): jax/tests.jax.test_x") {
		t.Errorf("--suites torch does not say it keeps jax's entry:\n%s", r.stdout)
	}
	r, ran = f.run(t, nil)
	want := []string{"tests.jax.test_x\tt1\t" + filepath.Join(f.dir, "ci-rerun/sgpu/tests/jax.tests.jax.test_x.txt")}
	if r.code != 0 || !slices.Equal(ran, want) {
		t.Errorf("the next plain run: exit %d, ran %q, want %q\n%s", r.code, ran, want, r.stdout)
	}
	if strings.Contains(r.stdout, "passing: jax") || !strings.Contains(r.stdout, "passing: torch, core") {
		t.Errorf("the next plain run passes jax unrun, or not torch and core:\n%s", r.stdout)
	}
}

// TestRerunNotALineReason (issue 27, point 12): a failed test whose name holds a
// newline, CR or tab cannot be a line of a tests file; the item re-runs whole, and
// the console says so (not "nothing in it named a failing test").
func TestRerunNotALineReason(t *testing.T) {
	t.Parallel()
	for name, ref := range map[string]string{"newline": "&#10;", "CR": "&#13;", "tab": "&#9;"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t, "e2e")
			script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then echo "TE_CI_ITEM t1"; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
cat >"$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX" <<'EOF'
<testsuites><testsuite name="pytest" tests="4" failures="1">
<testcase file="tests/test_x.py" classname="tests.test_x" name="test_a[x` + ref + `y]"><failure message="no"/></testcase>
<testcase file="tests/test_x.py" classname="tests.test_x" name="test_b"/>
<testcase file="tests/test_x.py" classname="tests.test_x" name="test_c"/>
<testcase file="tests/test_x.py" classname="tests.test_x" name="test_d"/>
</testsuite></testsuites>
EOF
exit 1
`
			if err := os.WriteFile(filepath.Join(dir, "ci", "nl.sh"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			conf := writeConf(t, dir, "nl.conf", "s s.log list ci/nl.sh\n")
			r := sgpu(t, dir, nil, "run", "--gpus", "1", "--arch", "gfx942", conf)
			want := "re-run: s/t1 re-runs whole: its failed test \"test_a[x"
			if r.code != 1 || !strings.Contains(r.stdout, want) ||
				!strings.Contains(r.stdout, "\" holds a newline, CR or tab, so it cannot be a line of a tests file\n") {
				t.Errorf("exit %d; want 1 and %q … holds a newline, CR or tab\n%s", r.code, want, r.stdout)
			}
		})
	}
}

// TestRerunStoppedCountsWhatRan (issue 27, point 12): a re-run of 4 failed items on
// one GPU, stopped by SIGTERM while the first runs, says 1 of them ran again, not 4.
func TestRerunStoppedCountsWhatRan(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then printf 'TE_CI_ITEM a\nTE_CI_ITEM b\nTE_CI_ITEM c\nTE_CI_ITEM d\n'; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
[ -n "$FAIL" ] && exit 1
echo started >"$HOLD.started"
while [ ! -e "$HOLD" ]; do sleep 0.05; done
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "hold.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "hold.conf", "h h.log list ci/hold.sh\n")
	if r := sgpu(t, dir, []string{"FAIL=1"}, "run", "--gpus", "1", "--arch", "gfx942", conf); r.code != 1 {
		t.Fatalf("attempt 1: exit %d\n%s", r.code, r.stdout)
	}
	hold := filepath.Join(t.TempDir(), "hold")
	cmd := exec.Command(binary, "run", "--gpus", "1", "--arch", "gfx942", conf)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "HOLD=" + hold}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(hold + ".started"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no item started:\n%s", out.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	code := waitExit(t, cmd, 90*time.Second)
	console := out.String()
	want := "a re-run: 1 of the 4 item(s) that failed the last attempt ran again (--full runs everything; 3 queued never started: the run stopped first)"
	if code == 0 || !strings.Contains(console, want) {
		t.Errorf("exit %d; want a failure and %q\n%s", code, want, console)
	}
	if md := readFile(t, filepath.Join(dir, "test-results/logs/report/schedule.md")); !strings.Contains(md, "**A re-run**: 1 of the 4 item(s)") {
		t.Errorf("the report does not say 1 of the 4 ran again:\n%s", md)
	}
}

// TestShardRerunMerges (issue 27, case 5): shards 1/2 and 2/2 of the re-run
// fixture (three suites) in their own workspaces; torch's test_c fails on shard 2.
// That shard is run again as "Re-run failed jobs" runs it: on a fresh runner with
// only ci-rerun/ restored. It runs test_c alone (now passing), carries the earlier
// outcomes of its other items, and merge of shard 1's and the re-run's log dirs
// succeeds: every item once, with its latest outcome; the re-run's rows teach the
// table nothing.
func TestShardRerunMerges(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ws := func(name string) *rerunFixture {
		dir := filepath.Join(base, name)
		copyFixture(t, "rerun", dir)
		return &rerunFixture{dir: dir, trace: filepath.Join(dir, "trace.tsv")}
	}
	ws1, ws2, fresh := ws("ws1"), ws("ws2"), ws("ws3")
	if r, _ := ws1.run(t, nil, "--shard", "1/2"); r.code != 0 {
		t.Fatalf("shard 1/2: exit %d\n%s", r.code, r.stdout)
	}
	if r, ran := ws2.run(t, []string{"RERUN_FAIL=tests.test_c::t1"}, "--shard", "2/2"); r.code != 1 || len(ran) != 12 {
		t.Fatalf("shard 2/2: exit %d, %d tests, want 1 and its 3 items' 12\n%s", r.code, len(ran), r.stdout)
	}
	if err := os.CopyFS(filepath.Join(fresh.dir, "ci-rerun"), os.DirFS(filepath.Join(ws2.dir, "ci-rerun"))); err != nil {
		t.Fatal(err)
	}
	r, ran := fresh.run(t, nil, "--shard", "2/2")
	if want := []string{"tests.test_c\tt1\t" + filepath.Join(fresh.dir, "ci-rerun/sgpu/tests/torch.tests.test_c.txt")}; r.code != 0 || !slices.Equal(ran, want) {
		t.Fatalf("re-run of shard 2/2: exit %d, ran %q, want 0 and %q\n%s", r.code, ran, want, r.stdout)
	}
	table := filepath.Join(base, "ci-weights", "test_weights.gfx942.l99.txt")
	m := sgpu(t, base, nil, "merge", "--log-dir", "merged", "ws1/test-results/logs", "ws3/test-results/logs")
	if m.code != 0 {
		t.Fatalf("merge: exit %d, want 0\n%s\n%s", m.code, m.stdout, m.stderr)
	}
	var got []string
	for _, s := range []string{"torch", "jax", "core"} {
		got = append(got, lines(readFile(t, filepath.Join(base, "merged/suites", s+".log")))...)
	}
	slices.Sort(got)
	const carried = " (carried: the re-run of shard 2/2 did not run it again; its log is the earlier attempt's)"
	want := []string{"ok rc=0 items/core.whole.log", "ok rc=0 items/jax.tests.jax.test_x.log", "ok rc=0 items/jax.tests.jax.test_y.log" + carried,
		"ok rc=0 items/torch.tests.test_a.log" + carried, "ok rc=0 items/torch.tests.test_b.log", "ok rc=0 items/torch.tests.test_c.log"}
	if !slices.Equal(got, want) {
		t.Errorf("merged verdicts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(m.stdout, "shard 2/2: ws3/test-results/logs: a re-run (1 item(s) ran again, 2 carried): its rows teach nothing") {
		t.Errorf("merge does not say the re-run teaches nothing:\n%s", m.stdout)
	}
	keys := lines(readFile(t, table))
	for _, k := range keys {
		if strings.HasPrefix(k, "torch/tests.test_c") || strings.HasPrefix(k, "torch/tests.test_a") || strings.HasPrefix(k, "jax/tests.jax.test_y") {
			t.Errorf("the merge learned %q from the re-run shard", k)
		}
	}
}

// TestRerunStateLinkPlantedMidRun: a link that appears where the state is written
// after phase 0 checked (an item made it) is refused at the write: the file is NOT
// written, with a warning naming it, and what the link aims at is untouched.
func TestRerunStateLinkPlantedMidRun(t *testing.T) {
	t.Parallel()
	for _, at := range []string{failedList, testsOfB, "ci-rerun/sgpu/state.gfx942.l99.json"} {
		t.Run(filepath.Base(at), func(t *testing.T) {
			t.Parallel()
			f := newRerunFixture(t)
			precious := filepath.Join(t.TempDir(), "precious.txt")
			writeTo(t, precious, "precious\n")
			r, _ := f.runWithin(t, 2*time.Minute, []string{"RERUN_FAIL=tests.test_b::t2",
				"RERUN_PLANT=" + filepath.Join(f.dir, at), "RERUN_PLANT_TARGET=" + precious})
			want := "warning: " + at + " NOT written ("
			if r.code != 1 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, at+" is a symbolic link to "+precious) {
				t.Errorf("exit %d; want 1 and %q … is a symbolic link\n%s", r.code, want, r.stdout)
			}
			if got := readFile(t, precious); got != "precious\n" {
				t.Errorf("the link's target now holds %q", got)
			}
		})
	}
}

// TestRerunRunsWhatNeverRan: a re-run skips an item only when a run of its key
// ran it and it passed. A first run of --suites torch fails test_b; the next
// plain run re-runs test_b's failed test and runs jax and core whole (no run of
// this key ran them), instead of passing them unrun. So does a run that adds the
// mGPU queue, whose state no run of this key wrote.
func TestRerunRunsWhatNeverRan(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	if err := os.WriteFile(filepath.Join(f.dir, "ci", "mcore.sh"), []byte("#!/bin/sh\nprintf 'mcore\\twhole\\t\\n' >>\"$RERUN_TRACE\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeConf(t, f.dir, "ci/mgpu.conf", "mcore mcore.log opaque ci/mcore.sh\n")
	if r, ran := f.run(t, []string{"RERUN_FAIL=tests.test_b::t2"}, "--suites", "torch"); r.code != 1 || len(ran) != 12 {
		t.Fatalf("--suites torch: exit %d, %d tests, want 1 and torch's 12\n%s", r.code, len(ran), r.stdout)
	}
	r, ran := f.run(t, nil, "--mgpu-config", "ci/mgpu.conf")
	jax := 0
	for _, l := range ran {
		if strings.HasPrefix(l, "tests.jax.") {
			jax++
		}
	}
	b := "tests.test_b\tt2\t" + filepath.Join(f.dir, testsOfB)
	if r.code != 0 || len(ran) != 11 || !slices.Contains(ran, b) || jax != 8 || !slices.Contains(ran, "core\twhole\tunset") ||
		!slices.Contains(ran, "mcore\twhole\t") {
		t.Errorf("the plain run: exit %d, ran %q; want 0, test_b's t2, jax's 8 tests, core and mcore\n%s", r.code, ran, r.stdout)
	}
	if strings.Contains(r.stdout, "not re-run this attempt (nothing of theirs failed the last one), passing") {
		t.Errorf("suites pass unrun:\n%s", r.stdout)
	}
	want := "re-run: queueing too the 4 item(s) no earlier run of this key ran (another --suites, another queue, new): " +
		"jax/tests.jax.test_x, jax/tests.jax.test_y, core, mcore\n"
	summary := "a re-run: 1 of the 1 item(s) that failed the last attempt ran again, and the 4 no earlier run of this key ran"
	if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, summary) {
		t.Errorf("no notice %q, or no summary %q:\n%s", want, summary, r.stdout)
	}
}

// TestRerunHostileList: a failed list whose lines name labels with spaces, glob
// characters or a path narrows by the one real item among them; the others are
// named as not in this run's queue (as printable text), match nothing, become no
// path, and leave the list with the run's own result.
func TestRerunHostileList(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	writeTo(t, filepath.Join(f.dir, failedList), "tor ch\ttests.test_b\n*\t*\n../../x\t\ntorch\ttests.test_b\n[a-z]*\ttests.test_?\n")
	r, ran := f.run(t, nil)
	if r.code != 0 || len(ran) != 4 || !strings.HasPrefix(ran[0], "tests.test_b\t") {
		t.Errorf("exit %d, ran %q; want 0 and test_b's 4 tests\n%s", r.code, ran, r.stdout)
	}
	want := "re-run: not in this run's queue (gone, or not run here): \"tor ch/tests.test_b\", */*, ../../x, [a-z]*/tests.test_?\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("no line %q:\n%s", want, r.stdout)
	}
	if got := f.file(t, failedList); got != "" {
		t.Errorf("the list after a green run: %q, want it empty", got)
	}
	if _, err := os.Lstat(filepath.Join(f.dir, "x")); err == nil {
		t.Error("a file x was made from the label ../../x")
	}
}

// TestRerunMangledRecord: a record beside the list that does not parse (cut
// short, a hand's edit) is no key: a run that knows its code runs everything, with
// one notice naming the record, and writes a good one.
func TestRerunMangledRecord(t *testing.T) {
	t.Parallel()
	f := newRerunFixture(t)
	sha := []string{"GITHUB_SHA=aaaa", "RERUN_FAIL=tests.test_b::t2"}
	if r, _ := f.run(t, sha); r.code != 1 {
		t.Fatalf("attempt 1: exit %d\n%s", r.code, r.stdout)
	}
	const record = "ci-rerun/sgpu/state.gfx942.l99.json"
	writeTo(t, filepath.Join(f.dir, record), `{"version": 1, "items": [`)
	r, ran := f.run(t, sha[:1])
	want := "re-run: " + failedList + " is not this run's (its record " + record + " cannot be read: unexpected EOF): running everything\n"
	if r.code != 0 || len(ran) != 21 || strings.Count(r.stdout, "re-run: ") != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d, %d tests; want 0, all 21 and the one notice %q\n%s", r.code, len(ran), want, r.stdout)
	}
	if got := f.file(t, record); !strings.Contains(got, `"code": "aaaa"`) {
		t.Errorf("the record after the run:\n%s", got)
	}
}

// TestRerunStateTwoRunsAtOnce: two runs in one checkout at once, each with its own
// log dir and suites, both failing. Run A reads the state, then holds in its item
// while run B fails and saves; A's save must keep B's entry (the state is read
// again and rewritten under a lock), so the next plain run re-runs both items.
func TestRerunStateTwoRunsAtOnce(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then echo "TE_CI_ITEM $1"; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
echo "$1" >>"$TRACE"
if [ -n "$HOLD" ]; then
	echo started >"$HOLD.started"
	while [ ! -e "$HOLD" ]; do sleep 0.05; done
fi
[ -n "$FAIL" ] && exit 1
` + writeXML
	if err := os.WriteFile(filepath.Join(dir, "ci", "two.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "two.conf", "sa sa.log list ci/two.sh a1\nsb sb.log list ci/two.sh b1\n")
	trace := filepath.Join(t.TempDir(), "trace")
	hold := filepath.Join(t.TempDir(), "hold")
	a, out := startRun(t, dir, []string{"FAIL=1", "HOLD=" + hold, "TRACE=" + trace}, hold+".started",
		"run", "--gpus", "0,", "--arch", "gfx942", "--suites", "sa", "--log-dir", "logs-a", conf)
	b := sgpu(t, dir, []string{"FAIL=1", "TRACE=" + trace}, "run", "--gpus", "1,", "--arch", "gfx942", "--suites", "sb", "--log-dir", "logs-b", conf)
	if b.code != 1 {
		t.Fatalf("run B: exit %d\n%s", b.code, b.stdout)
	}
	writeTo(t, hold, "")
	if code := waitExit(t, a, 90*time.Second); code != 1 {
		t.Fatalf("run A: exit %d\n%s", code, out.String())
	}
	list := filepath.Join(dir, "ci-rerun/sgpu/failed.gfx942.l99.tsv")
	if got := readFile(t, list); got != "sa\ta1\nsb\tb1\n" {
		t.Errorf("the list after both: %q, want A's failure and B's", got)
	}
	writeTo(t, trace, "")
	if r := sgpu(t, dir, []string{"TRACE=" + trace}, "run", "--gpus", "1", "--arch", "gfx942", conf); r.code != 0 ||
		readFile(t, trace) != "a1\nb1\n" && readFile(t, trace) != "b1\na1\n" {
		t.Errorf("the next run: exit %d, ran %q; want 0 and both items\n%s", r.code, readFile(t, trace), r.stdout)
	}
}
