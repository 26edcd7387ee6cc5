package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// itemScript is the suite every test item re-enters: it appends "start|end <tag>
// <gpu>" to $TRACE (one short O_APPEND write each, so lines never interleave) and
// behaves by its tag.
const itemScript = `#!/bin/sh
tag=$TEST_FILTER
[ -n "$tag" ] || tag=whole
echo "start $tag $HIP_VISIBLE_DEVICES" >>"$TRACE"
echo "item $tag on gpu $HIP_VISIBLE_DEVICES"
rc=0
case $tag in
    sleep*) sleep 0.05 ;;
    nap*) sleep 1.5 ;;
    fail*) rc=3 ;;
    flaky*)
        if [ ! -e "$STATE/$tag" ]; then : >"$STATE/$tag"; echo "flaky failure"; rc=1; fi ;;
    hang*) sleep 30 ;;
    partial*)
        mkdir -p "$JUNITXML_PREFIX"
        : >"${JUNITXML_PREFIX}$tag.xml.partial" ;;
    junit*)
        mkdir -p "$JUNITXML_PREFIX"
        out=passed
        if [ ! -e "$STATE/$tag" ]; then : >"$STATE/$tag"; out=failed; rc=1; fi
        case $tag in
            junitlink*) echo "<testsuite>$out</testsuite>" >"$STATE/$tag.$out"; ln -sf "$STATE/$tag.$out" "${JUNITXML_PREFIX}$tag.xml" ;;
            *) echo "<testsuite>$out</testsuite>" >"${JUNITXML_PREFIX}$tag.xml"
               [ $out = failed ] && echo '{"e":"start","nodeid":"t.py::x"}' >"${JUNITXML_PREFIX}$tag.xml.partial" ;;
        esac ;;
    noisy*) i=0; while [ $i -lt 2000 ]; do echo "line $i of output nobody will read"; i=$((i + 1)); done ;;
    whole)
        mkdir -p "${JUNITXML_PREFIX}deep/er"
        : >"${JUNITXML_PREFIX}deep/er/t.xml.partial" ;;
esac
echo "end $tag $HIP_VISIBLE_DEVICES" >>"$TRACE"
exit $rc
`

// harness is a dispatch run on real processes in a fresh log dir.
type harness struct {
	t       *testing.T
	dir     string
	script  string
	trace   string
	layout  logdir.Layout
	cfg     Config
	console bytes.Buffer

	mu    sync.Mutex
	warns []string
}

func newHarness(t *testing.T, gpus ...string) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir()}
	h.script = filepath.Join(h.dir, "suite.sh")
	if err := os.WriteFile(h.script, []byte(itemScript), 0o755); err != nil {
		t.Fatal(err)
	}
	h.trace = filepath.Join(h.dir, "trace")
	state := filepath.Join(h.dir, "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	h.layout = logdir.Layout{Root: filepath.Join(h.dir, "logs")}
	if err := h.layout.Prepare(); err != nil {
		t.Fatal(err)
	}
	tw, err := h.layout.OpenAttempts()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tw.Close() })
	h.cfg = Config{
		Target: runenv.Target{Exec: executor.Local{Grace: time.Second}, Hooks: hook.Default(), Level: "1",
			Env: hook.Env{"PATH=" + os.Getenv("PATH"), "TRACE=" + h.trace, "STATE=" + state}},
		Layout:   h.layout,
		GPUs:     gpus,
		PinVar:   "HIP_VISIBLE_DEVICES",
		Attempts: tw,
		Console:  &h.console,
		Warn: func(s string) {
			h.mu.Lock()
			h.warns = append(h.warns, s)
			h.mu.Unlock()
		},
	}
	return h
}

// item is a list item of suite "s" (weight < 0: unknown).
func (h *harness) item(tag string, weight float64) expand.Item {
	it := expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: tag}, Weight: 999999}, Suite: config.Suite{Label: "s", LogFile: "s.log", Mode: config.List, Path: h.script}}
	if weight >= 0 {
		it.Weight, it.Known = weight, true
	}
	return adapted(it)
}

