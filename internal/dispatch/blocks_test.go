package dispatch

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// wide is a list item of suite "m" (a multi-GPU suite) taking gpus GPUs.
func (h *harness) wide(tag string, weight float64, gpus int) expand.Item {
	it := h.item(tag, weight)
	it.Label, it.GPUs = "m", gpus
	it.Suite = config.Suite{Label: "m", LogFile: "m.log", Mode: config.List, Path: h.script, Options: config.Options{GPUs: gpus}}
	return adapted(it)
}

// runBlocks dispatches items in the given order through the block scheduler.
func (h *harness) runBlocks(ctx context.Context, items ...expand.Item) *Result {
	h.t.Helper()
	plan := make([]schedule.Item, len(items))
	order := make([]int, len(items))
	for i, it := range items {
		plan[i], order[i] = it.Item, i
	}
	b, err := schedule.NewBlocks(plan, order, len(h.cfg.GPUs))
	if err != nil {
		h.t.Fatal(err)
	}
	return Run(ctx, h.cfg, items, b)
}

// spans are the trace's items by GPU id: [start, end) in trace order, a multi-GPU
// item on each of its ids; ids are the GPUs each tag saw, per start.
func (h *harness) spans() (byGPU map[string][][2]int, ids map[string][][]string) {
	byGPU, ids = map[string][][2]int{}, map[string][][]string{}
	open := map[string]int{}
	for n, e := range h.traceEvents() {
		kind, tag, gpus := e[0], e[1], strings.Split(e[2], ",")
		switch kind {
		case "start":
			open[tag] = n
			ids[tag] = append(ids[tag], gpus)
		case "end":
			for _, g := range gpus {
				byGPU[g] = append(byGPU[g], [2]int{open[tag], n})
			}
		}
	}
	return byGPU, ids
}

// Items of 1, 2, 3 and 4 GPUs on 4 GPUs: each takes its count at once, pinned by the
// ids joined by ","; no GPU runs two items at once; the timings rows and console
// lines name every GPU of an item.
func TestRunBlocks(t *testing.T) {
	h := newHarness(t, "0", "1", "2", "3")
	items := []expand.Item{
		h.wide("sleep.all", 0.05, 4), h.wide("sleep.three", 0.05, 3),
		h.wide("sleep.pair.a", 0.05, 2), h.wide("sleep.pair.b", 0.05, 2),
	}
	for i := 0; i < 6; i++ {
		items = append(items, h.item(fmt.Sprintf("sleep.one.%d", i), 0.05))
	}
	res := h.runBlocks(context.Background(), items...)
	if res.Stop != nil || len(res.Attempts) != len(items) || len(res.Unfit) != 0 {
		t.Fatalf("stop %v, %d attempts, unfit %v", res.Stop, len(res.Attempts), res.Unfit)
	}
	byGPU, ids := h.spans()
	for g, ss := range byGPU {
		sort.Slice(ss, func(i, j int) bool { return ss[i][0] < ss[j][0] })
		for i := 1; i < len(ss); i++ {
			if ss[i][0] < ss[i-1][1] {
				t.Errorf("gpu%s runs two items at once: %v", g, ss)
			}
		}
	}
	for _, it := range items {
		seen := ids[it.Tag]
		if len(seen) != 1 {
			t.Errorf("%s started %d times", it.Tag, len(seen))
			continue
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(seen[0])))
		if len(distinct) != it.Width() || len(seen[0]) != it.Width() {
			t.Errorf("%s saw HIP_VISIBLE_DEVICES=%s, want %d distinct ids", it.Tag, strings.Join(seen[0], ","), it.Width())
		}
	}
	rows := map[string]string{}
	for _, r := range h.timings() {
		rows[r.Item] = r.GPU()
	}
	for _, a := range res.Attempts {
		it := items[a.Item]
		if rows[it.Tag] != a.GPU() || a.GPU() != strings.Join(ids[it.Tag][0], ",") || len(a.Slots) != it.Width() {
			t.Errorf("%s: attempt on %q (slots %v), row %q, trace %v", it.Tag, a.GPU(), a.Slots, rows[it.Tag], ids[it.Tag])
		}
		if !strings.Contains(h.console.String(), fmt.Sprintf("] gpu%s t+", a.GPU())) {
			t.Errorf("no console line names gpu%s:\n%s", a.GPU(), h.console.String())
		}
	}
	if rows["sleep.all"] != "0,1,2,3" {
		t.Errorf("the 4-GPU item ran on %q", rows["sleep.all"])
	}
}

