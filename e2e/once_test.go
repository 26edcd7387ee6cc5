package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/proctest"
	"github.com/rocm/sgpu-queue/internal/record"
)

// TE's once-per-run lines (README "TransformerEngine"), as the fixture's _utils.sh
// takes them: the CK JIT cache built once before the setups, checked for drift once
// the queue has drained, the setups told not to build it again.
const (
	teBefore = `bash -c 'DIR=$PWD/ci; export TE_CI_CK_JIT_SNAPSHOT=$PWD/test-results/ck_jit_cache.snapshot; . ci/_utils.sh && ck_jit_prebuild build'`
	teAfter  = `bash -c 'DIR=$PWD/ci; export TE_CI_CK_JIT_SNAPSHOT=$PWD/test-results/ck_jit_cache.snapshot; . ci/_utils.sh && ck_jit_prebuild list'`
)

// ckTrace reads a te-current fixture trace as tab-separated fields per line (none
// when the file is not there): the CK JIT trace has one line per ck_jit_prebuild
// step (build/list, GPUs, ulimit -c, cwd) and per setup (setup, script, GPUs,
// TE_CI_SKIP_CK_JIT); the items' trace is readTETrace's.
func ckTrace(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range lines(string(data)) {
		out = append(out, strings.Split(l, "\t"))
	}
	return out
}

// TestTECurrentOncePerRun: --before runs once, on the first GPU, from the repo root,
// before every setup (which get --setup-env's TE_CI_SKIP_CK_JIT=1 and so build
// nothing themselves); --after runs once after the last item, its output on the
// console and in its log. Both queues in one run, on 2 GPUs.
func TestTECurrentOncePerRun(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	tmp := t.TempDir()
	trace, ck := filepath.Join(tmp, "trace"), filepath.Join(tmp, "ck")
	env := []string{"TE_FIXTURE_TRACE=" + trace, "TE_FIXTURE_CK_TRACE=" + ck, "JUNITXML_PREFIX=test-results/junit/",
		"TE_CI_CK_JIT_SNAPSHOT=" + filepath.Join(tmp, "ck.snapshot")}
	r := sgpu(t, dir, env, "run", "--gpus", "2,3", "--arch", "gfx942", "--before", teBefore, "--after", teAfter,
		"--setup-env", "TE_CI_SKIP_CK_JIT=1", "ci/ci_sgpu_queue.conf", "--mgpu-config", "ci/ci_mgpu_queue.conf")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	labels := []string{"examples", "torch", "jax", "core", "torch-mgpu", "jax-mgpu"}
	checkTERun(t, dir, readTETrace(t, trace), 2, labels...)

	steps := ckTrace(t, ck)
	var kinds []string
	for _, s := range steps {
		kinds = append(kinds, s[0])
	}
	// build, the four list suites' setups (torch, jax, torch-mgpu, jax-mgpu), list.
	if want := []string{"build", "setup", "setup", "setup", "setup", "list"}; !slices.Equal(kinds, want) {
		t.Fatalf("CK JIT steps and setups %q, want %q:\n%s", kinds, want, r.stdout)
	}
	if b := steps[0]; b[1] != "2" || b[2] != "0" || b[3] != dir {
		t.Errorf("before ran on GPUs %s, ulimit -c %s, in %s; want GPU 2 (the first), 0, the repo root %s", b[1], b[2], b[3], dir)
	}
	for _, s := range steps[1:5] {
		if s[3] != "1" {
			t.Errorf("setup of %s has TE_CI_SKIP_CK_JIT=%s, want 1 (--setup-env)", s[1], s[3])
		}
	}
	for _, want := range []string{
		"--before: " + teBefore, "| Building CK JIT cache for arch=gfx942...", "--before ok",
		"--after: " + teAfter, "| Cache diff (build -> now):", "| +blob_gemm_fp8",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the console lacks %q:\n%s", want, r.stdout)
		}
	}
	// The after command's output is after every item's line.
	if i, j := strings.LastIndex(r.stdout, "rc=0"), strings.Index(r.stdout, "--after:"); i < 0 || j < i {
		t.Errorf("the after command did not run after the items:\n%s", r.stdout)
	}
	logs := filepath.Join(dir, "test-results", "logs", "prerequisite_ck_jit_status")
	if s := readFile(t, filepath.Join(logs, "run.before.log")); !strings.Contains(s, "Cache: 2 blobs") {
		t.Errorf("run.before.log:\n%s", s)
	}
	if s := readFile(t, filepath.Join(logs, "run.after.log")); !strings.Contains(s, "+blob_gemm_fp8") {
		t.Errorf("run.after.log:\n%s", s)
	}
}

