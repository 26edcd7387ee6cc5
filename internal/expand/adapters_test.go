package expand

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/adaptertest"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/runenv"
)

// cmdSuite is an adapter suite as the config reads it: "<label> x.log <mode field> <args>".
func cmdSuite(t *testing.T, line int, label, modeField string, args ...string) config.Suite {
	t.Helper()
	mode, opts, err := config.ParseMode(modeField)
	if err != nil {
		t.Fatal(err)
	}
	return config.Suite{Label: label, LogFile: label + ".log", Mode: mode, Options: opts, Args: args, File: "c.conf", Line: line}
}

// setupLogs collects the setup logs a run opens, by label.
type setupLogs map[string]*bytes.Buffer

func (l setupLogs) open(s config.Suite) (io.WriteCloser, string, error) {
	b := &bytes.Buffer{}
	l[s.Label] = b
	return nopCloser{b}, "setup/" + s.Label + ".log", nil
}

// Adapter suites are listed after their setup= commands, each distinct one run once
// from the repo root with the first suite's env=; their listing is their census.
func TestRunAdapterSuites(t *testing.T) {
	dir := t.TempDir()
	list := script(t, dir, "list.sh", `echo "TE_CI_ITEM a"`)
	// The command files exist only after the setup (a build the listing needs).
	build := `echo "built by $WHO at level $TEST_LEVEL in $PWD filter=[$TEST_FILTER]"; echo x >> runs; printf 'one echo 1\ntwo echo "2 2"\n' > cmds; printf 'three true\n' > more`
	suites := []config.Suite{
		{Label: "torch", Mode: config.List, Path: list},
		cmdSuite(t, 2, "c1", "cmd,env=WHO=first,setup="+build, "cmds"),
		cmdSuite(t, 3, "c2", "cmd,env=WHO=second,setup="+build, "more"),
		cmdSuite(t, 4, "c3", "cmd", "cmds"),
	}
	logs := setupLogs{}
	var log bytes.Buffer
	res, err := Run(context.Background(), Request{
		Suites: suites, Log: &log, SetupLog: logs.open,
		Target: runenv.Target{Exec: executor.Local{}, Hooks: hook.Default(), Level: "2", RepoRoot: dir,
			Env: []string{"PATH=" + os.Getenv("PATH"), "TEST_FILTER=stale"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); string(runs) != "x\n" {
		t.Errorf("the shared setup ran %d times, want once", strings.Count(string(runs), "x"))
	}
	if len(logs) != 1 || logs["c1"] == nil {
		t.Fatalf("setup logs %v, want c1's only", logs)
	}
	if got, want := logs["c1"].String(), "built by first at level 2 in "+dir+" filter=[]\n"; got != want {
		t.Errorf("setup log %q, want %q (first suite's env=, the level, the repo root, no hook switch)", got, want)
	}
	if diff := cmp.Diff([]SetupRun{{Suite: suites[1], Shared: []string{"c2"}, Log: "setup/c1.log"}}, res.Setups,
		cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Secs" }, cmp.Ignore())); diff != "" {
		t.Errorf("setups (-want +got):\n%s", diff)
	}
	var keys []string
	for i, it := range res.Items {
		keys = append(keys, it.Key())
		if it.Seq != i {
			t.Errorf("item %s has seq %d, want %d", it.Key(), it.Seq, i)
		}
	}
	if diff := cmp.Diff([]string{"torch/a", "c1/one", "c1/two", "c2/three", "c3/one", "c3/two"}, keys); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if a := res.Items[2]; a.Adapter == nil || a.Unit.Tag != "two" || a.Unit.Args[0] != `echo "2 2"` || a.Suite.Label != "c1" {
		t.Errorf("item 2: %+v", a)
	}
	if a := res.Items[0]; a.Adapter == nil || a.Unit.Tag != "a" || a.Suite.Label != "torch" {
		t.Errorf("a list item has no adapter of its own: %+v", a)
	}
	if diff := cmp.Diff(map[string]bool{"c1/one": true, "c1/two": true}, res.Census["c1"]); diff != "" {
		t.Errorf("c1's census is its listing (-want +got):\n%s", diff)
	}
	want := record.ItemID{Label: "c2", Tag: "three"}
	if !slicesContains(res.Rows, want) {
		t.Errorf("census rows %+v lack %+v", res.Rows, want)
	}
	if !strings.Contains(log.String(), "### c1 listing: cat -- cmds") {
		t.Errorf("expand.log does not name the adapter listing:\n%s", log.String())
	}
}

func slicesContains(rows []record.ItemID, r record.ItemID) bool {
	for _, x := range rows {
		if x == r {
			return true
		}
	}
	return false
}

// A setup= or listing that fails, hangs past its deadline or is cancelled stops the
// expansion with the suite's line, the tail of its output and the log to read.
func TestAdapterFailures(t *testing.T) {
	tests := []struct {
		name, mode, file string
		setupTimeout     time.Duration
		listTimeout      time.Duration
		cancelAfter      time.Duration
		want             []string
		timedOut         bool
		cause            error
	}{
		{name: "setup fails", mode: `cmd,setup=echo "cmake: no compiler" >&2; exit 3`, file: "cmds",
			want: []string{`c.conf:5: suite "s": its setup= command (sh -c "echo \"cmake: no compiler\" >&2; exit 3") exited with 3; log setup/s.log`, "| cmake: no compiler"}},
		{name: "setup hangs", mode: `cmd,setup=echo building >&2; sleep 30`, file: "cmds", setupTimeout: 300 * time.Millisecond, timedOut: true,
			want: []string{`c.conf:5: suite "s": its setup= command did not end within 300ms (setup-timeout) and was stopped; log setup/s.log`, "| building"}},
		{name: "setup cancelled", mode: `cmd,setup=sleep 30`, file: "cmds", cancelAfter: 300 * time.Millisecond, cause: context.Canceled,
			want: []string{`c.conf:5: suite "s": setup cancelled`}},
		{name: "listing fails", mode: "cmd", file: "missing.cmds",
			want: []string{`c.conf:5: suite "s": cannot read the command file missing.cmds`, "| cat:"}},
		// cat blocks on a FIFO nobody writes: a listing that never ends.
		{name: "listing hangs", mode: "cmd,setup=mkfifo fifo", file: "fifo", listTimeout: 300 * time.Millisecond, timedOut: true,
			want: []string{`c.conf:5: suite "s": its cmd listing did not end within 300ms (list-timeout) and was stopped`}},
		{name: "listing cancelled", mode: "cmd,setup=mkfifo fifo", file: "fifo", cancelAfter: 300 * time.Millisecond, cause: context.Canceled,
			want: []string{`c.conf:5: suite "s": listing cancelled`}},
		{name: "bad arguments", mode: "cmd", want: []string{`c.conf:5: suite "s": want "<label> <logfile> cmd <file>"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var args []string
			if tt.file != "" {
				args = []string{tt.file}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelAfter > 0 {
				time.AfterFunc(tt.cancelAfter, cancel)
			}
			_, err := Run(ctx, Request{
				Suites: []config.Suite{cmdSuite(t, 5, "s", tt.mode, args...)},
				Target: runenv.Target{Exec: executor.Local{Grace: time.Second}, Hooks: hook.Default(), Level: "1", RepoRoot: dir,
					Env: []string{"PATH=" + os.Getenv("PATH")}},
				SetupLog:     setupLogs{}.open,
				SetupTimeout: tt.setupTimeout, Timeout: tt.listTimeout,
			})
			var ee *Error
			if !errors.As(err, &ee) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if ee.TimedOut != tt.timedOut {
				t.Errorf("TimedOut = %v, want %v", ee.TimedOut, tt.timedOut)
			}
			if tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("error does not wrap %v: %v", tt.cause, err)
			}
		})
	}
}

// Every listing's expand.log header is one line naming the command shell-quoted, as
// the config quotes it: a list suite's, a ctest listing's, and a pytest listing's,
// whose probe script would otherwise spread it over 40 lines (docs/files.md).
func TestListingHeaders(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1"}
	header := func(t *testing.T, log string) string {
		t.Helper()
		first, _, _ := strings.Cut(log, "\n")
		if n := strings.Count(log, "### "); n != 1 {
			t.Errorf("%d headers in:\n%s", n, log)
		}
		return first
	}
	t.Run("list", func(t *testing.T) {
		list := script(t, dir, "list.sh", `echo "TE_CI_ITEM a"`)
		var log bytes.Buffer
		s := config.Suite{Label: "torch", Mode: config.List, Path: list, Args: []string{"-k", "not slow"}}
		req := Request{Target: runenv.Target{Exec: executor.Local{}, Hooks: hook.Default(), RepoRoot: dir, Env: env}, Log: &log}
		if _, _, err := ListAdapter(context.Background(), req, s); err != nil {
			t.Fatal(err)
		}
		if got, want := header(t, log.String()), "### torch queue: "+list+" -k 'not slow'"; got != want {
			t.Errorf("header %q, want %q", got, want)
		}
	})
	t.Run("ctest", func(t *testing.T) {
		var log bytes.Buffer
		s := cmdSuite(t, 1, "kern", "ctest", "--test-dir", "no build", "-E", "Test(.*XTN|.*XNT)")
		ListAdapter(context.Background(), Request{Target: runenv.Target{Exec: executor.Local{}, Hooks: hook.Default(), RepoRoot: dir, Env: env}, Log: &log}, s) // fails: no build
		if got, want := header(t, log.String()), "### kern listing: ctest --test-dir 'no build' -E 'Test(.*XTN|.*XNT)' --show-only=json-v1"; got != want {
			t.Errorf("header %q, want %q", got, want)
		}
	})
	t.Run("pytest", func(t *testing.T) {
		py := adaptertest.Python(t)
		repo := filepath.Join(t.TempDir(), "repo")
		if err := os.CopyFS(repo, os.DirFS(filepath.Join("..", "..", "testdata", "adapters", "pytest"))); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		s := cmdSuite(t, 1, "unit", "pytest,python="+py, "-p", "no:cacheprovider", "-m", "not slow", "tests")
		if _, _, err := ListAdapter(context.Background(), Request{Target: runenv.Target{Exec: executor.Local{}, Hooks: hook.Default(), RepoRoot: repo, Env: env}, Log: &log}, s); err != nil {
			t.Fatal(err)
		}
		want := "### unit listing: " + py + " -m pytest --collect-only -q --continue-on-collection-errors -p no:cacheprovider -m 'not slow' tests  (run in process by sgpu-queue's collection probe, docs/adapters.md)"
		if got := header(t, log.String()); got != want {
			t.Errorf("header %q, want %q", got, want)
		}
		if strings.Contains(log.String(), "import pytest") {
			t.Errorf("the probe's script is in expand.log:\n%s", log.String())
		}
	})
}
