package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/logdir"
)

// A run cancelled mid-queue (SIGTERM, as GitHub sends) keeps every finished row,
// still writes every suite's verdict, the report and the learned weights, and exits
// non-zero.
func TestCancelKeepsEverything(t *testing.T) {
	dir := fixture(t, "e2e")
	logs := filepath.Join(dir, "test-results", "logs")
	timings := filepath.Join(logs, "queue", "timings.tsv")
	var before []string
	threeRows := func() bool {
		data, _ := os.ReadFile(timings)
		before = lines(string(data))
		return len(before) >= 3
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "SGPU_STATE=" + t.TempDir()}
	code, out := signalWhen(t, dir, env, "no rows appeared", threeRows, syscall.SIGTERM,
		"run", "--gpus", "2", "--arch", "gfx942", "--grace", "2s", "ci/badday.conf")
	if code == 0 {
		t.Fatalf("exit 0, want non-zero\n%s", out)
	}
	after := lines(readFile(t, timings))
	for i, row := range before {
		if i >= len(after) || after[i] != row {
			t.Fatalf("a row finished before the cancel was lost or changed: %q", row)
		}
	}
	if len(after) >= 14 {
		t.Errorf("all %d items ran: the cancel stopped nothing", len(after))
	}
	delta := readFile(t, filepath.Join(logs, "suites", "delta.log"))
	if n := len(lines(delta)); n != 13 {
		t.Errorf("delta.log has %d lines, want one per queued item (13):\n%s", n, delta)
	}
	if !strings.Contains(delta, "(cancelled before it started)") {
		t.Errorf("unstarted items not marked:\n%s", delta)
	}
	// Every suite has its verdict, the one cut short failing.
	if rc := readFile(t, filepath.Join(logs, "suites", "delta.log.rc")); rc == "0\n" {
		t.Errorf("delta.log.rc = 0 for a cancelled suite")
	}
	readFile(t, filepath.Join(logs, "suites", "gamma.log.rc"))
	report := readFile(t, filepath.Join(logs, "report", "schedule.md"))
	if !strings.Contains(report, "cancelled") {
		t.Errorf("report does not say the run was cancelled:\n%s", report)
	}
	w := readFile(t, filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt"))
	learned := len(lines(w))
	finishedOK := 0
	for _, row := range after {
		f := strings.Split(row, "\t")
		if f[8] == "0" {
			finishedOK++
		}
	}
	if learned == 0 || learned != finishedOK {
		t.Errorf("learned %d weights from %d complete rows:\n%s", learned, finishedOK, w)
	}
	if !strings.Contains(out, "SIGTERM: stopping dispatch") || !strings.Contains(out, "== phase 8") {
		t.Errorf("console:\n%s", out)
	}
}

// A hung item is killed at its learned deadline, recorded with rc 124, and its
// weight raised to at least how long it was let run.
func TestHangTimeout(t *testing.T) {
	dir := fixture(t, "e2e")
	wfile := filepath.Join(dir, "warm.txt")
	os.WriteFile(wfile, []byte("delta/d.hang 0.2\ndelta/d.01 0.3\n"), 0o644)
	env := []string{"WITH_HANG=1", "SGPU_STATE=" + t.TempDir()}
	r := sgpu(t, dir, env, "run", "--gpus", "3", "--weights", wfile, "--grace", "500ms",
		"--item-timeout-factor", "3", "--item-timeout-min", "1s", "ci/badday.conf")
	if r.code != 124 {
		t.Fatalf("exit %d, want 124\n%s", r.code, r.stdout)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	// Cut, not waited for: its row is shorter than the 30 s it sleeps, at any
	// speed (the whole run's wall clock would also count a busy machine's delays).
	if secs := itemSecs(t, logs, "delta", "d.hang"); secs >= 30 {
		t.Errorf("the hung item ran %.1f s: it was not cut at its deadline", secs)
	}
	log := readFile(t, filepath.Join(logs, "items", "delta.d.hang.log"))
	if !strings.Contains(log, "past its hang deadline of 1s (3 × its learned weight 0.2s") {
		t.Errorf("log does not give the reason:\n%s", log)
	}
	if v := readFile(t, filepath.Join(logs, "suites", "delta.log")); !strings.Contains(v, "FAIL rc=124 items/delta.d.hang.log (timed out)") {
		t.Errorf("verdict:\n%s", v)
	}
	w := readFile(t, wfile)
	for _, l := range lines(w) {
		if strings.HasPrefix(l, "delta/d.hang ") {
			var v float64
			fmtSscan(strings.Fields(l)[1], &v)
			if v < 1 {
				t.Errorf("hung item's weight %v, want raised to at least the 1 s it ran", v)
			}
		}
	}
}

func TestFlakyRerun(t *testing.T) {
	t.Parallel()
	for _, strict := range []bool{false, true} {
		name := "flaky passes"
		if strict {
			name = "flaky is failure"
		}
		t.Run(name, func(t *testing.T) {
			dir := fixture(t, "e2e")
			args := []string{"run", "--gpus", "0,1", "--arch", "gfx942", "--retries", "1", "ci/badday.conf"}
			if strict {
				args = append(args, "--flaky-is-failure")
			}
			r := sgpu(t, dir, []string{"SGPU_STATE=" + t.TempDir()}, args...)
			logs := filepath.Join(dir, "test-results", "logs")
			if want := map[bool]int{false: 0, true: 1}[strict]; r.code != want {
				t.Fatalf("exit %d, want %d\n%s", r.code, want, r.stdout)
			}
			if !strings.Contains(r.stdout, "retrying delta/d.flaky (attempt 1 of 2 failed with rc=1") ||
				!strings.Contains(r.stdout, "flaky: delta d.flaky passed on attempt 2") {
				t.Errorf("console:\n%s", r.stdout)
			}
			if _, err := os.Stat(filepath.Join(logs, "items", "delta.d.flaky@attempt1.log")); err != nil {
				t.Errorf("first attempt's log not kept: %v", err)
			}
			if rc := readFile(t, filepath.Join(logs, "items", "delta.d.flaky.log.rc")); rc != "0\n" {
				t.Errorf("canonical rc %q, want the last attempt's 0", rc)
			}
			rows := 0
			for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
				if strings.HasPrefix(row, "delta\td.flaky\t") {
					rows++
				}
			}
			if rows != 2 {
				t.Errorf("%d timings rows for the flaky item, want one per attempt", rows)
			}
			v := readFile(t, filepath.Join(logs, "suites", "delta.log"))
			if !strings.Contains(v, "items/delta.d.flaky.log (flaky: passed on attempt 2") {
				t.Errorf("verdict:\n%s", v)
			}
		})
	}
}

// One GPU fails every item at once: with a device error it is suspended at the
// second failure, silently after three fast failures; either way it is quarantined
// once its items pass elsewhere, its items rerun on healthy GPUs and the run passes.
func TestQuarantine(t *testing.T) {
	t.Parallel()
	for _, quiet := range []bool{false, true} {
		name := "device errors"
		if quiet {
			name = "silent fast failures"
		}
		t.Run(name, func(t *testing.T) {
			dir := fixture(t, "e2e")
			env := []string{"BAD_GPU=1", "SGPU_STATE=" + t.TempDir()}
			if quiet {
				env = append(env, "BAD_GPU_QUIET=1")
			}
			r := sgpu(t, dir, env, "run", "--gpus", "0,1,2", "--arch", "gfx942", "ci/badday.conf")
			if r.code != 1 {
				// d.flaky fails once without retries: rc 1 is its, the rest passed.
				t.Fatalf("exit %d, want 1 (only the flaky item)\n%s", r.code, r.stdout)
			}
			if !strings.Contains(r.stdout, "warning: gpu1 quarantined:") {
				t.Errorf("no quarantine warning:\n%s", r.stdout)
			}
			logs := filepath.Join(dir, "test-results", "logs")
			v := readFile(t, filepath.Join(logs, "suites", "delta.log"))
			if !strings.Contains(v, "(passed after gpu1 was quarantined)") {
				t.Errorf("verdict:\n%s", v)
			}
			if strings.Contains(v, "FAIL") && !strings.Contains(v, "FAIL rc=1 items/delta.d.flaky.log") {
				t.Errorf("an item failed beyond the flaky one:\n%s", v)
			}
			meta := readFile(t, filepath.Join(logs, "queue", "run.json"))
			if !strings.Contains(meta, `"quarantined"`) || !strings.Contains(meta, `"gpu": "1"`) {
				t.Errorf("run.json:\n%s", meta)
			}
			// Items ran on gpu1 until its quarantine, none started after it, and
			// none passed there.
			var m struct {
				Started     time.Time `json:"started"`
				Quarantined []struct {
					GPU string    `json:"gpu"`
					At  time.Time `json:"at"`
				} `json:"quarantined"`
			}
			if err := json.Unmarshal([]byte(meta), &m); err != nil || len(m.Quarantined) != 1 {
				t.Fatalf("run.json: %v %+v", err, m)
			}
			cut := m.Quarantined[0].At.Sub(m.Started).Seconds()
			ran := 0
			for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
				f := strings.Split(row, "\t")
				if f[2] != "1" {
					continue
				}
				ran++
				var start float64
				fmtSscan(f[5], &start)
				if start > cut {
					t.Errorf("an item started on gpu1 at t+%.3fs, after its quarantine at t+%.3fs: %q", start, cut, row)
				}
				if f[4] == "0" {
					t.Errorf("an item passed on the bad GPU: %q", row)
				}
			}
			if ran == 0 {
				t.Error("nothing ran on gpu1")
			}
		})
	}
}