// TestOncePerRunFailures: a failing --before stops the run before any setup or
// item (exit 1, the command, its log and its last output named; run.json says
// why); a failing --after is a warning and the verdict is the items'; nothing
// selected runs neither; bad values are exit 2 before anything runs.
func TestOncePerRunFailures(t *testing.T) {
	t.Parallel()
	conf := "ci/ci_sgpu_queue.conf"
	run := func(t *testing.T, env []string, args ...string) (string, string, result) {
		dir := fixture(t, "te-current")
		tmp := t.TempDir()
		trace, ck := filepath.Join(tmp, "trace"), filepath.Join(tmp, "ck")
		env = append(env, "TE_FIXTURE_TRACE="+trace, "TE_FIXTURE_CK_TRACE="+ck)
		r := sgpu(t, dir, env, append([]string{"run", "--gpus", "2", "--arch", "gfx942"}, args...)...)
		return dir, trace, r
	}
	t.Run("before fails", func(t *testing.T) {
		dir, trace, r := run(t, []string{"TE_FIXTURE_CK_FAIL=build"}, "--before", teBefore, "--setup-env", "TE_CI_SKIP_CK_JIT=1", conf)
		if r.code != 1 || !strings.Contains(r.stderr, "--before "+teBefore+" exited with 1; log test-results/logs/prerequisite_ck_jit_status/run.before.log") ||
			!strings.Contains(r.stderr, "ck_jit_prebuild build: hipcc: fixture failure") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if tr := readTETrace(t, trace); len(tr) != 0 {
			t.Errorf("items ran after the before command failed: %v", tr)
		}
		if strings.Contains(r.stdout, "setup ok") {
			t.Errorf("a setup ran after the before command failed:\n%s", r.stdout)
		}
		var m record.Meta
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "test-results", "logs", "queue", "run.json"))), &m); err != nil {
			t.Fatal(err)
		}
		if m.Stop == nil || m.Stop.Reason != outcome.StopBeforeFailed || !m.Finished ||
			!strings.HasSuffix(m.Stop.Message, "last output: ck_jit_prebuild build: hipcc: fixture failure") {
			t.Errorf("run.json stop %+v, finished %v", m.Stop, m.Finished)
		}
	})
	t.Run("after fails", func(t *testing.T) {
		_, trace, r := run(t, []string{"TE_FIXTURE_CK_FAIL=list"}, "--after", teAfter, conf)
		if r.code != 0 || !strings.Contains(r.stdout, "warning: --after "+teAfter+" exited with 1") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if tr := readTETrace(t, trace); len(tr) != 11 {
			t.Errorf("%d items ran, want 11", len(tr))
		}
	})
	t.Run("nothing selected", func(t *testing.T) {
		_, _, r := run(t, []string{"TE_CI_SUITES="}, "--before", "false", "--after", "false", conf)
		if r.code != 0 || strings.Contains(r.stdout, "--before:") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unclosed quote", []string{"--before", "bash -c 'echo"}, `--before "bash -c 'echo": `},
		{"expansion", []string{"--after", "echo $HOME"}, `--after "echo $HOME": `},
		{"setup-env sets the filter", []string{"--setup-env", "TEST_FILTER=x"},
			"--setup-env: TEST_FILTER: sgpu-queue sets TEST_FILTER for every setup (the hook variable filter); give another name"},
		{"setup-env sets the pin", []string{"--setup-env", "HIP_VISIBLE_DEVICES=0"}, "--setup-env: HIP_VISIBLE_DEVICES: sgpu-queue sets"},
		{"setup-env not an assignment", []string{"--setup-env", "TE_CI_SKIP_CK_JIT"}, `--setup-env: "TE_CI_SKIP_CK_JIT": want NAME=VALUE`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, trace, r := run(t, nil, append(c.args, conf)...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, want 2 and %q\n%s", r.code, c.want, r.stderr)
			}
			if tr := readTETrace(t, trace); len(tr) != 0 {
				t.Errorf("items ran: %v", tr)
			}
		})
	}
}