// The multi-GPU item's environment: its suite's switch, and its ids in every pin
// variable.
func TestBlockEnv(t *testing.T) {
	h := newHarness(t, "0", "1", "2", "3")
	h.cfg.AlsoPin = []string{"CUDA_VISIBLE_DEVICES"}
	d := &dispatcher{cfg: h.cfg}
	for _, c := range []struct {
		it         expand.Item
		sgpu, mgpu string
	}{{h.wide("x", 1, 2), "", "1"}, {h.item("y", 1), "1", ""}} {
		cmd, _, err := d.command(c.it, "2,3", io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		e := hook.Env(cmd.Env)
		for name, want := range map[string]string{"HIP_VISIBLE_DEVICES": "2,3", "CUDA_VISIBLE_DEVICES": "2,3", "TEST_SGPU": c.sgpu, "TEST_MGPU": c.mgpu} {
			if got, ok := e.Get(name); !ok || got != want {
				t.Errorf("%s: %s=%q (set %v), want %q", c.it.Key(), name, got, ok, want)
			}
		}
	}
}

// A multi-GPU item's failures are evidence about its GPUs together: a run of them,
// failing fast, suspends and quarantines no GPU (single-GPU items failing that way
// would: TestRunEverythingFailsFast).
func TestRunBlockFailuresNeverQuarantine(t *testing.T) {
	h := newHarness(t, "0", "1", "2")
	h.cfg.Quarantine = Quarantine{Threshold: 2, Fast: 0.25, FastUnknown: 30 * time.Second}
	var items []expand.Item
	for i := 0; i < 6; i++ {
		items = append(items, h.wide(fmt.Sprintf("fail.%d", i), 100, 2))
	}
	res := h.runBlocks(context.Background(), items...)
	if len(res.Quarantined) != 0 || res.Stop != nil || len(res.Attempts) != 6 {
		t.Fatalf("quarantined %v, stop %v, %d attempts", res.Quarantined, res.Stop, len(res.Attempts))
	}
	for _, w := range h.warnings() {
		if strings.Contains(w, "suspended") || strings.Contains(w, "quarantined") {
			t.Errorf("warning %q", w)
		}
	}
}

// A failed 2-GPU item is retried on other GPUs when the pool has them.
func TestRunBlockRetry(t *testing.T) {
	h := newHarness(t, "0", "1", "2", "3")
	h.cfg.Retries = 1
	res := h.runBlocks(context.Background(), h.wide("flaky.pair", 1, 2), h.item("sleep.x", 1))
	var tries []Attempt
	for _, a := range res.Attempts {
		if a.Item == 0 {
			tries = append(tries, a)
		}
	}
	if len(tries) != 2 || tries[0].Outcome != outcome.Failed || tries[1].Outcome != outcome.OK {
		t.Fatalf("attempts %+v", tries)
	}
	for _, s := range tries[1].Slots {
		if slices.Contains(tries[0].Slots, s) {
			t.Errorf("retry on gpus %s, the first attempt failed on %s", tries[1].GPU(), tries[0].GPU())
		}
	}
	if !strings.Contains(h.console.String(), "retrying m/flaky.pair (attempt 1 of 2 failed with rc=1 on gpu"+tries[0].GPU()+")") {
		t.Errorf("console:\n%s", h.console.String())
	}
}

// A block past its hang deadline is killed like any item; a cancel stops the
// running block and nothing starts after it.
func TestRunBlockTimeoutAndCancel(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		h := newHarness(t, "0", "1")
		h.cfg.Timeout = Timeout{Factor: 2, Min: 100 * time.Millisecond}
		res := h.runBlocks(context.Background(), h.wide("hang.pair", 0.01, 2), h.item("sleep.after", 1))
		if len(res.Attempts) != 2 || res.Attempts[0].Outcome != outcome.Timeout || res.Attempts[0].GPU() != "0,1" || res.Attempts[0].RC != 124 {
			t.Errorf("attempts %+v", res.Attempts)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		h := newHarness(t, "0", "1", "2")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan *Result)
		go func() { done <- h.runBlocks(ctx, h.wide("hang.three", 1, 3), h.item("sleep.never", 1)) }()
		for {
			if data, _ := os.ReadFile(h.trace); strings.Contains(string(data), "start") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		res := <-done
		if !res.Cancelled || len(res.Attempts) != 1 || res.Attempts[0].Outcome != outcome.Cancelled || res.Attempts[0].GPU() != "0,1,2" {
			t.Fatalf("cancelled %v, attempts %+v", res.Cancelled, res.Attempts)
		}
		if strings.Contains(readFile(t, h.trace), "never") {
			t.Error("an item started after the cancel")
		}
	})
}

