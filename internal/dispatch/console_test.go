package dispatch

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// The eta and counts of the console lines, step by step: a start, a retry, a
// dropped item (out of the total, counted as not run), a finish; a wide item's work
// counts once per GPU.
func TestProgressCounts(t *testing.T) {
	items := []expand.Item{
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "a"}, Weight: 40, Known: true}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "b"}, Weight: 20, Known: true, GPUs: 2}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "c"}, Weight: 999}},
	}
	var out strings.Builder
	p := newProgress(&out, 2, 3, items, nil)
	t0 := time.Unix(1000, 0)
	if got := p.eta(t0); got != " eta ≥40s +1 unknown" { // (40 + 2×20) / 2
		t.Errorf("queued: eta %q", got)
	}
	p.started(1, items[1], t0)
	if got := p.eta(t0.Add(5 * time.Second)); got != " eta ≥35s +1 unknown" { // (40 + 2×15) / 2
		t.Errorf("b running 5 s: eta %q", got)
	}
	p.dropped(2, items[2])
	p.finished(1, t0.Add(20*time.Second), "b", "")
	p.retried(1, items[1], true)
	p.started(0, items[0], t0.Add(20*time.Second))
	p.finished(0, t0.Add(60*time.Second), "a", " no-run")
	p.note("a note")
	want := "b  [1/2 eta 20s, 1 not run]\na  [2/3 eta 20s, 1 not run] no-run\n  a note\n"
	if out.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", out.String(), want)
	}
}

// Calibrated, the eta is the work left at the factors the run measured: the
// queued work and what is left of the running items' estimates.
func TestProgressCalibrated(t *testing.T) {
	items := []expand.Item{
		{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "a"}, Weight: 40, Known: true}},
		{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "b"}, Weight: 20, Known: true, GPUs: 2}},
		{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "c"}, Weight: 999}},
		{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "d"}, Weight: 10, Known: true}},
	}
	sched := make([]schedule.Item, len(items))
	for i, it := range items {
		sched[i] = it.Item
	}
	cal := schedule.NewCalibration(sched)
	var out strings.Builder
	p := newProgress(&out, 2, 4, items, cal)
	t0 := time.Unix(1000, 0)
	p.started(3, items[3], t0)
	for k := 0; k < 3; k++ {
		cal.Observe(3, 5) // half its weight
	}
	if got := p.eta(t0); got != " eta ≥22s +1 unknown" { // (40 + 2×20 + 10) × 0.5 / 2
		t.Errorf("eta %q", got)
	}
	p.started(1, items[1], t0)
	if got := p.eta(t0.Add(4 * time.Second)); got != " eta ≥16s +1 unknown" { // (20 + 2×(10−4) + (5−4)) / 2
		t.Errorf("b running 4 s: eta %q", got)
	}
}

// Lines printed by many workers at once come out whole and in count order: a
// line's count and its print are one step.
func TestProgressLinesInOrder(t *testing.T) {
	const n = 50
	items := make([]expand.Item, n)
	for i := range items {
		items[i] = expand.Item{Item: schedule.Item{ItemID: record.ItemID{Tag: fmt.Sprint(i)}, Weight: 1, Known: true}}
	}
	var out strings.Builder
	p := newProgress(&out, 4, n, items, nil)
	var wg sync.WaitGroup
	for i := range items {
		p.started(i, items[i], time.Now())
	}
	for i := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.finished(i, time.Now(), "line", "")
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), n, out.String())
	}
	for i, l := range lines {
		if prefix := fmt.Sprintf("line  [%d/%d eta ", i+1, n); !strings.HasPrefix(l, prefix) {
			t.Errorf("line %d = %q, want it to start %q", i, l, prefix)
		}
	}
}

// Attempts that will not be made leave the total for "not run": a queued item
// dropped (quarantine left too few GPUs), a retry that could not be queued, what a
// stop leaves queued (its work leaves the eta). The last line reads M/M; close
// prints the count again only when it went stale after the last line.
func TestProgressNotRun(t *testing.T) {
	items := []expand.Item{
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "a"}, Weight: 10, Known: true}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "b"}, Weight: 10, Known: true}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "c"}, Weight: 999}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "d"}, Weight: 10, Known: true, GPUs: 2}},
	}
	var out strings.Builder
	p := newProgress(&out, 2, 4, items, nil)
	t0 := time.Unix(1000, 0)
	p.started(0, items[0], t0)
	p.dropped(3, items[3])
	p.finished(0, t0.Add(10*time.Second), "a", "") // b and c queued: 10 s on 2 GPUs
	p.retried(1, items[1], false)
	p.started(1, items[1], t0.Add(10*time.Second))
	p.stop(1) // c
	p.stop(1) // counted once
	p.finished(1, t0.Add(15*time.Second), "b", "")
	p.close()
	want := "a  [1/3 eta ≥5.0s +1 unknown, 1 not run]\nb  [2/2 eta 0.0s, 3 not run]\n"
	if out.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", out.String(), want)
	}

	// Dropped after the last line: close says so.
	out.Reset()
	p = newProgress(&out, 2, 2, items[:2], nil)
	p.started(0, items[0], t0)
	p.finished(0, t0.Add(10*time.Second), "a", "")
	p.dropped(1, items[1])
	p.close()
	if want := "a  [1/2 eta 5.0s]\n  [1/1, 1 not run]\n"; out.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", out.String(), want)
	}
}