// TestJUnitOptional: an item whose re-entry runs a plain script and writes no JUnit
// file (TE's torch/benchmark at level 3) is no-run, and fails its suite, with a
// JUnit prefix; named with --junit-optional it is judged by its exit code alone
// (ok when 0, failed when not), and the other items of the suite are still judged
// as before. A pattern that is not a glob is refused.
func TestJUnitOptional(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	bench := `#!/bin/bash
DIR=$(dirname "$0")
. "$DIR/_utils.sh"
setup_once
run_benchmark() {
    check_test_filter benchmark || return 0
    if [ -n "$TE_CI_LIST_ITEMS" ]; then echo "TE_CI_ITEM benchmark"; return 0; fi
    echo "benchmark: 1.0 TFLOP/s"
    return "${BENCH_RC:-0}"
}
run_benchmark || exit 1
pytest_run test_numerics.py ck
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "bench.sh"), []byte(bench), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.conf"), []byte("torch torch.log list ci/bench.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (result, string) {
		logs := t.TempDir()
		env = append(env, "JUNITXML_PREFIX=test-results/junit/")
		r := sgpu(t, dir, env, append([]string{"run", "--gpus", "2", "--arch", "gfx942", "--full", "--log-dir", logs}, append(args, "bench.conf")...)...)
		suite, _ := os.ReadFile(filepath.Join(logs, "suites", "torch.log"))
		return r, string(suite)
	}
	r, suite := run(nil)
	if r.code != 1 || !strings.Contains(suite, "items/torch.benchmark.log (no-run") {
		t.Errorf("without --junit-optional: exit %d, want 1 with benchmark no-run:\n%s\n%s", r.code, suite, r.stdout)
	}
	r, suite = run(nil, "--junit-optional", "torch/bench*")
	if r.code != 0 || !strings.Contains(suite, "ok rc=0 items/torch.benchmark.log") {
		t.Errorf("--junit-optional torch/bench*: exit %d, want 0:\n%s\n%s\n%s", r.code, suite, r.stdout, r.stderr)
	}
	r, suite = run([]string{"BENCH_RC=3"}, "--junit-optional", "torch/benchmark")
	if r.code != 1 || !strings.Contains(suite, "FAIL rc=1 items/torch.benchmark.log") {
		t.Errorf("a failing benchmark: exit %d, want 1 with its rc 1:\n%s", r.code, suite)
	}
	if r, _ := run(nil, "--junit-optional", "torch/[bench"); r.code != 2 || !strings.Contains(r.stderr, `--junit-optional: "torch/[bench": not a glob`) {
		t.Errorf("a bad pattern: exit %d, want 2:\n%s", r.code, r.stderr)
	}
}

// TestOncePerRunHostile: a --before that is not there stops the run before
// anything runs (exit 2, naming it: phase 0 finds its program as a config's
// commands are found); a SIGTERM while --before runs ends the run as a
// cancel in setup does (exit 130, no setup or item ran, run.json cancelled) and
// ends the command's process tree, a child it forked into the background included.
func TestOncePerRunHostile(t *testing.T) {
	t.Parallel()
	conf := "ci/ci_sgpu_queue.conf"
	t.Run("not there", func(t *testing.T) {
		dir := fixture(t, "te-current")
		trace := filepath.Join(t.TempDir(), "trace")
		r := sgpu(t, dir, []string{"TE_FIXTURE_TRACE=" + trace}, "run", "--gpus", "2", "--arch", "gfx942",
			"--before", "'ci/no such [prebuild].sh' --fast", conf)
		if r.code != 2 || !strings.Contains(r.stderr, "--before 'ci/no such [prebuild].sh' --fast: 'ci/no such [prebuild].sh' not found (looked for "+
			filepath.Join(dir, "ci", "no such [prebuild].sh")+"; a relative program is taken from the repo root)") || len(lines(r.stderr)) != 1 {
			t.Fatalf("exit %d, want 2 naming the command\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "test-results")); err == nil {
			t.Error("the refused run wrote test-results/")
		}
		if tr := readTETrace(t, trace); len(tr) != 0 {
			t.Errorf("items ran: %v", tr)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		dir := fixture(t, "te-current")
		tmp := t.TempDir()
		trace, started := filepath.Join(tmp, "trace"), filepath.Join(tmp, "started")
		mark := proctest.Mark()
		t.Cleanup(func() { proctest.Kill(mark) })
		// A child in the background, and one that left the group (setsid).
		before := "sh -c 'sleep " + mark + " & setsid sleep " + mark + " & touch " + started + "; wait'"
		cmd, out := startRun(t, dir, []string{"TE_FIXTURE_TRACE=" + trace}, started,
			"run", "--gpus", "2", "--arch", "gfx942", "--grace", "1s", "--before", before, conf)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Fatalf("exit %v, want 130\n%s", err, out.String())
		}
		if tr := readTETrace(t, trace); len(tr) != 0 {
			t.Errorf("items ran after the cancel: %v", tr)
		}
		if strings.Contains(out.String(), "setup ok") {
			t.Errorf("a setup ran after the cancel:\n%s", out.String())
		}
		var m record.Meta
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "test-results", "logs", "queue", "run.json"))), &m); err != nil {
			t.Fatal(err)
		}
		if !m.Cancelled || m.Stop == nil || m.Stop.Reason != outcome.StopCancelled {
			t.Errorf("run.json: cancelled %v, stop %+v", m.Cancelled, m.Stop)
		}
		proctest.NoSurvivors(t, mark)
	})
}