// Quarantine takes a GPU out of the pool: an item that needs more GPUs than are left
// is reported unfit (its warning, Result.Unfit), not waited for.
func TestRunUnfitAfterQuarantine(t *testing.T) {
	h := newHarness(t, "0", "1", "2")
	h.cfg.Quarantine = DefaultQuarantine
	items := h.deadGPU("2", 8) // a single-GPU item there dies at once
	items = append(items, h.wide("sleep.all", 1, 3))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := h.runBlocks(ctx, items...)
	if ctx.Err() != nil {
		t.Fatal("the run hung")
	}
	if len(res.Quarantined) != 1 || res.Quarantined[0].GPU != "2" {
		t.Fatalf("quarantined %+v", res.Quarantined)
	}
	if len(res.Unfit) != 1 || res.Unfit[0] != (record.Unfit{ItemID: record.ItemID{Label: "m", Tag: "sleep.all"}, GPUs: 3, Pool: 2}) {
		t.Errorf("unfit %+v", res.Unfit)
	}
	for _, a := range res.Attempts {
		if a.Item == len(items)-1 {
			t.Errorf("the 3-GPU item ran: %+v", a)
		}
	}
	if w := strings.Join(h.warnings(), "\n"); !strings.Contains(w, "m/sleep.all is not run: it needs 3 GPUs and quarantine left 2 in the pool (gpu2 out)") {
		t.Errorf("warnings:\n%s", w)
	}
	if res.Stop != nil {
		t.Errorf("stop %+v", res.Stop)
	}
	// The count leaves the unfit item out and says so: the last line reads M/M.
	if done, total, rest := lastCount(t, h.console.String()); done != len(res.Attempts) || total != done || !strings.HasSuffix(rest, ", 1 not run") {
		t.Errorf("last count [%d/%d%s], want [%d/%d …, 1 not run]:\n%s", done, total, rest, len(res.Attempts), len(res.Attempts), h.console.String())
	}
}

