package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/record"
)

// outcomesOf reads queue/attempts.tsv (label/item → outcome of its last attempt,
// item as timings.tsv names it) and checks that timings.tsv kept TE's nine columns.
func outcomesOf(t *testing.T, logs string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
		if n := len(strings.Split(row, "\t")); n != 9 {
			t.Errorf("timings.tsv row with %d columns, TE's readers want 9: %q", n, row)
		}
	}
	for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "attempts.tsv"))) {
		f := strings.Split(row, "\t")
		if len(f) != 10 {
			t.Fatalf("attempts.tsv row %q", row)
		}
		got[f[0]+"/"+record.ItemID{Label: f[0], Tag: f[1]}.Column()] = f[9]
	}
	return got
}

// weightsOf reads a weight table: key → seconds.
func weightsOf(t *testing.T, path string) map[string]float64 {
	t.Helper()
	w := map[string]float64{}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return w
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(string(data)) {
		i := strings.LastIndexByte(l, ' ')
		var v float64
		fmtSscan(l[i+1:], &v)
		w[l[:i]] = v
	}
	return w
}

// rebuildsIdentically checks `sgpu-queue report LOGDIR` rebuilds the run's report
// byte for byte from its files.
func rebuildsIdentically(t *testing.T, dir, logs string) {
	t.Helper()
	before := readFile(t, filepath.Join(logs, "report", "schedule.md"))
	os.Remove(filepath.Join(logs, "report", "schedule.md"))
	rr := sgpu(t, dir, nil, "report", logs)
	if rr.code != 0 || rr.stdout != before || rr.stderr != "" {
		t.Errorf("report rebuild differs (exit %d, stderr %q):\n%s\n---\n%s", rr.code, rr.stderr, rr.stdout, before)
	}
}

