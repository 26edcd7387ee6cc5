package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// suiteScript honours the hook contract with three items; TEST_FILTER selects one.
const suiteScript = `#!/bin/sh
for tag in a b c; do
    if [ -n "$TE_CI_LIST_ITEMS" ]; then echo "TE_CI_ITEM $tag"; continue; fi
    [ -n "$TE_CI_SETUP_ONLY" ] && exit 0
    [ "$TEST_FILTER" = "$tag" ] && echo "ran $tag"
done
exit 0
`

// repo writes a repo with one list suite (s.sh) and its config, and returns the
// options of a run on it.
func repo(t *testing.T, conf string) Options {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.sh"), []byte(suiteScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ci.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return Options{
		Configs: config.Sources{Files: []string{filepath.Join(dir, "ci.conf")}},
		Target: runenv.Options{
			RepoRoot: dir,
			Level:    "1",
			Env:      []string{"PATH=" + os.Getenv("PATH")},
			Grace:    time.Second,
		},
		GPUs:         "2",
		Arch:         "gfx942",
		Presentation: Presentation{Out: &bytes.Buffer{}},
	}
}

// An error from Run unwraps to its cause, so a face (or a test) can ask what went
// wrong with errors.Is/As instead of reading the message.
func TestErrorUnwrapsToItsCause(t *testing.T) {
	t.Run("a listing that cannot run", func(t *testing.T) {
		o := repo(t, "s s.log list no/such/script.sh\n")
		_, err := Run(context.Background(), o)
		var ee *exitcode.Error
		var xe *expand.Error
		if !errors.As(err, &ee) || ee.Code != exitcode.Failed || exitcode.Of(err, exitcode.Failed) != exitcode.Failed {
			t.Fatalf("err %v (%T)", err, err)
		}
		if !errors.As(err, &xe) || xe.Suite.Label != "s" || !errors.Is(err, executor.ErrNotFound) {
			t.Errorf("the engine error does not unwrap to the listing's executor.ErrNotFound: %v", err)
		}
	})
	t.Run("a log dir under a file", func(t *testing.T) {
		o := repo(t, "s s.log list s.sh\n")
		file := filepath.Join(o.Target.RepoRoot, "plain")
		os.WriteFile(file, nil, 0o644)
		o.LogDir = filepath.Join(file, "logs")
		_, err := Run(context.Background(), o)
		if exitcode.Of(err, exitcode.Failed) != exitcode.Usage || !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("err %v: want a usage error that unwraps to ENOTDIR", err)
		}
	})
}

// panicOn is an executor with a bug that shows for one item: it runs every command,
// then panics after the one whose environment holds env.
type panicOn struct {
	env string
}

func (p panicOn) Run(ctx context.Context, c executor.Command) (executor.Result, error) {
	res, err := executor.Local{Grace: time.Second}.Run(ctx, c)
	for _, kv := range c.Env {
		if kv == p.env {
			panic("a bug after " + p.env)
		}
	}
	return res, err
}