// When every GPU is bad the run stops with a clear error instead of stalling.
func TestEveryGPUQuarantined(t *testing.T) {
	dir := fixture(t, "e2e")
	r := sgpu(t, dir, []string{"BAD_GPU=0", "SGPU_STATE=" + t.TempDir()}, "run", "--gpus", "1", "--arch", "gfx942", "ci/badday.conf")
	if r.code == 0 {
		t.Fatalf("exit 0\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "every GPU is quarantined") {
		t.Errorf("no clear error:\n%s", r.stdout)
	}
	v := readFile(t, filepath.Join(dir, "test-results", "logs", "suites", "delta.log"))
	if !strings.Contains(v, "(never ran: every GPU was quarantined)") {
		t.Errorf("verdict:\n%s", v)
	}
}

// Ordinary failing tests whose output holds a device error (hipErrorNoDevice), on
// two GPUs: the failure follows the items, not a GPU. No GPU is quarantined, every
// passing item runs and passes, and the failing items fail, as themselves.
func TestDeviceErrorFollowsTheItem(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then
    for t in bad1 bad2 bad3 ok1 ok2 ok3 ok4 ok5 ok6; do echo "TE_CI_ITEM $t"; done
    exit 0
fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
` + writeXML + `case $TEST_FILTER in
bad*) echo "RuntimeError: HIP error: hipErrorNoDevice: no ROCm-capable device is detected (test $TEST_FILTER asserts it)"; exit 1 ;;
esac
echo "test $TEST_FILTER passed"
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "devmsg.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, dir, "devmsg.conf", "dev dev.log list ci/devmsg.sh\n")
	r := sgpu(t, dir, nil, "run", "--gpus", "0,1", "--arch", "gfx942", conf)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the bad items' own)\n%s", r.code, r.stdout)
	}
	if strings.Contains(r.stdout, "quarantined") || strings.Contains(r.stdout, "check the runner's GPUs") {
		t.Errorf("a GPU was quarantined for the tests' own failures:\n%s", r.stdout)
	}
	// The three bad items go first (unknown, in listing order) on two GPUs: one
	// GPU gets two of them in a row and is suspended; the check on the other
	// GPU fails too, and gives it back.
	if !strings.Contains(r.stdout, "suspended: 2 items failed in a row on it") ||
		!strings.Contains(r.stdout, "back in the pool: its failed items failed on other GPUs too: the tests, not the GPU") {
		t.Errorf("no cross-check (suspended, then back in the pool):\n%s", r.stdout)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	v := readFile(t, filepath.Join(logs, "suites", "dev.log"))
	for _, tag := range []string{"ok1", "ok2", "ok3", "ok4", "ok5", "ok6"} {
		if !strings.Contains(v, "ok rc=0 items/dev."+tag+".log") {
			t.Errorf("%s did not run and pass:\n%s", tag, v)
		}
	}
	for _, tag := range []string{"bad1", "bad2", "bad3"} {
		if !strings.Contains(v, "FAIL rc=1 items/dev."+tag+".log") {
			t.Errorf("%s did not fail as itself:\n%s", tag, v)
		}
	}
	if strings.Count(v, "\n") != 9 || strings.Contains(v, "never ran") {
		t.Errorf("want 9 verdict lines, none never ran:\n%s", v)
	}
	if meta := readFile(t, filepath.Join(logs, "queue", "run.json")); strings.Contains(meta, `"quarantined"`) || strings.Contains(meta, `"stop"`) {
		t.Errorf("run.json records a quarantine or a stop:\n%s", meta)
	}
}

// itemSecs is the duration of an item's last attempt, as its run recorded it.
func itemSecs(t *testing.T, logs, label, item string) float64 {
	t.Helper()
	run, _, err := logdir.Load(logs)
	if err != nil {
		t.Fatal(err)
	}
	secs := -1.0
	for _, r := range run.Attempts {
		if r.Label == label && r.Column() == item {
			secs = r.Secs
		}
	}
	if secs < 0 {
		t.Fatalf("%s/%s has no timings row", label, item)
	}
	return secs
}