// The eta spreads the work left over the GPUs quarantine left, not the pool the
// run started with.
func TestProgressEtaOverGPUsLeft(t *testing.T) {
	items := []expand.Item{
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "a"}, Weight: 60, Known: true}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "b"}, Weight: 60, Known: true}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "c"}, Weight: 60, Known: true}},
		{Item: schedule.Item{ItemID: record.ItemID{Tag: "d"}, Weight: 60, Known: true}},
	}
	var out strings.Builder
	p := newProgress(&out, 4, 4, items, nil)
	t0 := time.Unix(1000, 0)
	if got := p.eta(t0); got != " eta 60s" {
		t.Errorf("4 GPUs: eta %q, want 60s", got)
	}
	p.shrank(3)
	if got := p.eta(t0); got != " eta 80s" {
		t.Errorf("3 GPUs left: eta %q, want 80s", got)
	}
	p.shrank(0) // every GPU out: no division by zero
	if got := p.eta(t0); got != " eta 240s" {
		t.Errorf("no GPU left: eta %q", got)
	}
}

// countRE is the count of a console line: "[done/total", the rest to "]".
var countRE = regexp.MustCompile(`\[(\d+)/(\d+)([^\]]*)\]`)

// lastCount is the count of the console's last line holding one.
func lastCount(t *testing.T, console string) (done, total int, rest string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(console, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := countRE.FindStringSubmatch(lines[i]); m != nil {
			done, _ = strconv.Atoi(m[1])
			total, _ = strconv.Atoi(m[2])
			return done, total, m[3]
		}
	}
	t.Fatalf("no count on the console:\n%s", console)
	return 0, 0, ""
}

// An item's name in the retry, hold and unfit lines is quoted as the item lines
// quote its tag (textfmt.Printable): a tag with spaces, a newline or an escape
// sequence neither breaks the line in two nor reaches the terminal raw.
func TestConsoleQuotesHostileTags(t *testing.T) {
	const hostile = " a b\nc\x1b[2J"
	for _, tt := range []struct {
		name, want string
		gpus       []string
		run        func(h *harness) *Result
	}{
		{"retry", `  retrying "s/flaky a b\nc\x1b[2J" (attempt 1 of 2 failed with rc=1 on gpu`, []string{"0", "1"}, func(h *harness) *Result {
			h.cfg.Retries = 1
			return h.run(context.Background(), h.item("flaky"+hostile, 1))
		}},
		{"hold", `  holding GPUs for "m/sleep.w a b\nc\x1b[2J" (2 GPUs) since t+`, []string{"0", "1"}, func(h *harness) *Result {
			// One of two GPUs busy: GPUs are held for the 2-GPU item.
			return h.runBlocks(context.Background(), h.item("sleep.1", 1), h.wide("sleep.w"+hostile, 1, 2))
		}},
		{"unfit", `warning: "m/sleep.all a b\nc\x1b[2J" is not run: it needs 3 GPUs`, []string{"0", "1", "2"}, func(h *harness) *Result {
			h.cfg.Quarantine = DefaultQuarantine
			items := h.deadGPU("2", 8)
			return h.runBlocks(context.Background(), append(items, h.wide("sleep.all"+hostile, 1, 3))...)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.gpus...)
			tt.run(h)
			console := h.console.String()
			for _, w := range h.warnings() {
				console += "warning: " + w + "\n"
			}
			if !strings.Contains(console, tt.want) {
				t.Errorf("console lacks %q:\n%s", tt.want, console)
			}
			for _, l := range strings.Split(strings.TrimSuffix(console, "\n"), "\n") {
				if !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "warning: ") || strings.ContainsRune(l, '\x1b') {
					t.Errorf("a line broken or raw: %q", l)
				}
			}
		})
	}
}
