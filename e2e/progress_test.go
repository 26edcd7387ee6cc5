package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// consoleCount is one console line's count: "[done/total eta …, N not run]".
type consoleCount struct {
	done, total, notRun int
	eta                 string // as printed, "" when the line has none
	after               bool   // printed after the line counts was given
}

var countRE = regexp.MustCompile(`  \[(\d+)/(\d+)(?: eta ([^,\]]+))?(?:, (\d+) not run)?\]`)

// counts reads the count of every console line of phase 4 that has one, marking
// those after the first line that starts with mark.
func counts(stdout, mark string) []consoleCount {
	var out []consoleCount
	after := false
	for _, l := range lines(stdout) {
		after = after || mark != "" && strings.HasPrefix(l, mark)
		m := countRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		c := consoleCount{eta: m[3], after: after}
		c.done, _ = strconv.Atoi(m[1])
		c.total, _ = strconv.Atoi(m[2])
		c.notRun, _ = strconv.Atoi(m[4])
		out = append(out, c)
	}
	return out
}

// checkLastCount checks that the console's last count reads M/M with notRun not
// run, M the attempts timings.tsv holds.
func checkLastCount(t *testing.T, stdout, logs string, notRun int) {
	t.Helper()
	cs := counts(stdout, "")
	rows := len(lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))))
	if len(cs) == 0 {
		t.Fatalf("no count on the console:\n%s", stdout)
	}
	if last := cs[len(cs)-1]; last.done != rows || last.total != rows || last.notRun != notRun {
		t.Errorf("last count %d/%d, %d not run; want %d/%d, %d not run:\n%s", last.done, last.total, last.notRun, rows, rows, notRun, stdout)
	}
}

// A GPU quarantined on a 4-GPU run leaves two 4-GPU items that no longer fit: they
// leave the count (the last line reads M/M and says 2 not run), and from the
// quarantine on the eta spreads the work left over the 3 GPUs that remain (docs/outcomes.md,
// "The console line").
func TestConsoleCountAndEtaAfterQuarantine(t *testing.T) {
	dir := fixture(t, "e2e")
	// Every item is known and 6000 s by the table (they take 0.3 s): an attempt
	// left is 6000 GPU-seconds of eta, far above anything a busy machine adds.
	// Longest first, sigma's items run before wide's.
	const weight = 6000.0
	var table strings.Builder
	for i := 1; i <= 8; i++ {
		table.WriteString("sigma/s." + strconv.Itoa(i) + " 6000.0\n")
	}
	table.WriteString("wide/w.a 3000.0\nwide/w.b 3000.0\n")
	if err := os.MkdirAll(filepath.Join(dir, "ci-weights"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt"), []byte(table.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(t.TempDir(), "logs")
	r := sgpu(t, dir, []string{"BAD_GPU=1", "SGPU_STATE=" + t.TempDir()},
		"run", "--gpus", "0,1,2,3", "--arch", "gfx942", "--policy", "lpt", "--log-dir", logs, "ci/unfit.conf")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the two items that never ran)\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{"warning: gpu1 quarantined:", "warning: wide/w.a is not run: it needs 4 GPUs and quarantine left 3 in the pool (gpu1 out)",
		"warning: wide/w.b is not run: it needs 4 GPUs and quarantine left 3 in the pool (gpu1 out)"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("console lacks %q:\n%s", w, r.stdout)
		}
	}
	checkLastCount(t, r.stdout, logs, 2)
	// From the second unfit warning on, the quarantine has shrunk the pool the eta
	// spreads over and dropped both wide items.
	after := 0
	for _, c := range counts(r.stdout, "warning: wide/w.b is not run:") {
		if !c.after {
			continue
		}
		after++
		// (6000 s × attempts left − what the running ones already ran) / 3 GPUs.
		// Never more than the whole weight of what is left (the eta prints whole
		// minutes above an hour); never less by more than the running ones can
		// have run by the test's time limit (3 × 300 s, over 3 GPUs) — both true
		// at any speed, and both far from the 4-GPU figure, weight/4 × left.
		left := float64(c.total - c.done)
		d, err := time.ParseDuration(c.eta)
		eta := d.Seconds()
		if err != nil || eta > weight/3*left+60 || eta < weight/3*left-300-60 {
			t.Errorf("after the quarantine, [%d/%d eta %s]: want about %.0fs, the work left over 3 GPUs (over 4: %.0fs)",
				c.done, c.total, c.eta, weight/3*left, weight/4*left)
		}
	}
	if after == 0 {
		t.Errorf("no count after the quarantine:\n%s", r.stdout)
	}
}

// A flaky 2-GPU item fails on GPUs that include gpu1, which single-GPU items then
// get quarantined: on 4 GPUs its retry runs on two that remain and passes; on 2 GPUs
// one is left, and the retry is reported "not run again" in the console, its
// verdict and the count. Its tag holds a space and a tab: every line names it
// quoted, as one line.
func TestMultiGPURetryAfterQuarantine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		gpus   string
		code   int
		notRun int
		want   []string
	}{
		{"0,1,2,3", 0, 0, []string{`  retrying "wide/flaky one\tx" (attempt 1 of 2 failed with rc=1 on gpu0,1)`}},
		{"0,1", 1, 1, []string{`  retrying "wide/flaky one\tx" (attempt 1 of 2 failed with rc=1 on gpu0,1)`,
			`warning: "wide/flaky one\tx" is not run again: it needs 2 GPUs and quarantine left 1 in the pool (gpu1 out)`,
			`  FAIL rc=1 wide "flaky one\tx" (not run again: needs 2 GPUs, quarantine left 1)`}},
	} {
		t.Run(tt.gpus, func(t *testing.T) {
			dir := fixture(t, "e2e")
			logs := filepath.Join(t.TempDir(), "logs")
			r := sgpu(t, dir, []string{"BAD_GPU=1", "WIDE_PAIRS=1", "SGPU_STATE=" + t.TempDir()},
				"run", "--gpus", tt.gpus, "--arch", "gfx942", "--retries", "1", "--log-dir", logs, "ci/pairretry.conf")
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("console lacks %q:\n%s", w, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "\t") {
				t.Errorf("a raw tab on the console:\n%s", r.stdout)
			}
			checkLastCount(t, r.stdout, logs, tt.notRun)
			checkPairAttempts(t, logs, tt.code == 0)
		})
	}
}

// checkPairAttempts checks the flaky pair's timings rows: one failed attempt on
// gpu0,1, then (when retried) one passed on GPUs without gpu1.
func checkPairAttempts(t *testing.T, logs string, retried bool) {
	t.Helper()
	var rows [][]string
	for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
		// timings.tsv escapes the tab of the tag (docs/files.md).
		if f := strings.Split(row, "\t"); f[0] == "wide" && f[1] == `flaky one\tx` {
			rows = append(rows, f)
		}
	}
	want := 1
	if retried {
		want = 2
	}
	if len(rows) != want || rows[0][2] != "0,1" || rows[0][4] != "1" {
		t.Fatalf("pair rows %q, want %d, the first failed on 0,1", rows, want)
	}
	if retried && (rows[1][4] != "0" || strings.Contains(","+rows[1][2]+",", ",1,")) {
		t.Errorf("the retry %q: want it passed on GPUs without the quarantined gpu1", rows[1])
	}
}