// Each way an item ends, with real processes: an item gated off at re-entry fails
// as a no-run (when JUnit says so) and teaches nothing; items that exit 124 and 137
// by themselves are ordinary failures, never "timed out", with or without a hang
// deadline; a process killed by SIGKILL from outside is cut off; only the item
// sgpu-queue kills at its deadline timed out.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	logs := filepath.Join(dir, "test-results", "logs")
	wfile := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l1.txt")
	os.MkdirAll(filepath.Dir(wfile), 0o755)
	// A weight the no-run must not move.
	os.WriteFile(wfile, []byte("omega/o.gated 7.0\n"), 0o644)
	junit := []string{"JUNITXML_PREFIX=test-results/junit/", "TEST_LEVEL=1"}

	r := sgpu(t, dir, junit, "run", "--gpus", "0,1", "--arch", "gfx942", "ci/outcomes.conf")
	if r.code != 137 {
		t.Fatalf("exit %d, want 137 (the largest failing rc)\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := map[string]string{
		"omega/o.ok": "ok", "omega/o.gated": "no-run", "omega/o.self124": "failed", "omega/o.self137": "failed",
		"omega/o.sigkill": "cut-off", "gamma/whole": "ok",
	}
	if got := outcomesOf(t, logs); !maps.Equal(got, want) {
		t.Errorf("outcomes.tsv %v, want %v", got, want)
	}
	hasLines(t, filepath.Join(logs, "suites", "omega.log"),
		"ok rc=0 items/omega.o.ok.log",
		"FAIL rc=0 items/omega.o.gated.log (no-run: its re-entry ran nothing)",
		"FAIL rc=124 items/omega.o.self124.log",
		"FAIL rc=137 items/omega.o.self137.log",
		"FAIL rc=137 items/omega.o.sigkill.log (cut off)")
	if rc := readFile(t, filepath.Join(logs, "suites", "omega.log.rc")); rc != "137\n" {
		t.Errorf("omega.log.rc %q", rc)
	}
	gated := readFile(t, filepath.Join(logs, "items", "omega.o.gated.log"))
	if !strings.Contains(gated, "sgpu-queue: no-run: this item ran nothing: it exited 0 without writing its JUnit XML") ||
		!strings.Contains(gated, filepath.Join("junit", "omega", "o.gated.xml")) {
		t.Errorf("the no-run item's log does not say why it failed:\n%s", gated)
	}
	if log := readFile(t, filepath.Join(logs, "items", "omega.o.sigkill.log")); !strings.Contains(log, "killed by SIGKILL, which sgpu-queue did not send") {
		t.Errorf("the SIGKILLed item's log:\n%s", log)
	}
	for _, l := range lines(r.stdout) {
		if !strings.HasPrefix(l, "[") {
			continue // only the item lines
		}
		switch {
		case strings.Contains(l, " omega o.gated "):
			if !strings.HasSuffix(l, "] no-run") {
				t.Errorf("console line of the no-run item: %q", l)
			}
		case strings.Contains(l, " omega o.sigkill "):
			if !strings.HasSuffix(l, "] cut-off") {
				t.Errorf("console line of the SIGKILLed item: %q", l)
			}
		}
		if strings.Contains(l, "timeout") || strings.Contains(l, "timed out") {
			t.Errorf("console calls something a timeout: %q", l)
		}
	}
	report := readFile(t, filepath.Join(logs, "report", "schedule.md"))
	if strings.Contains(report, "Timed-out") || strings.Contains(report, "timed out") || !strings.Contains(report, "**1 item(s) ran nothing**") {
		t.Errorf("report:\n%s", report)
	}
	w := weightsOf(t, wfile)
	if w["omega/o.gated"] != 7 {
		t.Errorf("the no-run item's weight moved: %v", w["omega/o.gated"])
	}
	for _, k := range []string{"omega/o.ok", "omega/o.self124", "omega/o.self137", "gamma"} {
		if _, ok := w[k]; !ok {
			t.Errorf("%s was not learned (a failure teaches its duration): %v", k, w)
		}
	}
	if _, ok := w["omega/o.sigkill"]; ok {
		t.Errorf("a cut-off row created a weight: %v", w)
	}
	rebuildsIdentically(t, dir, logs)

	// Without a JUnit prefix in the environment the CLI gives the items one under
	// its log dir: the gated item is judged from that evidence, a no-run still.
	// (Each run of the same tree here is --full: the failures of the one before
	// would narrow it to a re-run of them.)
	r = sgpu(t, dir, []string{"TEST_LEVEL=1"}, "run", "--full", "--gpus", "0,1", "--arch", "gfx942", "ci/outcomes.conf")
	if got := outcomesOf(t, logs); got["omega/o.gated"] != "no-run" || got["omega/o.sigkill"] != "cut-off" || got["omega/o.self124"] != "failed" {
		t.Errorf("without a prefix in the environment: outcomes %v\n%s", got, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(logs, "junit", "omega", "o.ok.xml")); err != nil {
		t.Errorf("the items' XML is not under the log dir: %v", err)
	}
	gatedWeight := weightsOf(t, wfile)["omega/o.gated"] // still 7: a no-run teaches nothing

	// With a hang deadline: 124 and 137 by themselves stay failures; the hung item
	// is killed at its deadline and only it timed out. The deadline is far above
	// what the other items take on a busy 2-core machine (at 1–2 s, o.ok and gamma
	// timed out there too), far below the hung item's 30 s.
	r = sgpu(t, dir, append(junit, "WITH_HANG=1"), "run", "--full", "--gpus", "0,1", "--arch", "gfx942",
		"--item-timeout-factor", "3", "--item-timeout-min", "8s", "--item-timeout-max", "12s", "--grace", "500ms", "ci/outcomes.conf")
	want["omega/o.hang"] = "timeout"
	if got := outcomesOf(t, logs); !maps.Equal(got, want) {
		t.Errorf("with a hang deadline: outcomes.tsv %v, want %v", got, want)
	}
	hasLines(t, filepath.Join(logs, "suites", "omega.log"),
		"FAIL rc=124 items/omega.o.self124.log",
		"FAIL rc=137 items/omega.o.self137.log",
		"FAIL rc=124 items/omega.o.hang.log (timed out)")
	report = readFile(t, filepath.Join(logs, "report", "schedule.md"))
	_, timedOut, _ := strings.Cut(report, "### Timed-out items (1)")
	timedOut, _, _ = strings.Cut(timedOut, "\n### ")
	if !strings.Contains(timedOut, "`omega/o.hang`") || strings.Contains(timedOut, "self124") {
		t.Errorf("timed-out section:\n%s", timedOut)
	}
	if w := weightsOf(t, wfile); w["omega/o.hang"] != 0 || w["omega/o.gated"] != gatedWeight {
		t.Errorf("an unknown item killed at its deadline created a weight, or the no-run moved: %v", w)
	}
	rebuildsIdentically(t, dir, logs)
}

// hasLines checks that a file holds each of want as a whole line.
func hasLines(t *testing.T, path string, want ...string) {
	t.Helper()
	got := lines(readFile(t, path))
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", filepath.Base(path), w, strings.Join(got, "\n"))
		}
	}
}