// A 2-GPU item that failed is retried after quarantine took one of the GPUs it
// failed on: on the GPUs that remain when they can take it (never the quarantined
// one), else it is reported unfit, "is not run again", and the count says so; the
// run never hangs.
func TestRunBlockRetryAfterQuarantine(t *testing.T) {
	for _, tt := range []struct {
		gpus   []string
		unfit  bool
		warned string
	}{
		{gpus: []string{"0", "1", "2", "3"}},
		{gpus: []string{"0", "1"}, unfit: true,
			warned: "m/flaky.pair is not run again: it needs 2 GPUs and quarantine left 1 in the pool (gpu1 out)"},
	} {
		t.Run(fmt.Sprintf("%d GPUs", len(tt.gpus)), func(t *testing.T) {
			h := newHarness(t, tt.gpus...)
			h.cfg.Retries = 1
			h.cfg.Quarantine = DefaultQuarantine
			// A single-GPU item on gpu1 dies at once.
			items := append([]expand.Item{h.wide("flaky.pair", 1, 2)}, h.deadGPU("1", 8)...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res := h.runBlocks(ctx, items...)
			if ctx.Err() != nil || res.Stop != nil {
				t.Fatalf("hung %v, stop %+v", ctx.Err() != nil, res.Stop)
			}
			if len(res.Quarantined) != 1 || res.Quarantined[0].GPU != "1" {
				t.Fatalf("quarantined %+v", res.Quarantined)
			}
			checkPairRetry(t, h, res, tt.unfit, tt.warned)
		})
	}
}

// checkPairRetry checks TestRunBlockRetryAfterQuarantine's run: the pair's
// attempts (item 0), its unfit record and warning, and the console's last count.
func checkPairRetry(t *testing.T, h *harness, res *Result, unfit bool, warned string) {
	t.Helper()
	var pair []Attempt
	for _, a := range res.Attempts {
		if a.Item == 0 {
			pair = append(pair, a)
		}
	}
	notRun := ""
	if unfit {
		notRun = ", 1 not run"
		if len(pair) != 1 || len(res.Unfit) != 1 || res.Unfit[0].Tag != "flaky.pair" {
			t.Errorf("pair attempts %+v, unfit %+v", pair, res.Unfit)
		}
		if w := strings.Join(h.warnings(), "\n"); !strings.Contains(w, warned) {
			t.Errorf("warnings lack %q:\n%s", warned, w)
		}
	} else {
		if len(pair) != 2 || pair[1].Outcome != outcome.OK || len(res.Unfit) != 0 {
			t.Fatalf("pair attempts %+v, unfit %+v", pair, res.Unfit)
		}
		if slices.Contains(pair[1].Slots, 1) || len(pair[1].Slots) != 2 {
			t.Errorf("the retry ran on gpu%s, with gpu1 quarantined", pair[1].GPU())
		}
	}
	if done, total, rest := lastCount(t, h.console.String()); done != len(res.Attempts) || total != done || !strings.HasSuffix(rest, notRun) || !unfit && strings.Contains(rest, "not run") {
		t.Errorf("last count [%d/%d%s], want [%d/%d …%s]:\n%s", done, total, rest, len(res.Attempts), len(res.Attempts), notRun, h.console.String())
	}
}

// noRequeue is a scheduler whose pool shrank under a running item: its retry no
// longer fits (Requeue reports false).
type noRequeue struct{ schedule.Scheduler }

func (noRequeue) Requeue(int, []int) bool { return false }

// A retry that no longer fits the pool is reported unfit, not queued, and the run
// ends.
func TestRunRetryUnfit(t *testing.T) {
	h := newHarness(t, "0", "1")
	h.cfg.Retries = 2
	items := []expand.Item{h.wide("fail.pair", 1, 2)}
	b, err := schedule.NewBlocks([]schedule.Item{items[0].Item}, []int{0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := Run(ctx, h.cfg, items, noRequeue{b})
	if ctx.Err() != nil || len(res.Attempts) != 1 || res.Stop != nil {
		t.Fatalf("hung %v, %d attempts, stop %v", ctx.Err() != nil, len(res.Attempts), res.Stop)
	}
	if len(res.Unfit) != 1 || res.Unfit[0].Tag != "fail.pair" || res.Unfit[0].GPUs != 2 {
		t.Errorf("unfit %+v", res.Unfit)
	}
	if w := strings.Join(h.warnings(), "\n"); !strings.Contains(w, "m/fail.pair is not run again: it needs 2 GPUs") {
		t.Errorf("warnings %q", w)
	}
	if strings.Contains(h.console.String(), "retrying") {
		t.Errorf("a retry that was not queued was announced:\n%s", h.console.String())
	}
}