// opaque is the whole opaque suite "o".
func (h *harness) opaque(weight float64) expand.Item {
	s := config.Suite{Label: "o", LogFile: "o.log", Mode: config.Opaque, Path: h.script}
	return adapted(expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "o"}, Weight: weight, Known: true}, Suite: s})
}

// deadGPU writes a suite script for which GPU id is dead: an item pinned there
// (alone) dies at once with a device error; elsewhere it runs the harness's script.
// It returns n single-GPU items of that suite, sleep.0 to sleep.<n-1>, of weight 1.
func (h *harness) deadGPU(id string, n int) []expand.Item {
	h.t.Helper()
	bad := filepath.Join(h.dir, "bad.sh")
	if err := os.WriteFile(bad, []byte(`#!/bin/sh
if [ "$HIP_VISIBLE_DEVICES" = `+id+` ]; then echo "RuntimeError: HIP error: hipErrorNoDevice"; exit 1; fi
exec "`+h.script+`"
`), 0o755); err != nil {
		h.t.Fatal(err)
	}
	var items []expand.Item
	for i := 0; i < n; i++ {
		it := h.item(fmt.Sprintf("sleep.%d", i), 1)
		it.Suite.Path = bad
		items = append(items, adapted(it))
	}
	return items
}

// run dispatches items in the given order.
func (h *harness) run(ctx context.Context, items ...expand.Item) *Result {
	h.t.Helper()
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	return Run(ctx, h.cfg, items, schedule.OnSlots(schedule.NewPull(order), len(h.cfg.GPUs)))
}

func (h *harness) warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.warns...)
}

// timing is an attempt as attempts.tsv records it, with the columns of its line in
// TE's timings.tsv that the attempt does not hold as they are written.
type timing struct {
	record.Attempt
	Item, Est  string
	Incomplete bool
}

// timings reads attempts.tsv, and timings.tsv beside it: one line each per attempt,
// in the same order, TE's written from the attempt.
func (h *harness) timings() []timing {
	h.t.Helper()
	data, err := os.ReadFile(h.layout.AttemptsTSV())
	if err != nil {
		h.t.Fatal(err)
	}
	rows, warns := logdir.ParseAttempts(bytes.NewReader(data))
	if len(warns) != 0 {
		h.t.Errorf("attempts.tsv: %q", warns)
	}
	te, err := os.ReadFile(h.layout.TimingsTSV())
	if err != nil {
		h.t.Fatal(err)
	}
	lines := strings.SplitAfter(string(te), "\n")
	out := make([]timing, len(rows))
	for i, a := range rows {
		if i >= len(lines) || lines[i] != logdir.FormatTiming(a) {
			h.t.Fatalf("timings.tsv is not written from attempts.tsv: line %d of\n%s\nfor %+v", i+1, te, a)
		}
		f := strings.Split(strings.TrimSuffix(lines[i], "\n"), "\t")
		out[i] = timing{Attempt: a, Item: logdir.UnescapeField(f[1]), Est: f[7], Incomplete: f[8] == "1"}
	}
	return out
}

// traceEvents returns the trace lines split into fields (kind, tag, gpu).
func (h *harness) traceEvents() [][]string {
	h.t.Helper()
	data, err := os.ReadFile(h.trace)
	if err != nil {
		h.t.Fatal(err)
	}
	var evs [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			h.t.Fatalf("bad trace line %q", l)
		}
		evs = append(evs, f)
	}
	return evs
}

