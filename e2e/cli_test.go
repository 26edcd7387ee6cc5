package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

func fmtSscan(s string, v *float64) (int, error) { return fmt.Sscan(s, v) }

func TestConfigErrorsExit2(t *testing.T) {
	dir := fixture(t, "e2e")
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("alpha alpha.log list ci/alpha.sh\nbeta beta.log parallel ci/beta.sh\nalpha a2.log list ci/alpha.sh\ngone gone.log opaque ci/nope.sh\n"), 0o644)
	r := sgpu(t, dir, nil, "run", "--gpus", "2", "bad.conf")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	want := []string{
		`sgpu-queue: bad.conf:2: suite "beta": unknown mode "parallel"`,
		`sgpu-queue: bad.conf:3: duplicate label "alpha" (first at bad.conf:1)`,
		`sgpu-queue: bad.conf:4: command "ci/nope.sh" of suite "gone" not found`,
	}
	got := lines(r.stderr)
	if len(got) != len(want) {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "test-results")); err == nil {
		t.Error("a rejected config still created the log dir")
	}
}

func TestUsageErrors(t *testing.T) {
	dir := fixture(t, "e2e")
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no config", nil, []string{"run"}, "sgpu-queue run: no CONFIG given"},
		{"unknown flag", nil, []string{"run", "--bogus", "ci/queue.conf"}, "flag provided but not defined: -bogus"},
		{"unknown command", nil, []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"bad default weight", nil, []string{"run", "--default-weight", "-1", "ci/queue.conf"}, "--default-weight"},
		{"bad level", nil, []string{"run", "--gpus", "1", "--level", "../x", "ci/queue.conf"}, `--level "../x"`},
		{"no GPU", []string{"PATH=/usr/bin:/bin"}, []string{"run", "ci/queue.conf"}, "no GPU found"},
		{"bad SGPU_ variable", []string{"SGPU_DRY_RUN=yes"}, []string{"run", "--gpus", "1", "ci/queue.conf"}, `--dry-run "yes": want true or false`},
		{"bad policy", nil, []string{"run", "--gpus", "1", "--policy", "fifo", "ci/queue.conf"}, `--policy "fifo": want planned or lpt`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sgpu(t, dir, tt.env, tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want 2 and %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"report", "--help"}, {"simulate", "--help"}, {"action", "--help"}} {
		r := sgpu(t, dir, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage") {
			t.Errorf("%v: exit %d stdout %q", args, r.code, r.stdout)
		}
	}
	if r := sgpu(t, dir, nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "sgpu-queue ") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
}

func TestDryRunRunsNothing(t *testing.T) {
	dir := fixture(t, "e2e")
	trace := filepath.Join(dir, "trace.tsv")
	r := sgpu(t, dir, []string{"SGPU_TRACE=" + trace}, "run", "ci/queue.conf", "--dry-run", "--gpus", "4", "--arch", "gfx950")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if evs := readTrace(t, trace); len(evs) != 0 {
		t.Errorf("dry run ran %d events (setup or items)", len(evs))
	}
	for _, want := range []string{"== phase 2:", "dry run: nothing was run", "alpha        ok.fast"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "== phase 3") {
		t.Error("dry run went past phase 2")
	}
	for _, p := range []string{"test-results", "ci-weights"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("dry run wrote %s", p)
		}
	}
}

func TestFailingListingAndSetup(t *testing.T) {
	dir := fixture(t, "e2e")
	os.WriteFile(filepath.Join(dir, "ci", "broken.sh"), []byte("#!/bin/sh\necho 'ModuleNotFoundError: torch' >&2\nexit 4\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "broken.conf"), []byte("broken broken.log list ci/broken.sh\n"), 0o644)
	r := sgpu(t, dir, nil, "run", "--gpus", "1", "broken.conf")
	if r.code != 1 || !strings.Contains(r.stderr, `suite "broken": its queue listing (TE_CI_LIST_ITEMS=1) exited with 4`) ||
		!strings.Contains(r.stderr, "ModuleNotFoundError: torch") {
		t.Errorf("listing failure: exit %d\n%s", r.code, r.stderr)
	}
	// The log dir records why, typed, and stays a run that report rebuilds.
	stopOf := func() *record.Stop {
		var m record.Meta
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "test-results", "logs", "queue", "run.json"))), &m); err != nil || !m.Finished {
			t.Fatalf("run.json: %v, finished %v", err, m.Finished)
		}
		return m.Stop
	}
	if st := stopOf(); st == nil || st.Reason != outcome.StopListingFailed || st.Suite != "broken" || st.Phase != 1 ||
		!strings.HasSuffix(st.Message, "exited with 4; it must list its items and exit 0; last output: ModuleNotFoundError: torch") {
		t.Errorf("run.json stop %+v", st)
	}
	if rb := sgpu(t, dir, nil, "report", "test-results/logs"); rb.code != 0 || !strings.Contains(rb.stdout, "**Suite `broken` failed before its items ran**: its listing failed\\:") {
		t.Errorf("report: exit %d\n%s%s", rb.code, rb.stdout, rb.stderr)
	}
	trace := filepath.Join(dir, "trace.tsv")
	r = sgpu(t, dir, []string{"FAIL_SETUP=1", "SGPU_TRACE=" + trace}, "run", "--gpus", "1", "ci/queue.conf")
	if r.code != 1 || !strings.Contains(r.stderr, `suite "alpha" setup (TE_CI_SETUP_ONLY=1) exited with 5`) ||
		!strings.Contains(r.stderr, "pip install failed") {
		t.Errorf("setup failure: exit %d\n%s", r.code, r.stderr)
	}
	if st := stopOf(); st == nil || st.Reason != outcome.StopSetupFailed || st.Suite != "alpha" || st.Phase != 3 || !strings.HasSuffix(st.Message, "last output: setup: pip install failed") {
		t.Errorf("run.json stop %+v", st)
	}
	for _, e := range readTrace(t, trace) {
		if e.kind == "start" {
			t.Errorf("an item ran after a failed setup: %+v", e)
		}
	}
}

func TestDemoRunsGreen(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "demo")
	env := []string{"PATH=" + filepath.Join(dir, "bin") + ":" + os.Getenv("PATH")}
	r := sgpu(t, dir, env, "run", "ci/sgpu.conf")
	if r.code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"4 GPUs [0 1 2 3] from rocminfo", "arch gfx942", "all 4 suites passed", "[15/15"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// The report can be rebuilt from the run's files alone, identically.
	logs := filepath.Join(dir, "test-results", "logs")
	before := readFile(t, filepath.Join(logs, "report", "schedule.md"))
	os.Remove(filepath.Join(logs, "report", "schedule.md"))
	rr := sgpu(t, dir, nil, "report", logs)
	if rr.code != 0 || rr.stdout != before || readFile(t, filepath.Join(logs, "report", "schedule.md")) != before {
		t.Errorf("report rebuild differs (exit %d):\n%s\n---\n%s", rr.code, rr.stdout, before)
	}
}