// A worker panic stops dispatch, and phases 5–8 still run on what finished: the
// result carries the panic, the exit code is exitcode.Internal, the files are there.
func TestWorkerPanicStillWritesPhases5To8(t *testing.T) {
	o := repo(t, "s s.log list s.sh\n")
	o.GPUs = "1"
	o.Target.Exec = panicOn{env: "TEST_FILTER=b"}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Internal == nil || res.ExitCode != exitcode.Internal || res.Stop == nil || res.Stop.Reason != outcome.StopInternal {
		t.Fatalf("internal %v, exit %d, stop %+v", res.Internal, res.ExitCode, res.Stop)
	}
	if !strings.Contains(res.Internal.Error(), "a bug after TEST_FILTER=b") {
		t.Errorf("panic %q", res.Internal.Error())
	}
	logs := filepath.Join(o.Target.RepoRoot, "test-results", "logs")
	verdicts, err := os.ReadFile(filepath.Join(logs, "suites", "s.log"))
	want := "ok rc=0 items/s.a.log\nFAIL rc=- items/s.b.log (not recorded: sgpu-queue stopped on an internal error)\nFAIL rc=- items/s.c.log (not recorded: sgpu-queue stopped on an internal error)\n"
	if err != nil || string(verdicts) != want {
		t.Errorf("suites/s.log %q, %v; want %q", verdicts, err, want)
	}
	if rc, _ := os.ReadFile(filepath.Join(logs, "suites", "s.log.rc")); string(rc) != "1\n" {
		t.Errorf("s.log.rc %q", rc)
	}
	if _, err := os.Stat(filepath.Join(logs, "report", "schedule.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
	table, err := os.ReadFile(filepath.Join(o.Target.RepoRoot, "ci-weights", "test_weights.gfx942.l1.txt"))
	if err != nil || !strings.HasPrefix(string(table), "s/a ") || strings.Count(string(table), "\n") != 1 {
		t.Errorf("weights %q, %v: want s/a only", table, err)
	}
	out := o.Presentation.Out.(*bytes.Buffer).String()
	if !strings.Contains(out, "run stopped (internal-error): internal error in sgpu-queue: a bug after TEST_FILTER=b") || !strings.Contains(out, "exit code 70") {
		t.Errorf("console:\n%s", out)
	}
}

// countingObserver is an Observer as a face may write one: it keeps counts with no
// lock of its own (the action's counts its annotations).
type countingObserver struct {
	phases []int
	warns  []string
}

func (o *countingObserver) Phase(n int, title string) { o.phases = append(o.phases, n) }
func (o *countingObserver) Warn(msg string)           { o.warns = append(o.warns, msg) }

// Items that end at once on several GPUs, each leaving a process behind, warn from
// their workers at the same time: the engine hands the face's Observer one call at
// a time (the race detector sees two at once otherwise), and every warning arrives.
func TestObserverCalledOneAtATime(t *testing.T) {
	o := repo(t, "s s.log list s.sh\n")
	script := `#!/bin/sh
[ -n "$TE_CI_LIST_ITEMS" ] && { for tag in a b c; do echo "TE_CI_ITEM $tag"; done; exit 0; }
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
sleep 30 >/dev/null 2>&1 &
exit 0
`
	if err := os.WriteFile(filepath.Join(o.Target.RepoRoot, "s.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	o.GPUs = "3"
	obs := &countingObserver{}
	o.Presentation.Observer = obs
	res, err := Run(context.Background(), o)
	if err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	left := 0
	for _, w := range obs.warns {
		// Running, or holding its output when the sweep finds it before its
		// redirection.
		if strings.Contains(w, "left a process ") && strings.Contains(w, " after it exited") {
			left++
		}
	}
	if left != 3 {
		t.Errorf("%d warnings of a process left behind, want one per item:\n%s", left, strings.Join(obs.warns, "\n"))
	}
	if len(obs.phases) != 9 || obs.phases[0] != 0 || obs.phases[8] != 8 {
		t.Errorf("phases %v, want 0 to 8", obs.phases)
	}
}

// cancelOnSave is the local table, whose Save first cancels the run: a signal that
// arrives during phase 6, after every item ended.
type cancelOnSave struct {
	weights.File
	cancel context.CancelFunc
}

func (c cancelOnSave) Save(ctx context.Context, t *weights.Table) error {
	c.cancel()
	return c.File.Save(ctx, t)
}

// A cancel in phases 5–7 is honoured once what was measured is written: the table
// is saved, every suite passed, and the run is a cancelled one (exit 130, not 0).
func TestCancelAfterItems(t *testing.T) {
	o := repo(t, "s s.log list s.sh\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(o.Target.RepoRoot, "w.txt")
	o.Weights.Store = func(_, _, _ string) weights.Store {
		return cancelOnSave{File: weights.File{Path: path}, cancel: cancel}
	}
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != exitcode.Interrupted || !res.Cancelled || len(res.NotWritten) != 0 {
		t.Errorf("exit %d cancelled %v not written %v, want 130, cancelled, all written", res.ExitCode, res.Cancelled, res.NotWritten)
	}
	table, _, err := weights.File{Path: path}.Load(context.Background())
	if err != nil || table.Len() != 3 {
		t.Errorf("saved table: %v, %v; want the 3 items learned", table, err)
	}
	if out := o.Presentation.Out.(*bytes.Buffer).String(); !strings.Contains(out, "run cancelled") || !strings.Contains(out, "exit code 130") {
		t.Errorf("console:\n%s", out)
	}
}

// A weight table that is there but cannot be read (here a symlink loop, which root
// cannot read either) orders nothing and is never written: the run says so, names
// it NOT written, and the link is as it was.
func TestUnreadableTableNotWritten(t *testing.T) {
	o := repo(t, "s s.log list s.sh\n")
	o.Weights.Path = filepath.Join(o.Target.RepoRoot, "w.txt")
	if err := os.Symlink("w.txt", o.Weights.Path); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != exitcode.OK || !slices.Contains(res.NotWritten, "w.txt") {
		t.Errorf("exit %d, not written %q: want 0 and w.txt", res.ExitCode, res.NotWritten)
	}
	if target, err := os.Readlink(o.Weights.Path); err != nil || target != "w.txt" {
		t.Errorf("the table was replaced: %q, %v", target, err)
	}
	out := o.Presentation.Out.(*bytes.Buffer).String()
	if !strings.Contains(out, "will NOT be written: the keys it holds are kept") || !strings.Contains(out, "NOT written (see the warnings): w.txt") {
		t.Errorf("console:\n%s", out)
	}
}

// With Options.JUnitInLogDir (the CLI) and no JUnit prefix in the environment, the
// items write under <log dir>/junit/<label>/ and an item that wrote nothing there is
// a no-run; without it there is no evidence and every item passes; a prefix the
// environment sets wins.
func TestJUnitInLogDir(t *testing.T) {
	script := "#!/bin/sh\nfor tag in a b; do\n" +
		"    if [ -n \"$TE_CI_LIST_ITEMS\" ]; then echo \"TE_CI_ITEM $tag\"; continue; fi\n" +
		"    [ -n \"$TE_CI_SETUP_ONLY\" ] && exit 0\n" +
		"done\n" +
		"[ \"$TEST_FILTER\" = a ] && echo '<testsuite name=\"s\" tests=\"0\"/>' >\"$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX\"\nexit 0\n"
	tests := []struct {
		name     string
		inLogDir bool
		prefix   string // JUNITXML_PREFIX in the environment, relative to the repo root
		xmlDir   string // where a's XML lands, relative to the repo root
		exit     int
	}{
		{"in the log dir", true, "", "test-results/logs/junit/s", exitcode.Failed},
		{"no prefix at all", false, "", "", exitcode.OK},
		{"the environment's wins", true, "xml/", "xml/s", exitcode.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := repo(t, "s s.log list s.sh\n")
			if err := os.WriteFile(filepath.Join(o.Target.RepoRoot, "s.sh"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			o.JUnit.InLogDir = tt.inLogDir
			if tt.prefix != "" {
				o.Target.Env = append(o.Target.Env, "JUNITXML_PREFIX="+tt.prefix)
			}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.exit {
				t.Errorf("exit %d, want %d\n%s", res.ExitCode, tt.exit, o.Presentation.Out.(*bytes.Buffer).String())
			}
			if tt.xmlDir == "" {
				return
			}
			if _, err := os.Stat(filepath.Join(o.Target.RepoRoot, tt.xmlDir, "a.xml")); err != nil {
				t.Errorf("a's XML: %v", err)
			}
			for _, it := range res.Suites[0].Items {
				if want := map[string]outcome.Outcome{"a": outcome.OK, "b": outcome.NoRun}[it.Tag]; it.Outcome != want {
					t.Errorf("item %s: %q, want %q", it.Tag, it.Outcome, want)
				}
			}
		})
	}
}

// plantScript's items each put a link where the tool writes their rc next, to a
// file of $PRECIOUS: the workers report those lost at once (go test -race).
const plantScript = `#!/bin/sh
for tag in a b c d; do
    if [ -n "$TE_CI_LIST_ITEMS" ]; then echo "TE_CI_ITEM $tag"; continue; fi
    [ -n "$TE_CI_SETUP_ONLY" ] && exit 0
    [ "$TEST_FILTER" = "$tag" ] && ln -s "$PRECIOUS/$tag" "$(cd ../.. && pwd)/items/s.$tag.log.rc"
done
exit 0
`

// A link an item plants mid-run where the tool writes next is never written
// through: each is NOT written, named once in Result.NotWritten, and its target
// keeps its bytes.
func TestLinksPlantedMidRun(t *testing.T) {
	o := repo(t, "s s.log list s.sh\n")
	if err := os.WriteFile(filepath.Join(o.Target.RepoRoot, "s.sh"), []byte(plantScript), 0o755); err != nil {
		t.Fatal(err)
	}
	precious := t.TempDir()
	for _, tag := range []string{"a", "b", "c", "d"} {
		os.WriteFile(filepath.Join(precious, tag), []byte("precious\n"), 0o644)
	}
	o.Target.Env = append(o.Target.Env, "PRECIOUS="+precious)
	o.GPUs = "4"
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tag := range []string{"a", "b", "c", "d"} {
		want = append(want, filepath.Join("test-results", "logs", "items", "s."+tag+".log.rc"))
		if data, _ := os.ReadFile(filepath.Join(precious, tag)); string(data) != "precious\n" {
			t.Errorf("%s's rc was written through its link: %q", tag, data)
		}
	}
	got := slices.Sorted(slices.Values(res.NotWritten))
	if !slices.Equal(got, want) || res.ExitCode != exitcode.OK {
		t.Errorf("NOT written %q, exit %d; want %q and 0", got, res.ExitCode, want)
	}
	if out := o.Presentation.Out.(*bytes.Buffer).String(); !strings.Contains(out, want[0]+" NOT written (the exit code of item s/a): "+want[0]+" is a symbolic link to ") {
		t.Errorf("console:\n%s", out)
	}
}