// Every item runs once; a GPU runs one item at a time; every GPU is used; every
// attempt has its log, rc file and timings row.
func TestRunOneItemPerGPU(t *testing.T) {
	h := newHarness(t, "0", "1", "2")
	var items []expand.Item
	for i := 0; i < 12; i++ {
		items = append(items, h.item(fmt.Sprintf("sleep.%02d", i), 1))
	}
	res := h.run(context.Background(), items...)
	if res.Cancelled || res.Stop != nil || len(res.Attempts) != 12 {
		t.Fatalf("cancelled %v stop %v attempts %d", res.Cancelled, res.Stop, len(res.Attempts))
	}
	running := map[string]string{} // gpu → tag
	started := map[string]int{}
	for _, e := range h.traceEvents() {
		kind, tag, gpu := e[0], e[1], e[2]
		switch kind {
		case "start":
			if other, busy := running[gpu]; busy {
				t.Errorf("%s started on gpu%s while %s ran there", tag, gpu, other)
			}
			running[gpu] = tag
			started[tag]++
		case "end":
			if running[gpu] != tag {
				t.Errorf("%s ended on gpu%s, which ran %q", tag, gpu, running[gpu])
			}
			delete(running, gpu)
		}
	}
	for _, it := range items {
		if started[it.Tag] != 1 {
			t.Errorf("%s started %d times", it.Tag, started[it.Tag])
		}
	}
	gpus := map[string]bool{}
	for _, a := range res.Attempts {
		gpus[a.GPU()] = true
		if a.RC != 0 || a.Number != 1 || a.Outcome != outcome.OK || a.End.Before(a.Start) || len(a.Slots) != 1 || a.GPU() != h.cfg.GPUs[a.Slots[0]] {
			t.Errorf("attempt %+v", a)
		}
		it := items[a.Item]
		if log, err := os.ReadFile(h.layout.ItemLog("s", it.Tag)); err != nil || string(log) != fmt.Sprintf("item %s on gpu %s\n", it.Tag, a.GPU()) {
			t.Errorf("log of %s = %q, %v", it.Tag, log, err)
		}
		if rc, err := os.ReadFile(h.layout.ItemRC("s", it.Tag)); err != nil || string(rc) != "0\n" {
			t.Errorf("rc of %s = %q, %v", it.Tag, rc, err)
		}
		if _, err := os.Stat(h.layout.ItemCwd("s", it.Tag)); !os.IsNotExist(err) {
			t.Errorf("empty working directory of %s left behind: %v", it.Tag, err)
		}
	}
	if len(gpus) != 3 {
		t.Errorf("GPUs used: %v, want all 3", gpus)
	}
	rows := h.timings()
	if len(rows) != 12 {
		t.Fatalf("%d timings rows, want 12", len(rows))
	}
	for _, r := range rows {
		if r.Label != "s" || r.RC != 0 || r.Est != "1" || r.EndOff < r.StartOff || r.Incomplete || r.Outcome != outcome.OK {
			t.Errorf("row %+v", r)
		}
	}
	if w := h.warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

// The console line of each finished item (docs/outcomes.md), with the ETA from the weights
// left: known work spread over the GPUs, unknown items counted.
func TestRunConsoleLines(t *testing.T) {
	h := newHarness(t, "7")
	res := h.run(context.Background(), h.item("a", 100), h.item("b c", -1), h.item("c", 10), h.opaque(5))
	if len(res.Attempts) != 4 {
		t.Fatalf("%d attempts", len(res.Attempts))
	}
	pre := `^\[\d\d:\d\d:\d\d\] gpu7 t\+\d+\.\ds \d+\.\ds rc=0 `
	want := []string{
		pre + `est=100s s a  \[1/4 eta ≥15s \+1 unknown\]$`,
		pre + `est=unknown s "b c"  \[2/4 eta 15s\]$`,
		pre + `est=10s s c  \[3/4 eta 5\.0s\]$`,
		pre + `est=5\.0s o \(whole\)  \[4/4 eta 0\.0s\]$`,
	}
	got := strings.Split(strings.TrimSuffix(h.console.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("console:\n%s", h.console.String())
	}
	for i := range want {
		if !regexp.MustCompile(want[i]).MatchString(got[i]) {
			t.Errorf("line %d = %q\nwant match %s", i, got[i], want[i])
		}
	}
	rows := h.timings()
	var est, item []string
	for _, r := range rows {
		est = append(est, r.Est)
		item = append(item, r.Item)
	}
	if strings.Join(est, ",") != "100,unknown,10,5" || strings.Join(item, ",") != "a,b c,c,whole" {
		t.Errorf("timings est %v items %v", est, item)
	}
}

// A failed item is queued again, at the back and on another GPU; each attempt keeps
// its own log, rc and timings row; retries stop at the limit.
func TestRunRetries(t *testing.T) {
	h := newHarness(t, "0", "1")
	h.cfg.Retries = 1
	items := []expand.Item{h.item("flaky", 1), h.item("fail", 1), h.item("sleep.a", 1), h.item("sleep.b", 1)}
	res := h.run(context.Background(), items...)
	var flaky, failed []Attempt
	for _, a := range res.Attempts {
		switch items[a.Item].Tag {
		case "flaky":
			flaky = append(flaky, a)
		case "fail":
			failed = append(failed, a)
		}
	}
	if len(res.Attempts) != 6 || len(flaky) != 2 || len(failed) != 2 {
		t.Fatalf("%d attempts (flaky %d, fail %d), want 6 (2, 2)", len(res.Attempts), len(flaky), len(failed))
	}
	if flaky[0].RC != 1 || flaky[1].RC != 0 || flaky[0].Number != 1 || flaky[1].Number != 2 || flaky[0].GPU() == flaky[1].GPU() {
		t.Errorf("flaky attempts %+v", flaky)
	}
	if failed[0].RC != 3 || failed[1].RC != 3 || failed[1].GPU() == failed[0].GPU() {
		t.Errorf("failing attempts %+v", failed)
	}
	l := h.layout
	for _, c := range []struct{ path, want string }{
		{l.ItemAttemptLog("s", "flaky", 1), "flaky failure"},
		{l.ItemAttemptLog("s", "flaky", 1) + ".rc", "1\n"},
		{l.ItemRC("s", "flaky"), "0\n"},
		{l.ItemAttemptLog("s", "fail", 1) + ".rc", "3\n"},
		{l.ItemRC("s", "fail"), "3\n"},
	} {
		data, err := os.ReadFile(c.path)
		if err != nil || !strings.Contains(string(data), c.want) {
			t.Errorf("%s = %q, %v; want %q", filepath.Base(c.path), data, err, c.want)
		}
	}
	if log, _ := os.ReadFile(l.ItemLog("s", "flaky")); strings.Contains(string(log), "flaky failure") {
		t.Errorf("the canonical log holds the failed attempt: %q", log)
	}
	if _, err := os.Stat(l.ItemAttemptLog("s", "fail", 2)); !os.IsNotExist(err) {
		t.Errorf("a third attempt of the failing item: %v", err)
	}
	if n := len(h.timings()); n != 6 {
		t.Errorf("%d timings rows, want 6", n)
	}
	out := h.console.String()
	for _, want := range []string{"  retrying s/flaky (attempt 1 of 2 failed with rc=1 on gpu", "  retrying s/fail (attempt 1 of 2 failed with rc=3 on gpu", "[6/6 eta"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "retrying") != 2 {
		t.Errorf("retried more than twice:\n%s", out)
	}
}

// The dispatcher calibrates the run's estimates on its complete attempts
// (docs/performance.md): three items that took far longer than their weights
// make their suite's factor the bound, 20, a failed attempt teaches nothing, and
// the next item's hang deadline grows with the factor: it passes where its
// weight alone would have killed it.
func TestRunCalibrates(t *testing.T) {
	h := newHarness(t, "0")
	// The nap sleeps 1.5 s: by its weight its deadline is 0.5 s, calibrated 6 s.
	h.cfg.Timeout = Timeout{Factor: 3, Min: 500 * time.Millisecond}
	items := []expand.Item{h.item("fail", 1e6), h.item("sleep.0", 0.001), h.item("sleep.1", 0.001), h.item("sleep.2", 0.001),
		h.item("nap", 0.1)}
	sched := make([]schedule.Item, len(items))
	for i, it := range items {
		sched[i] = it.Item
	}
	b, err := schedule.NewBlocks(sched, []int{0, 1, 2, 3, 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), h.cfg, items, b)
	if len(res.Attempts) != 5 || res.Attempts[4].Outcome != outcome.OK {
		t.Fatalf("attempts %+v\n%s", res.Attempts, h.console.String())
	}
	fs := b.Calibration().Factors()
	if len(fs) != 1 || math.Abs(fs[0].Factor-20) > 1e-9 || fs[0].Items != 4 || !fs[0].Own {
		t.Errorf("factors %+v, want s at 20 from the 3 sleeps and the nap", fs)
	}
}

// An item past its hang deadline is killed and recorded with rc 124 and the reason
// in its log; the run goes on.
func TestRunHangTimeout(t *testing.T) {
	h := newHarness(t, "0")
	h.cfg.Timeout = Timeout{Factor: 2, Min: 100 * time.Millisecond}
	res := h.run(context.Background(), h.item("hang", 0.01), h.item("sleep.after", 1))
	if len(res.Attempts) != 2 {
		t.Fatalf("%d attempts", len(res.Attempts))
	}
	a := res.Attempts[0]
	if a.Outcome != outcome.Timeout || a.RC != 124 || res.Cancelled || res.Attempts[1].Outcome != outcome.OK {
		t.Errorf("attempts %+v, cancelled %v", res.Attempts, res.Cancelled)
	}
	log, _ := os.ReadFile(h.layout.ItemLog("s", "hang"))
	if !strings.Contains(string(log), "sgpu-queue: killed after ") || !strings.Contains(string(log), "past its hang deadline of 100ms (2 × its learned weight 0.0s") {
		t.Errorf("log %q", log)
	}
	if rows := h.timings(); len(rows) != 2 || rows[0].RC != 124 || rows[0].Outcome != outcome.Timeout || !rows[0].Incomplete {
		t.Errorf("rows %+v", rows)
	}
}

// Cancelling stops dispatch and the running items: they are marked cancelled and
// incomplete, the unstarted ones never start, and the result says cancelled.
func TestRunCancel(t *testing.T) {
	h := newHarness(t, "0", "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Result)
	go func() { done <- h.run(ctx, h.item("hang.1", 1), h.item("hang.2", 1), h.item("sleep.never", 1)) }()
	for {
		data, _ := os.ReadFile(h.trace)
		if strings.Count(string(data), "start") == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	res := <-done
	if !res.Cancelled || len(res.Attempts) != 2 {
		t.Fatalf("cancelled %v, %d attempts", res.Cancelled, len(res.Attempts))
	}
	if res.Stop == nil || res.Stop.Reason != outcome.StopCancelled || res.Stop.Phase != 4 {
		t.Errorf("stop %+v", res.Stop)
	}
	for _, a := range res.Attempts {
		if a.Outcome != outcome.Cancelled || !a.Outcome.Incomplete() || a.RC != 143 {
			t.Errorf("attempt %+v", a)
		}
		if !strings.HasSuffix(h.console.String(), " cancelled\n") {
			t.Errorf("console %q", h.console.String())
		}
	}
	if strings.Contains(readFile(t, h.trace), "never") {
		t.Error("an item started after the cancel")
	}
	// Both cancelled lines count the item that will not start as not run.
	for _, l := range strings.Split(strings.TrimSuffix(h.console.String(), "\n"), "\n") {
		if !regexp.MustCompile(`  \[[12]/2 eta [^,]+, 1 not run\] cancelled$`).MatchString(l) {
			t.Errorf("console line %q, want it to count [n/2 …, 1 not run]", l)
		}
	}
	if done, total, rest := lastCount(t, h.console.String()); done != 2 || total != 2 || !strings.HasSuffix(rest, ", 1 not run") {
		t.Errorf("last count [%d/%d%s], want [2/2 …, 1 not run]", done, total, rest)
	}
	for _, r := range h.timings() {
		if !r.Incomplete || r.Outcome != outcome.Cancelled {
			t.Errorf("cancelled row not marked incomplete and cancelled: %+v", r)
		}
	}
}

// When every item fails fast everywhere (a broken build), quarantine checks each
// suspended GPU's items once and gives the GPU back: the run ends, nothing runs
// more than twice, no GPU is quarantined.
func TestRunEverythingFailsFast(t *testing.T) {
	h := newHarness(t, "0", "1", "2")
	h.cfg.Quarantine = DefaultQuarantine
	var items []expand.Item
	for i := 0; i < 12; i++ {
		items = append(items, h.item(fmt.Sprintf("fail.%02d", i), 100))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := h.run(ctx, items...)
	if res.Cancelled || res.Stop != nil || len(res.Quarantined) != 0 {
		t.Fatalf("cancelled %v (a livelock?), stop %v, quarantined %v", res.Cancelled, res.Stop, res.Quarantined)
	}
	runs := map[int]int{}
	for _, a := range res.Attempts {
		runs[a.Item]++
	}
	for i := range items {
		if runs[i] < 1 || runs[i] > 2 {
			t.Errorf("%s ran %d times", items[i].Tag, runs[i])
		}
	}
	var suspended, back int
	for _, w := range h.warnings() {
		if strings.Contains(w, "suspended: 3 items failed in a row on it") {
			suspended++
		}
	}
	back = strings.Count(h.console.String(), "back in the pool: its failed items failed on other GPUs too")
	if suspended == 0 || back != suspended {
		t.Errorf("%d suspended, %d back in the pool:\n%q\n%s", suspended, back, h.warnings(), h.console.String())
	}
}

// A GPU whose items fail with device errors is suspended after two, and quarantined
// when they run again on the healthy GPU and pass there.
func TestRunQuarantine(t *testing.T) {
	h := newHarness(t, "0", "1")
	h.cfg.Quarantine = DefaultQuarantine
	items := h.deadGPU("1", 6)
	res := h.run(context.Background(), items...)
	if len(res.Quarantined) != 1 || res.Quarantined[0].GPU != "1" || !strings.Contains(res.Quarantined[0].Reason, "hipErrorNoDevice") {
		t.Fatalf("quarantined %+v", res.Quarantined)
	}
	passed := map[int]bool{}
	for _, a := range res.Attempts {
		if a.RC == 0 {
			passed[a.Item] = true
			if a.GPU() != "0" {
				t.Errorf("passed on the dead GPU: %+v", a)
			}
		} else if a.DeviceErr == "" {
			t.Errorf("failed attempt without its device error: %+v", a)
		}
	}
	if len(passed) != 6 {
		t.Errorf("%d of 6 items passed in the end", len(passed))
	}
	if w := strings.Join(h.warnings(), "\n"); !strings.Contains(w, "gpu1 quarantined: 2 items failed in a row on it") {
		t.Errorf("warnings %q", w)
	}
}

// A .partial sidecar that outlives an item marks it incomplete: for a list item only
// its own, for an opaque item any under its prefix.
func TestRunPartialSidecars(t *testing.T) {
	h := newHarness(t, "0")
	h.cfg.JUnitPrefix = filepath.Join(h.dir, "junit") + "/"
	h.cfg.JUnitSuffix = ".xml"
	items := []expand.Item{h.item("partial.x", 1), h.item("sleep.clean", 1), h.opaque(1)}
	res := h.run(context.Background(), items...)
	got := map[string]outcome.Outcome{}
	for _, a := range res.Attempts {
		got[items[a.Item].Key()] = a.Outcome
	}
	// sleep.clean writes no XML: with a JUnit prefix set that is a no-run.
	want := map[string]outcome.Outcome{"s/partial.x": outcome.CutOff, "s/sleep.clean": outcome.NoRun, "o": outcome.CutOff}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s outcome = %v, want %v", k, got[k], v)
		}
	}
	for _, r := range h.timings() {
		if o := want[strings.TrimSuffix(r.Label+"/"+r.Item, "/whole")]; r.Outcome != o || !r.Incomplete {
			t.Errorf("row %+v, want outcome %s, incomplete", r, o)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "junit", "s", "partial.x.xml.partial")); err != nil {
		t.Errorf("the item did not see its JUnit prefix: %v", err)
	}
}

// A retried item's JUnit XML and .partial of each earlier attempt are kept in the
// log dir before the next attempt writes over them; a link is not followed.
func TestRunKeepsAttemptJUnit(t *testing.T) {
	h := newHarness(t, "0", "1")
	h.cfg.Retries = 1
	h.cfg.JUnitPrefix = filepath.Join(h.dir, "junit") + "/"
	h.cfg.JUnitSuffix = ".xml"
	h.run(context.Background(), h.item("junit.a", 1), h.item("junitlink.b", 1))
	l := h.layout
	for _, c := range []struct{ path, want string }{
		{l.ItemAttemptJUnit("s", "junit.a", 1), "<testsuite>failed</testsuite>\n"},
		{l.ItemAttemptJUnit("s", "junit.a", 1) + ".partial", `{"e":"start","nodeid":"t.py::x"}` + "\n"},
		{filepath.Join(h.dir, "junit", "s", "junit.a.xml"), "<testsuite>passed</testsuite>\n"},
	} {
		if got := readFile(t, c.path); got != c.want {
			t.Errorf("%s = %q, want %q", c.path, got, c.want)
		}
	}
	if _, err := os.Lstat(l.ItemAttemptJUnit("s", "junitlink.b", 1)); !os.IsNotExist(err) {
		t.Errorf("the XML that was a link was copied (%v)", err)
	}
	if w := h.warnings(); len(w) > 0 {
		t.Errorf("warnings %q", w)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// panicExec is an executor with a bug in it.
type panicExec struct{}

func (panicExec) Run(context.Context, executor.Command) (executor.Result, error) {
	var items []int
	return executor.Result{ExitCode: items[1]}, nil
}

// A panic in a worker goroutine comes back out of Run in the result, with the
// worker's stack and a typed stop reason, instead of ending the process.
func TestRunWorkerPanic(t *testing.T) {
	h := newHarness(t, "0")
	h.cfg.Exec = panicExec{}
	res := h.run(context.Background(), h.item("a", 1), h.item("b", 1))
	wp := res.Panic
	if wp == nil {
		t.Fatalf("no panic in the result: %+v", res)
	}
	if wp.Error() != "runtime error: index out of range [1] with length 0" || !strings.Contains(string(wp.Stack), "panicExec.Run") {
		t.Errorf("panic %q, stack:\n%s", wp.Error(), wp.Stack)
	}
	var re runtime.Error
	if !errors.As(wp, &re) {
		t.Errorf("the panic does not unwrap to its runtime.Error")
	}
	if res.Stop == nil || res.Stop.Reason != outcome.StopInternal || !strings.Contains(res.Stop.Message, "index out of range") ||
		!strings.Contains(res.Stop.Message, "1 item(s) left unrun") || res.Cancelled || len(res.Attempts) != 0 {
		t.Errorf("stop %+v, cancelled %v, attempts %+v", res.Stop, res.Cancelled, res.Attempts)
	}
}

// panicOnTag panics for the item whose TEST_FILTER is "boom", once the other item
// has started; every other item sleeps through the real executor.
type panicOnTag struct {
	started chan struct{}
	ended   chan executor.Result
}

func (p panicOnTag) Run(ctx context.Context, c executor.Command) (executor.Result, error) {
	for _, kv := range c.Env {
		if kv == "TEST_FILTER=boom" {
			<-p.started
			var items []int
			return executor.Result{ExitCode: items[1]}, nil
		}
	}
	close(p.started)
	res, err := executor.Local{Grace: 100 * time.Millisecond}.Run(ctx, executor.Command{Path: "sleep", Args: []string{"30"}, Env: []string{"PATH=/bin:/usr/bin"}})
	p.ended <- res
	return res, err
}

// Before a worker's panic leaves Run, the other running items are stopped (their
// process groups must not outlive the process) and what they recorded is kept.
func TestRunWorkerPanicStopsTheOthers(t *testing.T) {
	h := newHarness(t, "0", "1")
	p := panicOnTag{started: make(chan struct{}), ended: make(chan executor.Result, 1)}
	h.cfg.Exec = p
	res := h.run(context.Background(), h.item("sleeper", 1), h.item("boom", 1), h.item("never", 1))
	if res.Panic == nil || res.Stop == nil || res.Stop.Reason != outcome.StopInternal {
		t.Fatalf("panic %v, stop %+v", res.Panic, res.Stop)
	}
	select {
	case r := <-p.ended:
		if !r.Cancelled {
			t.Errorf("the sleeper ended without being cancelled: %+v", r)
		}
	default:
		t.Fatal("Run returned while the sleeper was still running")
	}
	if len(res.Attempts) != 1 || res.Attempts[0].Outcome != outcome.Cancelled {
		t.Fatalf("attempts %+v, want the sleeper's, cancelled", res.Attempts)
	}
	if rows := h.timings(); len(rows) != 1 || rows[0].Item != "sleeper" || rows[0].Outcome != outcome.Cancelled {
		t.Errorf("timings %+v", rows)
	}
}
