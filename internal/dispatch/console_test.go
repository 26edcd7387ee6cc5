package dispatch

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

// The eta and counts of the console lines, step by step: a start, a retry, a
// dropped item, a finish; a wide item's work counts once per GPU.
func TestProgressCounts(t *testing.T) {
	items := []Item{
		{Item: schedule.Item{Tag: "a", Weight: 40, Known: true}},
		{Item: schedule.Item{Tag: "b", Weight: 20, Known: true, GPUs: 2}},
		{Item: schedule.Item{Tag: "c", Weight: 999}},
	}
	var out strings.Builder
	p := newProgress(&out, 2, 3, items)
	t0 := time.Unix(1000, 0)
	if got := p.eta(t0); got != " eta ≥40s +1 unknown" { // (40 + 2×20) / 2
		t.Errorf("queued: eta %q", got)
	}
	p.started(1, items[1], t0)
	if got := p.eta(t0.Add(5 * time.Second)); got != " eta ≥35s +1 unknown" { // (40 + 2×15) / 2
		t.Errorf("b running 5 s: eta %q", got)
	}
	p.dropped(items[2])
	p.finished(1, t0.Add(20*time.Second), "b", "")
	p.retried(items[1])
	p.started(0, items[0], t0.Add(20*time.Second))
	p.finished(0, t0.Add(60*time.Second), "a", " no-run")
	p.note("a note")
	want := "b  [1/3 eta 20s]\na  [2/4 eta 20s] no-run\n  a note\n"
	if out.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", out.String(), want)
	}
}

// Lines printed by many workers at once come out whole and in count order: a
// line's count and its print are one step.
func TestProgressLinesInOrder(t *testing.T) {
	const n = 50
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Item: schedule.Item{Tag: fmt.Sprint(i), Weight: 1, Known: true}}
	}
	var out strings.Builder
	p := newProgress(&out, 4, n, items)
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