// A worker that panics (a test hook in a sgpu_testhooks build) stops the other
// items, and phases 5–8 still write what finished: verdicts, the learned weights,
// the report; then the run exits 70 with one line.
func TestWorkerPanicWritesWhatFinished(t *testing.T) {
	dir := fixture(t, "e2e")
	logs := filepath.Join(dir, "test-results", "logs")
	r := sgpu(t, dir, []string{"SGPU_TEST_PANIC_FILTER=p.boom", "TEST_LEVEL=1"},
		"run", "--gpus", "0,1", "--arch", "gfx942", "--grace", "1s", "ci/panic.conf")
	// Stopped, not waited for: its row is shorter than the 20 s it sleeps, at any
	// speed.
	if secs := itemSecs(t, logs, "pi", "p.long"); secs >= 20 {
		t.Errorf("the long item ran %.1f s: it was not stopped", secs)
	}
	want := "sgpu-queue: internal error: test hook: injected worker fault after the item of TEST_FILTER=p.boom; please report it with the log\n"
	if r.code != 70 || r.stderr != want {
		t.Fatalf("exit %d, stderr %q, want 70 and %q\n%s", r.code, r.stderr, want, r.stdout)
	}
	for _, w := range []string{"== phase 5", "== phase 6", "== phase 7", "== phase 8", "warning: internal error in sgpu-queue: test hook: injected worker fault"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("console lacks %q:\n%s", w, r.stdout)
		}
	}
	if got := outcomesOf(t, logs); !maps.Equal(got, map[string]string{"pi/p.short": "ok", "pi/p.long": "cancelled"}) {
		t.Errorf("outcomes %v: want the finished item and the stopped one", got)
	}
	hasLines(t, filepath.Join(logs, "suites", "pi.log"),
		"ok rc=0 items/pi.p.short.log",
		"FAIL rc=143 items/pi.p.long.log (cancelled)",
		"FAIL rc=- items/pi.p.boom.log (not recorded: sgpu-queue stopped on an internal error)",
		"FAIL rc=- items/pi.p.never.log (not recorded: sgpu-queue stopped on an internal error)")
	for file, rc := range map[string]string{"pi.log.rc": "143\n", "gamma.log.rc": "1\n"} {
		if got := readFile(t, filepath.Join(logs, "suites", file)); got != rc {
			t.Errorf("%s = %q, want %q", file, got, rc)
		}
	}
	var meta struct {
		Stop struct{ Reason, Message string } `json:"stop"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(logs, "queue", "run.json"))), &meta); err != nil || meta.Stop.Reason != "internal-error" {
		t.Errorf("run.json stop %+v %v", meta.Stop, err)
	}
	report := readFile(t, filepath.Join(logs, "report", "schedule.md"))
	if !strings.Contains(report, "**sgpu-queue stopped on an internal error**") || !strings.Contains(report, "`pi/p.short`") {
		t.Errorf("report:\n%s", report)
	}
	if w := weightsOf(t, filepath.Join(dir, "ci-weights", "test_weights.gfx942.l1.txt")); len(w) != 1 || w["pi/p.short"] == 0 {
		t.Errorf("learned %v, want only the finished item", w)
	}
	rebuildsIdentically(t, dir, logs)
}

// startAndWait starts the binary on the e2e fixture and waits until the trace shows
// an event of kind, then sends sig; it returns the exit code and the output.
func startAndWait(t *testing.T, dir string, env []string, kind string, sig syscall.Signal, args ...string) (int, string) {
	t.Helper()
	trace := filepath.Join(dir, "trace.tsv")
	env = append([]string{"PATH=" + os.Getenv("PATH"), "SGPU_TRACE=" + trace, "TEST_LEVEL=1"}, env...)
	seen := func() bool {
		return slices.ContainsFunc(readTrace(t, trace), func(e event) bool { return e.kind == kind })
	}
	code, out := signalWhen(t, dir, env, "no "+kind+" event", seen, sig, args...)
	for _, e := range readTrace(t, trace) {
		if e.kind == "start" {
			t.Errorf("an item started after the cancel: %+v", e)
		}
	}
	return code, out
}

// signalWhen starts the binary in dir with env (the whole of it), sends it sig once
// ready says so (asked every 20 ms, for at most 60 s, else the test fails with
// notYet), and waits at most 30 s for it to end; it returns the exit code and the
// output, which must show no panic and no data race.
func signalWhen(t *testing.T, dir string, env []string, notYet string, ready func() bool, sig syscall.Signal, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); !ready(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s:\n%s", notYet, out.String())
		}
	}
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 30 s after %s:\n%s", sig, out.String())
	}
	if strings.Contains(out.String(), "panic:") || strings.Contains(out.String(), "DATA RACE") {
		t.Fatalf("the binary panicked or raced:\n%s", out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// A cancel during setup (phase 3) or listing (phase 1), with real signals: every
// suite still gets its verdict files, "cancelled"; the report says so and can be
// rebuilt; nothing is learned; the run exits 130.
func TestCancelBeforeItems(t *testing.T) {
	for _, tt := range []struct {
		name  string
		env   string
		event string
		sig   syscall.Signal
		alpha []string // want suites/alpha.log
	}{
		{"setup SIGTERM", "SLOW_SETUP=30", "setup", syscall.SIGTERM, nil},
		{"listing SIGINT", "SLOW_LIST=30", "list", syscall.SIGINT, []string{"FAIL rc=- (cancelled before its items were listed: none ran)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixture(t, "e2e")
			logs := filepath.Join(dir, "test-results", "logs")
			code, out := startAndWait(t, dir, []string{tt.env, "JUNITXML_PREFIX=test-results/junit/"}, tt.event, tt.sig, "run", "--gpus", "0,1", "--arch", "gfx942", "--grace", "1s", "ci/queue.conf")
			if code != 130 {
				t.Fatalf("exit %d, want 130\n%s", code, out)
			}
			for _, s := range []string{"alpha", "beta", "gamma"} {
				if rc := readFile(t, filepath.Join(logs, "suites", s+".log.rc")); rc != "130\n" {
					t.Errorf("%s.log.rc = %q, want 130", s, rc)
				}
			}
			alpha := lines(readFile(t, filepath.Join(logs, "suites", "alpha.log")))
			if tt.alpha != nil {
				if strings.Join(alpha, "\n") != strings.Join(tt.alpha, "\n") {
					t.Errorf("alpha.log %q, want %q", alpha, tt.alpha)
				}
			} else {
				if len(alpha) != 6 {
					t.Errorf("alpha.log has %d lines, want one per queued item:\n%s", len(alpha), strings.Join(alpha, "\n"))
				}
				for _, l := range alpha {
					if !strings.HasPrefix(l, "FAIL rc=- items/alpha.") || !strings.HasSuffix(l, " (cancelled before it started)") {
						t.Errorf("alpha.log line %q", l)
					}
				}
			}
			// The merged JUnit says every queued item was cancelled; a suite never
			// listed gets no file (zero test cases would read as a pass).
			merged := filepath.Join(dir, "test-results", "junit", "alpha.xml")
			if tt.alpha != nil {
				if _, err := os.Stat(merged); !os.IsNotExist(err) {
					t.Errorf("a merged JUnit file for a suite never listed: %v", err)
				}
			} else {
				if x := readFile(t, merged); strings.Count(x, "cancelled before it started") < 6 {
					t.Errorf("alpha.xml does not name every cancelled item:\n%s", x)
				}
				defer validateJUnit(t, merged) // last: it skips when xmllint is missing
			}
			report := readFile(t, filepath.Join(logs, "report", "schedule.md"))
			if !strings.Contains(report, "## ✗ sgpu-queue: cancelled") || !strings.Contains(report, "**The run was cancelled before any item ran**") {
				t.Errorf("report:\n%s", report)
			}
			if _, err := os.Stat(filepath.Join(dir, "ci-weights", "test_weights.gfx942.l1.txt")); !os.IsNotExist(err) {
				t.Errorf("a weight table was written by a run that ran nothing: %v", err)
			}
			for _, w := range []string{"stopping dispatch", "== phase 5", "== phase 8", "run cancelled", "exit code 130"} {
				if !strings.Contains(out, w) {
					t.Errorf("console lacks %q:\n%s", w, out)
				}
			}
			rebuildsIdentically(t, dir, logs)
		})
	}
}

// An opaque suite's census is its bare label: keys it left as a list suite are
// pruned, its own stays (issue: a list → opaque change kept them forever).
func TestOpaqueCensusPrunes(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	wfile := filepath.Join(dir, "w.txt")
	os.WriteFile(wfile, []byte("gamma/old.a 5.0\ngamma/old.b 6.0\ngamma 0.7\nomega/o.ok 0.1\nother/x 3.0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "opaque.conf"), []byte("gamma gamma.log opaque ci/gamma.sh\n"), 0o644)
	r := sgpu(t, dir, nil, "run", "--gpus", "1", "--arch", "gfx942", "--weights", wfile, "opaque.conf")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w := weightsOf(t, wfile)
	if _, ok := w["gamma"]; !ok || len(w) != 3 || w["omega/o.ok"] != 0.1 || w["other/x"] != 3 {
		t.Errorf("weights after %v, want gamma (learned), omega/o.ok and other/x (their suites are not in this run)", w)
	}
	for _, k := range []string{"gamma/old.a", "gamma/old.b"} {
		if !strings.Contains(r.stdout, "pruned "+k+" (no longer listed by its suite's census)") {
			t.Errorf("console does not name the pruned %s:\n%s", k, r.stdout)
		}
	}
	if census := readFile(t, filepath.Join(dir, "test-results", "logs", "queue", "items.tsv")); census != "gamma\t\n" {
		t.Errorf("items.tsv %q, want TE's row for an opaque suite", census)
	}
}
