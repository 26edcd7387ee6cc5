package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/treetest"
)

// The state one run leaves for the next is never written through a link, and a
// FIFO never hangs a run (docs/bad-day.md "The state between runs: links and
// FIFOs"; issue 27, points 1 and 7).

// linksConf is the links tests' queue: a list suite of three items, one of which
// fails one test, and an opaque suite; every item writes TE's JUnit and .failed
// files (testdata/rerun), so a run writes the log dir, the JUnit dir and ci-rerun/.
const linksConf = "torch torch.log list ci/pytorch.sh\ncore core.log opaque ci/core.sh\n"

// linksArgs are the links tests' run, from the scratch repo's root.
var linksArgs = []string{"run", "--gpus", "0,1", "--arch", "gfx942", "links.conf"}

func linksEnv(repo string) []string {
	return []string{"RERUN_FAIL=tests.test_b::t2", "RERUN_TRACE=" + filepath.Join(repo, "trace.tsv")}
}

// linksRepo is a scratch repo with the links queue, run once.
func linksRepo(t *testing.T) string {
	t.Helper()
	repo := fixture(t, "rerun")
	writeConf(t, repo, "links.conf", linksConf)
	if r := sgpu(t, repo, linksEnv(repo), linksArgs...); r.code != 1 {
		t.Fatalf("the first run: exit %d, want 1 (test_b fails)\n%s%s", r.code, r.stdout, r.stderr)
	}
	return repo
}

