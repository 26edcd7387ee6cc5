package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/hook"
)

// The queue fixture: two list suites and an opaque one on three GPUs, with a
// level-gated item, a capability-gated item, an env prefix that must survive
// re-entry, a failing item, a crashing item that leaves its .partial, a hostile tag.
func TestRunQueue(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	trace := filepath.Join(dir, "trace.tsv")
	env := []string{"SGPU_TRACE=" + trace, "JUNITXML_PREFIX=test-results/junit/", "TEST_LEVEL=1"}
	r := sgpu(t, dir, env, "run", "--gpus", "0,1,2", "--arch", "gfx942", "ci/queue.conf")
	if r.code != 139 {
		t.Fatalf("exit code %d, want 139 (the crash is the largest failing rc)\n%s%s", r.code, r.stdout, r.stderr)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	evs := readTrace(t, trace)

	queued := map[string]bool{
		"alpha/ok.fast": true, "alpha/ok.slow": true, "alpha/env.prefix": true, "alpha/fails": true,
		"alpha/crash": true, "alpha/../evil tag/x": true,
		"beta/b.one": true, "beta/b.two": true, "beta/b.three": true, "beta/b.four": true, "gamma": true,
	}
	t.Run("every queued item ran exactly once", func(t *testing.T) {
		starts := map[string]int{}
		for _, e := range evs {
			if e.kind == "start" {
				starts[key(e)]++
			}
		}
		for k := range queued {
			if starts[k] != 1 {
				t.Errorf("%s started %d times", k, starts[k])
			}
		}
		for k := range starts {
			if !queued[k] {
				t.Errorf("%s ran but was not queued (level or capability gate ignored?)", k)
			}
		}
	})
	t.Run("never two items on one GPU at once", func(t *testing.T) {
		type span struct{ from, to int64 }
		open := map[string]int64{}
		byGPU := map[string][]span{}
		for _, e := range evs {
			switch e.kind {
			case "start":
				open[key(e)] = e.ns
			case "end":
				byGPU[e.gpu] = append(byGPU[e.gpu], span{open[key(e)], e.ns})
			}
		}
		for gpu, spans := range byGPU {
			sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
			for i := 1; i < len(spans); i++ {
				if spans[i].from < spans[i-1].to {
					t.Errorf("gpu %s runs two items at once: %v", gpu, spans)
				}
			}
		}
		if len(byGPU) != 3 {
			t.Errorf("items ran on %d GPUs, want all 3: %v", len(byGPU), sortedKeys(byGPU))
		}
	})
	t.Run("report: failures first, from the JUnit, no absolute path, rebuilt alike", func(t *testing.T) {
		md := readFile(t, filepath.Join(logs, "report", "schedule.md"))
		if !strings.HasPrefix(md, "## ✗ sgpu-queue: 1 of 8 tests failed; 2 of 11 items failed at level 1\n") {
			t.Errorf("verdict line:\n%.200s", md)
		}
		at := 0
		for _, want := range []string{"### Failed suites (1)", "### Failed items (2)", "#### ✗ `alpha/fails`: rc 3",
			"**`e2e::fails`** (failure)", "AssertionError: fails exits 3 (in test-results/logs/cwd/alpha.fails)",
			"Log: [`items/alpha.fails.log`](../items/alpha.fails.log)", "### Efficiency", "### Timeline", "Table: `ci-weights/"} {
			i := strings.Index(md[at:], want)
			if i < 0 {
				t.Fatalf("schedule.md lacks %q after byte %d:\n%s", want, at, md)
			}
			at += i + len(want)
		}
		if strings.Contains(md, dir) {
			t.Errorf("schedule.md names the absolute path %s", dir)
		}
		rr := sgpu(t, dir, nil, "report", logs)
		if rr.code != 0 || rr.stdout != md {
			t.Errorf("the rebuilt report differs (exit %d)", rr.code)
		}
	})
	t.Run("each item saw exactly one GPU and its own cwd", func(t *testing.T) {
		for _, e := range evs {
			if e.kind != "start" {
				continue
			}
			if e.gpu != "0" && e.gpu != "1" && e.gpu != "2" {
				t.Errorf("%s saw HIP_VISIBLE_DEVICES=%q", key(e), e.gpu)
			}
			if filepath.Dir(e.pwd) != filepath.Join(logs, "cwd") {
				t.Errorf("%s ran in %s", key(e), e.pwd)
			}
		}
	})
	t.Run("setup once per list suite, never inline for list items", func(t *testing.T) {
		setups := map[string]int{}
		for _, e := range evs {
			switch {
			case e.kind == "setup":
				setups[e.suite]++
				if e.gpu != "0" {
					t.Errorf("setup of %s on GPU %q, want the first GPU", e.suite, e.gpu)
				}
			case e.kind == "start" && e.suite != "gamma":
				if e.skip != "1" || e.filter != hook.FilterPattern(e.tag) {
					t.Errorf("%s: TE_CI_SKIP_SETUP=%q TEST_FILTER=%q", key(e), e.skip, e.filter)
				}
			case e.kind == "start" && e.suite == "gamma":
				if e.skip != "" || e.filter != "" {
					t.Errorf("opaque item got list variables: %+v", e)
				}
			}
		}
		if setups["alpha"] != 1 || setups["beta"] != 1 || len(setups) != 2 {
			t.Errorf("setups %v", setups)
		}
	})
	t.Run("env prefix survives re-entry", func(t *testing.T) {
		for _, e := range evs {
			if e.kind == "start" && e.tag == "env.prefix" && e.prefix != "set-on-the-call-line" {
				t.Errorf("MY_PREFIX=%q", e.prefix)
			}
		}
		if rc := readFile(t, filepath.Join(logs, "items", "alpha.env.prefix.log.rc")); rc != "0\n" {
			t.Errorf("env.prefix rc %q", rc)
		}
	})
	t.Run("verdict files", func(t *testing.T) {
		alpha := lines(readFile(t, filepath.Join(logs, "suites", "alpha.log")))
		want := map[string]string{
			"items/alpha.fails.log":      "FAIL rc=3 items/alpha.fails.log",
			"items/alpha.crash.log":      "FAIL rc=139 items/alpha.crash.log (cut off)",
			"items/alpha.ok.fast.log":    "ok rc=0 items/alpha.ok.fast.log",
			"items/alpha.env.prefix.log": "ok rc=0 items/alpha.env.prefix.log",
		}
		if len(alpha) != 6 {
			t.Errorf("alpha.log has %d lines: %q", len(alpha), alpha)
		}
		for _, l := range alpha {
			f := strings.Fields(l)
			if w, ok := want[f[2]]; ok && l != w {
				t.Errorf("line %q, want %q", l, w)
			}
		}
		for file, rc := range map[string]string{"alpha.log.rc": "139\n", "beta.log.rc": "0\n", "gamma.log.rc": "0\n"} {
			if got := readFile(t, filepath.Join(logs, "suites", file)); got != rc {
				t.Errorf("%s = %q, want %q", file, got, rc)
			}
		}
		if g := readFile(t, filepath.Join(logs, "suites", "gamma.log")); g != "ok rc=0 items/gamma.whole.log\n" {
			t.Errorf("gamma.log %q", g)
		}
	})
	t.Run("item files stay inside the log dir", func(t *testing.T) {
		items, _ := os.ReadDir(filepath.Join(logs, "items"))
		if len(items) != 2*len(queued) {
			t.Errorf("%d files in items/, want %d", len(items), 2*len(queued))
		}
		hostile := 0
		for _, e := range items {
			if strings.HasPrefix(e.Name(), "alpha..._evil_tag_x~") {
				hostile++
			}
		}
		if hostile != 2 {
			t.Errorf("hostile tag's log and rc not found in items/")
		}
		for _, p := range []string{filepath.Join(dir, "test-results", "evil tag"), filepath.Join(logs, "evil tag"), filepath.Join(dir, "x.log")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s exists: a tag escaped the log dir", p)
			}
		}
		cwd, _ := os.ReadDir(filepath.Join(logs, "cwd"))
		if len(cwd) != 1 || cwd[0].Name() != "alpha.ok.slow" {
			t.Errorf("cwd/ holds %v, want only the one an item left a file in", cwd)
		}
	})
	t.Run("queue files and census", func(t *testing.T) {
		census := readFile(t, filepath.Join(logs, "queue", "items.tsv"))
		if !strings.Contains(census, "alpha\tcap.gated\n") || strings.Contains(census, "level3.only") {
			t.Errorf("census:\n%s", census)
		}
		if n := len(lines(readFile(t, filepath.Join(logs, "queue", "queue.tsv")))); n != len(queued) {
			t.Errorf("queue.tsv has %d rows", n)
		}
		timings := lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv")))
		if len(timings) != len(queued) {
			t.Errorf("timings.tsv has %d rows", len(timings))
		}
		for _, row := range timings {
			f := strings.Split(row, "\t")
			if len(f) != 9 {
				t.Errorf("row %q", row)
				continue
			}
			if f[1] == "crash" && f[8] != "1" {
				t.Errorf("crash row not flagged incomplete: %q", row)
			}
			if f[1] == "../evil tag/x" && f[0] != "alpha" {
				t.Errorf("hostile row %q", row)
			}
		}
	})
	t.Run("weights learned", func(t *testing.T) {
		w := readFile(t, filepath.Join(dir, "ci-weights", "test_weights.gfx942.l1.txt"))
		keys := map[string]bool{}
		for _, l := range lines(w) {
			keys[l[:strings.LastIndexByte(l, ' ')]] = true
		}
		for k := range queued {
			if k == "alpha/crash" {
				if keys[k] {
					t.Error("the crashed (incomplete) item created a weight")
				}
				continue
			}
			if !keys[k] {
				t.Errorf("no weight for %s", k)
			}
		}
	})
	t.Run("merged junit", func(t *testing.T) {
		junitDir := filepath.Join(dir, "test-results", "junit")
		alpha := readFile(t, filepath.Join(junitDir, "alpha.xml"))
		for _, want := range []string{`<testsuites name="alpha"`, "item crash of suite alpha: cut off (a .partial sidecar outlived it), exit code 139", "items/alpha.crash.log", `name="env.prefix"`} {
			if !strings.Contains(alpha, want) {
				t.Errorf("alpha.xml lacks %q", want)
			}
		}
		for _, label := range []string{"alpha", "beta", "gamma"} {
			validateJUnit(t, filepath.Join(junitDir, label+".xml"))
		}
	})
	t.Run("console", func(t *testing.T) {
		for _, want := range []string{"== phase 0:", "== phase 4: run 11 items on 3 GPUs", "== phase 8:",
			`alpha "../evil tag/x"`, "[11/11", "FAIL rc=139 alpha crash (cut off)  test-results/logs/items/alpha.crash.log",
			"lower bound max(work/3, largest)", "plus 11 unknown item(s)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("console lacks %q", want)
			}
		}
		report := readFile(t, filepath.Join(logs, "report", "schedule.md"))
		if !strings.Contains(report, "✗ sgpu-queue: 1 of 8 tests failed; 2 of 11 items failed") || !strings.Contains(report, "items/alpha.crash.log") {
			t.Errorf("report:\n%s", report)
		}
	})

	// Run 2 is ordered longest-first from what run 1 learned; the crashed item
	// learned no weight: its suite's median is its prior (docs/weights.md), and it
	// takes its place by that.
	os.Remove(trace)
	// --full: run 1's failures would otherwise narrow it to a re-run of them.
	r2 := sgpu(t, dir, env, "run", "--full", "--gpus", "0,1,2", "--arch", "gfx942", "ci/queue.conf")
	if r2.code != 139 {
		t.Fatalf("run 2 exit %d\n%s", r2.code, r2.stderr)
	}
	q := lines(readFile(t, filepath.Join(logs, "queue", "queue.tsv")))
	if !regexp.MustCompile(`(?m)^ +\d+ +~[0-9.]+s +alpha +crash  \(prior: median of its suite alpha \(\d+\)\)$`).MatchString(r2.stdout) ||
		!strings.Contains(r2.stdout, "the table lacks 1 item(s): prior estimates for 1 from their suite") {
		t.Errorf("run 2's plan does not estimate the crashed item by its suite:\n%s", r2.stdout)
	}
	// Longest first, unless the planner found an order that beats LPT on the weights
	// run 1 measured (docs/performance.md): which one it takes depends on how fast
	// run 1's items ran, so either is right; queue.tsv is then the plan's order.
	if !strings.Contains(r2.stdout, "planned queue follows a plan") {
		prev := 1e18
		for _, row := range q {
			var w float64
			if _, err := fmtSscan(strings.Split(row, "\t")[0], &w); err != nil || w > prev {
				t.Errorf("queue.tsv not longest-first at %q", row)
			}
			prev = w
		}
	}
	if !strings.Contains(r2.stdout, "weights: "+filepath.Join(dir, "ci-weights", "test_weights.gfx942.l1.txt")+" (10 keys)") {
		t.Errorf("run 2 did not load the learned table:\n%s", r2.stdout)
	}
	// The first three items dispatched are the first three of the plan.
	starts := []string{}
	for _, e := range readTrace(t, trace) {
		if e.kind == "start" {
			starts = append(starts, key(e))
		}
	}
	first := map[string]bool{}
	for _, row := range q[:3] {
		f := strings.Split(row, "\t")
		first[key(event{suite: f[1], tag: f[3]})] = true
	}
	for _, k := range starts[:3] {
		if !first[k] {
			t.Errorf("run 2 started %v first, plan begins %v", starts[:3], q[:3])
		}
	}
}

func key(e event) string {
	if e.tag == "" {
		return e.suite
	}
	return e.suite + "/" + e.tag
}
