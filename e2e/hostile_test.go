package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// manySuite writes a list suite that lists $MANY items (m.1 … m.N) and whose items
// only append "<tag> <gpu>" to $MANY_TRACE (one short O_APPEND write each, so
// concurrent items never interleave), and a config naming it.
func manySuite(t *testing.T, dir string) string {
	t.Helper()
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then
    i=1
    while [ "$i" -le "$MANY" ]; do echo "TE_CI_ITEM m.$i"; i=$((i + 1)); done
    exit 0
fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
echo "$TEST_FILTER $HIP_VISIBLE_DEVICES" >>"$MANY_TRACE"
[ -z "$JUNITXML_PREFIX" ] || echo '<testsuite name="many" tests="0"/>' >"$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX"
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "many.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "many.conf")
	if err := os.WriteFile(conf, []byte("many many.log list ci/many.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return "many.conf"
}

// A suite listing 10,000 items goes through expansion, weighing (every tenth item has
// a learned weight, the rest a prior), ordering and plan printing whole.
func TestTenThousandItemsDryRun(t *testing.T) {
	const n = 10000
	dir := fixture(t, "e2e")
	conf := manySuite(t, dir)
	var table strings.Builder
	for i := 10; i <= n; i += 10 {
		fmt.Fprintf(&table, "many/m.%d %d.0\n", i, i/10) // 1 … 1000 s
	}
	if err := os.MkdirAll(filepath.Join(dir, "ci-weights"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt"), []byte(table.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sgpu(t, dir, []string{"MANY=" + strconv.Itoa(n)}, "run", "--dry-run", "--gpus", "4", "--arch", "gfx942", conf)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	planned := 0
	seen := map[string]bool{}
	// The 9000 items the table lacks are estimated by a prior: their siblings' median
	// (docs/weights.md#priors-for-unknown-items), the median of 1 … 1000 s.
	const median = 500.5
	prior := "~" + textfmt.Dur(median)
	for _, l := range lines(r.stdout) {
		f := strings.Fields(l)
		if len(f) >= 4 && f[2] == "many" && strings.HasPrefix(f[3], "m.") {
			if seen[f[3]] {
				t.Errorf("%s printed twice in the plan", f[3])
			}
			seen[f[3]] = true
			planned++
			i, _ := strconv.Atoi(strings.TrimPrefix(f[3], "m."))
			want, from := prior, true
			if i%10 == 0 {
				want, from = textfmt.Dur(float64(i/10)), false
			}
			if f[1] != want || strings.Contains(l, "(prior: ") != from {
				t.Errorf("%s estimated %q, want %s (a prior named: %v)", f[3], l, want, from)
			}
		}
	}
	if planned != n {
		t.Errorf("the plan lists %d items, want %d", planned, n)
	}
	// 1+2+…+1000 = 500500 s of known work, and 9000 items by the prior.
	want := fmt.Sprintf("%d items on 4 GPUs: estimated work %s (9000 item(s) by a prior)", n, textfmt.Dur(500500+9000*median))
	if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "dry run: nothing was run") {
		t.Errorf("stdout lacks %q or the dry-run line:\n%s", want, tail(r.stdout, 20))
	}
	if _, err := os.Stat(filepath.Join(dir, "test-results")); err == nil {
		t.Error("the dry run wrote test-results/")
	}
}

// manyRun is how many trivial items the real run of TestManyItemsRun starts: each is
// a process (a shell) and the binary is race-instrumented, so this is sized to stay a
// few seconds on a loaded 2-core machine.
const manyRun = 3000

// A real run of thousands of trivial items on 4 GPUs runs each exactly once and
// records every one in timings.tsv.
func TestManyItemsRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts thousands of processes")
	}
	dir := fixture(t, "e2e")
	conf := manySuite(t, dir)
	trace := filepath.Join(dir, "many.trace")
	r := sgpu(t, dir, []string{"MANY=" + strconv.Itoa(manyRun), "MANY_TRACE=" + trace},
		"run", "--gpus", "4", "--arch", "gfx942", conf)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, tail(r.stdout, 20), r.stderr)
	}
	ran := map[string]int{}
	gpus := map[string]int{}
	for _, l := range lines(readFile(t, trace)) {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("bad trace line %q", l)
		}
		ran[f[0]]++
		gpus[f[1]]++
	}
	rows := map[string]int{}
	logs := filepath.Join(dir, "test-results", "logs")
	for _, l := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
		f := strings.Split(l, "\t")
		if len(f) < 9 || f[0] != "many" || f[8] != "0" {
			t.Fatalf("bad timings row %q", l)
		}
		rows[f[1]]++
	}
	for i := 1; i <= manyRun; i++ {
		tag := "m." + strconv.Itoa(i)
		if ran[tag] != 1 || rows[tag] != 1 {
			t.Errorf("%s ran %d time(s), has %d timings row(s); want 1 and 1", tag, ran[tag], rows[tag])
		}
	}
	if len(ran) != manyRun || len(rows) != manyRun {
		t.Errorf("%d items ran and %d have rows, want %d", len(ran), len(rows), manyRun)
	}
	if len(gpus) != 4 {
		t.Errorf("items ran on GPUs %v, want all 4", gpus)
	}
	if want := fmt.Sprintf("[%d/%d", manyRun, manyRun); !strings.Contains(r.stdout, want) {
		t.Errorf("no console line %q", want)
	}
}

// A log dir that cannot be created (its parent is a regular file, which stops root
// too) is a usage error: exit 2 and one line naming the dir and the fix.
func TestUnwritableLogDir(t *testing.T) {
	dir := fixture(t, "e2e")
	blocker := filepath.Join(dir, "not-a-dir")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(blocker, "logs")
	trace := filepath.Join(dir, "trace.tsv")
	r := sgpu(t, dir, []string{"SGPU_TRACE=" + trace}, "run", "--gpus", "2", "--arch", "gfx942", "--log-dir", logDir, "ci/queue.conf")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	errs := lines(r.stderr)
	if len(errs) != 1 || !strings.Contains(errs[0], logDir) || !strings.Contains(errs[0], "not writable") ||
		!strings.Contains(errs[0], "give a writable --log-dir") {
		t.Errorf("stderr = %q, want one line naming %s and the fix", r.stderr, logDir)
	}
	if evs := readTrace(t, trace); len(evs) != 0 {
		t.Errorf("%d item or setup events ran with no log dir", len(evs))
	}
}

func tail(s string, n int) string {
	l := lines(s)
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