// writtenPaths is every file and directory the run wrote under test-results/ (the
// log dir and the JUnit dir) and ci-rerun/, relative to repo, the roots included.
// The files the items wrote themselves under the log dir's junit/<label>/ are left
// out: an item is the pull request's code, which can write anywhere already.
func writtenPaths(t *testing.T, repo string) []string {
	t.Helper()
	var out []string
	for _, top := range []string{"test-results", "ci-rerun"} {
		err := filepath.WalkDir(filepath.Join(repo, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repo, p)
			if parts := strings.Split(rel, string(filepath.Separator)); len(parts) == 5 && parts[2] == "junit" && !d.IsDir() {
				return nil // test-results/logs/junit/<label>/<file>: the item's own
			}
			out = append(out, rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestNoWriteThroughLinks: for each file and directory a run wrote under the log
// dir, the JUnit dir and ci-rerun/, a copy of the repo gets a symlink there to a
// copy of it outside the repo ("precious"), as a pull request can commit one. The
// next run leaves the outside tree byte for byte as it was, creates nothing there,
// and refuses before anything runs: exit 2 and one line naming the path.
func TestNoWriteThroughLinks(t *testing.T) {
	t.Parallel()
	base := linksRepo(t)
	paths := writtenPaths(t, base)
	if len(paths) < 30 {
		t.Fatalf("the first run wrote only %d paths:\n%s", len(paths), strings.Join(paths, "\n"))
	}
	for _, rel := range paths {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			repo := filepath.Join(t.TempDir(), "repo")
			treetest.Copy(t, base, repo, nil)
			outside := t.TempDir()
			precious := filepath.Join(outside, "precious")
			treetest.Copy(t, filepath.Join(repo, rel), precious, nil)
			if err := os.RemoveAll(filepath.Join(repo, rel)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(precious, filepath.Join(repo, rel)); err != nil {
				t.Fatal(err)
			}
			before := treetest.Snapshot(t, outside)
			trace := readFile(t, filepath.Join(repo, "trace.tsv"))
			r := sgpu(t, repo, linksEnv(repo), linksArgs...)
			treetest.Same(t, "the tree outside the repo (written through the link)", before, treetest.Snapshot(t, outside))
			errs := lines(r.stderr)
			if r.code != 2 || len(errs) != 1 || !strings.Contains(errs[0], rel+" is a symbolic link to "+precious) {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line naming %s", r.code, r.stderr, rel)
			}
			if readFile(t, filepath.Join(repo, "trace.tsv")) != trace {
				t.Error("items ran although the run was refused")
			}
		})
	}
}

// TestNoWriteThroughLinksMidRun: a link the run can only meet mid-run (an item,
// the pull request's code, plants one where the tool writes next: its own .rc,
// its suite's verdict, the report) is never written through: each is a NOT
// written warning naming it, the run goes on, and the files outside keep their
// bytes.
func TestNoWriteThroughLinksMidRun(t *testing.T) {
	t.Parallel()
	repo := fixture(t, "e2e")
	outside := t.TempDir()
	for _, n := range []string{"rc", "verdict", "report"} {
		if err := os.WriteFile(filepath.Join(outside, n), []byte("precious "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then echo "TE_CI_ITEM plant"; exit 0; fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
logs=$(cd ../.. && pwd)
ln -s "$PRECIOUS/rc" "$logs/items/mid.plant.log.rc"
ln -s "$PRECIOUS/verdict" "$logs/suites/mid.log"
ln -s "$PRECIOUS/report" "$logs/report/schedule.md"
` + writeXML
	if err := os.WriteFile(filepath.Join(repo, "ci", "plant.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, repo, "mid.conf", "mid mid.log list ci/plant.sh\n")
	before := treetest.Snapshot(t, outside)
	r := sgpu(t, repo, []string{"PRECIOUS=" + outside}, "run", "--gpus", "1", "--arch", "gfx942", conf)
	treetest.Same(t, "the tree outside the repo (written through the link)", before, treetest.Snapshot(t, outside))
	logs := filepath.Join("test-results", "logs")
	for _, rel := range []string{"items/mid.plant.log.rc", "suites/mid.log", "report/schedule.md"} {
		want := filepath.Join(logs, rel) + " NOT written"
		if !strings.Contains(r.stdout, want) {
			t.Errorf("console lacks %q\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if r.code != 0 {
		t.Errorf("exit %d, want 0: the item passed, and a file not written changes no verdict (as on a full disk)", r.code)
	}
}

// TestFIFONeverHangs: a FIFO where the tool reads (the config, a plan, a log dir's
// run.json for claim, merge and report, the failed list) ends the run with exit 2
// and one line naming it, without blocking; the weight table, which never stops a
// run (docs/files.md), is a warning naming it (the keys it holds are kept: it is
// not written over), and the run ends with its items' code. Each FIFO is left as
// it was. Were a run to block, a SIGTERM must still end it.
func TestFIFONeverHangs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, fifo string // the FIFO, relative to the repo
		args       []string
		warned     bool // a warning, not a refusal
	}{
		{name: "config", fifo: "links.conf", args: linksArgs},
		{name: "plan file", fifo: "plan.json", args: []string{"run", "--gpus", "0,1", "--arch", "gfx942", "--shard", "1/2", "--plan",
			"plan.json", "links.conf"}},
		{name: "log dir run.json", fifo: "test-results/logs/queue/run.json", args: linksArgs},
		{name: "merge input", fifo: "shard/queue/run.json", args: []string{"merge", "--log-dir", "merged", "shard"}},
		{name: "report input", fifo: "shard/queue/run.json", args: []string{"report", "shard"}},
		{name: "weight table", fifo: "ci-weights/test_weights.gfx942.l99.txt", args: linksArgs, warned: true},
		{name: "failed list", fifo: "ci-rerun/sgpu/failed.gfx942.l99.tsv", args: linksArgs},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := fixture(t, "rerun")
			writeConf(t, repo, "links.conf", linksConf)
			fifo := filepath.Join(repo, tt.fifo)
			os.Remove(fifo)
			if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runUnhung(t, repo, linksEnv(repo), tt.args...)
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO %s was not left as it was: %v %v", tt.fifo, fi, err)
			}
			if tt.warned {
				for _, w := range []string{"warning: " + tt.fifo + " NOT written", "named pipe (FIFO)", "the keys it holds are kept"} {
					if !strings.Contains(stdout, w) {
						t.Errorf("console lacks %q", w)
					}
				}
				if code != 1 {
					t.Errorf("exit %d: want 1 (test_b fails)\n%s%s", code, stdout, stderr)
				}
				return
			}
			errs := lines(stderr)
			if code != 2 || len(errs) != 1 || !strings.Contains(errs[0], tt.fifo) || !strings.Contains(errs[0], "named pipe (FIFO)") {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line naming the FIFO %s", code, stderr, tt.fifo)
			}
		})
	}
}

// runUnhung runs the binary and waits for it with generous bounds (nothing here is
// timed): a run still going after a minute gets SIGTERM, and one that SIGTERM does
// not end in half a minute more is killed; either fails the test.
func runUnhung(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := command(dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
			t.Errorf("the run hung until SIGTERM\n%s", out.String())
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("the run hung, and SIGTERM did not end it\n%s", out.String())
		}
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}
