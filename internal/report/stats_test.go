package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Single-GPU items in hindsight are dispatched longest first (LPT) on the measured
// durations.
func TestHindsightLPT(t *testing.T) {
	tests := []struct {
		name string
		durs []float64
		n    int
		want float64
	}{
		{"no items", nil, 4, 0},
		{"no GPUs", []float64{1, 2}, 0, 0},
		{"one GPU sums", []float64{1, 2, 3}, 1, 6},
		{"more GPUs than items", []float64{5, 1}, 4, 5},
		{"perfect split", []float64{4, 3, 3, 2}, 2, 6},
		// The textbook case where LPT is not optimal: 3+3 | 2+2+2 is 6, LPT gives 7.
		{"LPT worse than optimum", []float64{3, 3, 2, 2, 2}, 2, 7},
		{"order does not matter", []float64{2, 3, 2, 3, 2}, 2, 7},
		{"largest binds", []float64{10, 1, 1, 1}, 2, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hindsight(tt.durs, nil, tt.n); got != tt.want {
				t.Errorf("hindsight(%v, %d) = %v, want %v", tt.durs, tt.n, got, tt.want)
			}
		})
	}
}

// row builds an attempt of suite "s" (item "whole": of the opaque suite "op"),
// ok for rc 0, else failed; est "" is an item with no estimate.
func row(label, item, gpu string, start, secs float64, rc int, est string) record.Attempt {
	id := record.ItemID{Label: label, Tag: item}
	if label == "op" && item == record.Whole {
		id.Tag = ""
	}
	a := record.Attempt{ItemID: id, GPUs: []string{gpu}, Secs: secs, RC: rc, StartOff: start, EndOff: start + secs, Outcome: outcome.OK}
	if rc != 0 {
		a.Outcome = outcome.Failed
	}
	if est != "" {
		a.Estimate, a.Known = mustFloat(est), true
	}
	return a
}

// mkRun builds a run of list suite "s" (and opaque "op") whose queue holds every
// row's item plus the extra queued tags, which never ran.
func mkRun(gpus []string, rows []record.Attempt, extra ...string) *record.Run {
	r := &record.Run{Meta: record.Meta{
		GPUs:          gpus,
		Finished:      true,
		DefaultWeight: 999999,
		Suites:        []record.MetaSuite{{Label: "s", LogFile: "s.log", Mode: "list"}, {Label: "op", LogFile: "op.log", Mode: "opaque"}},
	}, Attempts: rows}
	for _, t := range rows {
		w := 999999.0
		if t.Known {
			w = t.Estimate
		}
		r.Queue = append(r.Queue, record.QueueRow{ItemID: t.ItemID, Weight: w})
	}
	for _, tag := range extra {
		r.Queue = append(r.Queue, record.QueueRow{ItemID: record.ItemID{Label: "s", Tag: tag}, Weight: 5})
	}
	return r
}

func mustFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCompute(t *testing.T) {
	tests := []struct {
		name  string
		run   *record.Run
		check func(t *testing.T, s Stats)
	}{
		{"empty run", mkRun([]string{"0", "1"}, nil), func(t *testing.T, s Stats) {
			if s.GPUs != 2 || s.Work != 0 || s.Wall != 0 || s.Bound != 0 || s.Utilisation != 0 || s.Quality != 0 || !s.Passed {
				t.Errorf("%+v", s)
			}
		}},
		{"work/N binds, LPT-optimal order", mkRun([]string{"0", "1"}, []record.Attempt{
			row("s", "a", "0", 0, 4, 0, "4"), row("s", "b", "1", 0, 3, 0, "3"),
			row("s", "c", "1", 3, 3, 0, "3"), row("s", "d", "0", 4, 2, 0, "2"),
		}), func(t *testing.T, s Stats) {
			if s.Work != 12 || s.Wall != 6 || s.Bound != 6 || s.AboveBound != 0 || s.Utilisation != 1 {
				t.Errorf("work %v wall %v bound %v above %v util %v", s.Work, s.Wall, s.Bound, s.AboveBound, s.Utilisation)
			}
			if s.Split.Before != 6 || s.Quality != 1 || s.Split.Binding || s.Split.Pays {
				t.Errorf("hindsight %v quality %v split %+v", s.Split.Before, s.Quality, s.Split)
			}
			if s.Largest.Key() != "s/a" || s.Largest.Secs != 4 {
				t.Errorf("largest %q %v", s.Largest.Key(), s.Largest.Secs)
			}
			if s.Gaps.Count != 2 || s.Gaps.Total != 0 {
				t.Errorf("gaps %+v", s.Gaps)
			}
		}},
		{"run beat plain LPT: quality below 1", mkRun([]string{"0", "1"}, []record.Attempt{
			row("s", "a", "0", 0, 3, 0, "3"), row("s", "b", "0", 3, 3, 0, "3"),
			row("s", "c", "1", 0, 2, 0, "2"), row("s", "d", "1", 2, 2, 0, "2"), row("s", "e", "1", 4, 2, 0, "2"),
		}), func(t *testing.T, s Stats) {
			if s.Split.Before != 7 || !near(s.Quality, 6.0/7) {
				t.Errorf("hindsight %v quality %v", s.Split.Before, s.Quality)
			}
		}},
		{"largest binds: splitting pays", mkRun([]string{"0", "1"}, []record.Attempt{
			row("op", "whole", "0", 0, 600, 0, "600"), row("s", "b", "1", 0, 60, 0, "60"), row("s", "c", "1", 60, 60, 0, "60"),
		}), func(t *testing.T, s Stats) {
			if s.Bound != 600 || !s.Split.Binding || !s.Split.Pays || s.Split.Before != 600 || s.Split.After != 360 || s.Split.Saving != 240 {
				t.Errorf("bound %v split %+v", s.Bound, s.Split)
			}
			if s.Largest.Key() != "op" {
				t.Errorf("an opaque item's key is its label, got %q", s.Largest.Key())
			}
			if s.PerGPU[1].Idle != 480 || s.PerGPU[0].Idle != 0 || s.PerGPU[1].LastEnd != 120 {
				t.Errorf("per GPU %+v", s.PerGPU)
			}
		}},
		{"largest binds, but saves seconds: splitting does not pay", mkRun([]string{"0", "1"}, []record.Attempt{
			row("op", "whole", "0", 0, 0.3, 0, "0.3"), row("s", "b", "1", 0, 0.05, 0, "0.05"),
		}), func(t *testing.T, s Stats) {
			if !s.Split.Binding || s.Split.Pays || s.Split.Saving <= 0 {
				t.Errorf("a 0.3 s item: split %+v, want binding, a saving, and no advice to split it", s.Split)
			}
		}},
		{"many equal items: splitting does not pay", mkRun([]string{"0", "1"}, []record.Attempt{
			row("s", "a", "0", 0, 5, 0, "5"), row("s", "b", "1", 0, 5, 0, "5"),
			row("s", "c", "0", 5, 5, 0, "5"), row("s", "d", "1", 5, 5, 0, "5"),
		}), func(t *testing.T, s Stats) {
			if s.Split.Pays || s.Split.Binding || s.Split.After != 10 {
				t.Errorf("split %+v", s.Split)
			}
		}},
		{"failures, unknown, gaps, a GPU outside the pool", mkRun([]string{"0", "1"}, []record.Attempt{
			row("s", "a", "0", 0.5, 2, 0, ""), row("s", "b", "0", 2.6, 1, 3, "4"), row("s", "c", "7", 0, 1, 0, "1"),
		}), func(t *testing.T, s Stats) {
			if s.Passed || s.Failed != 1 || s.Items != 3 || s.Finished != 3 {
				t.Errorf("passed %v failed %d items %d finished %d", s.Passed, s.Failed, s.Items, s.Finished)
			}
			if len(s.Unknown) != 1 || s.Unknown[0].Key() != "s/a" || len(s.Misses) != 2 || s.Misses[0].Key() != "s/b" || miss(s.Misses[0]) != -3 {
				t.Errorf("unknown %+v misses %+v", s.Unknown, s.Misses)
			}
			if s.Gaps.Count != 1 || !near(s.Gaps.Max, 0.1) {
				t.Errorf("gaps %+v", s.Gaps)
			}
			var gpus []string
			for _, g := range s.PerGPU {
				gpus = append(gpus, g.GPU)
			}
			if strings.Join(gpus, ",") != "0,1,7" || s.GPUs != 2 {
				t.Errorf("GPUs %v (%d)", gpus, s.GPUs)
			}
			if s.PerGPU[0].Failed != 1 || len(s.PerGPU[0].Rows) != 2 || s.Last.Key() != "s/b" {
				t.Errorf("gpu0 %+v last %q", s.PerGPU[0], s.Last.Key())
			}
		}},
		{"cancelled: queued items without a row", func() *record.Run {
			r := mkRun([]string{"0"}, []record.Attempt{row("s", "a", "0", 0, 2, 143, "3")}, "never1", "never2")
			r.Meta.Cancelled = true
			r.Attempts[0].Outcome = outcome.Cancelled
			return r
		}(), func(t *testing.T, s Stats) {
			if s.Passed || s.Failed != 3 || s.Finished != 1 || len(s.Missing) != 2 || s.Missing[0].Key() != "s/never1" || !s.Missing[0].Known {
				t.Errorf("passed %v failed %d finished %d missing %+v", s.Passed, s.Failed, s.Finished, s.Missing)
			}
			if s.Missing[0].Note != "cancelled before it started" {
				t.Errorf("note %q", s.Missing[0].Note)
			}
		}},
		{"interrupted: run.json never completed", func() *record.Run {
			r := mkRun([]string{"0"}, []record.Attempt{row("s", "a", "0", 0, 2, 0, "2")}, "later")
			r.Meta.Finished = false
			return r
		}(), func(t *testing.T, s Stats) {
			if s.Passed || len(s.Missing) != 1 || s.Missing[0].Note != "never finished" {
				t.Errorf("passed %v missing %+v", s.Passed, s.Missing)
			}
		}},
		{"run.json wall beyond the last row", func() *record.Run {
			r := mkRun([]string{"0"}, []record.Attempt{row("s", "a", "0", 0, 2, 0, "2")})
			r.Meta.Wall = 4
			return r
		}(), func(t *testing.T, s Stats) {
			if s.Wall != 4 || s.Utilisation != 0.5 || s.AboveBound != 1 || s.Quality != 2 {
				t.Errorf("wall %v util %v above %v quality %v", s.Wall, s.Utilisation, s.AboveBound, s.Quality)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, Compute(tt.run, verdict.Decide(tt.run)))
		})
	}
}

func TestMissOrder(t *testing.T) {
	r := mkRun([]string{"0"}, []record.Attempt{
		row("s", "small", "0", 0, 1, 0, "3"),   // −2
		row("s", "big", "0", 1, 50, 0, "40"),   // +10
		row("s", "slower", "0", 51, 9, 0, "1"), // +8
		row("s", "same", "0", 60, 5, 0, "5"),   // 0
		row("s", "tie", "0", 65, 3, 0, "1"),    // +2, ties "small" by |miss|: key order
	})
	s := Compute(r, verdict.Decide(r))
	var keys []string
	for _, m := range s.Misses {
		keys = append(keys, m.Key())
	}
	if got := strings.Join(keys, " "); got != "s/big s/slower s/small s/tie s/same" {
		t.Errorf("order %s", got)
	}
	if s.Estimated != 50 || len(s.Misses) != 5 {
		t.Errorf("estimated %v known %d", s.Estimated, len(s.Misses))
	}
	if rel := relMiss(s.Misses[1]); rel != 8 {
		t.Errorf("relative miss %v", rel)
	}
	if rel := relMiss(verdict.Item{Result: record.Result{Seconds: 1}}); !math.IsInf(rel, 1) {
		t.Errorf("zero estimate: %v", rel)
	}
}

func TestFit(t *testing.T) {
	rows := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = strings.Repeat("x", size-1) + "\n"
		}
		return out
	}
	tests := []struct {
		name     string
		blocks   func() []*block
		limit    int
		wantKeep []int
	}{
		{"fits: nothing cut", func() []*block {
			return []*block{fixed("head\n"), table("", rows(10, 10), "", "rows")}
		}, 1000, []int{0, 10}},
		// 1105 bytes: the first round may cut 50 rows (half), which with the note
		// (~117 bytes) leaves 722; the second cuts 3 more.
		{"longest table cut first", func() []*block {
			return []*block{fixed("head\n"), table("", rows(100, 10), "", "rows"), table("", rows(10, 10), "", "rows")}
		}, 700, []int{0, 47, 10}},
		// Rounds alternate between the two (each the longest in turn): 20, 20, 10, 10, 4.
		{"cuts spread once the longest shrank", func() []*block {
			return []*block{table("", rows(40, 10), "", "rows"), table("", rows(40, 10), "", "rows")}
		}, 400, []int{6, 10}},
		{"fixed blocks are never cut", func() []*block {
			return []*block{fixed(strings.Repeat("h", 500)), table("", rows(10, 10), "", "rows")}
		}, 100, []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs := tt.blocks()
			fit(bs, tt.limit)
			total := 0
			for i, b := range bs {
				if b.keep != tt.wantKeep[i] {
					t.Errorf("block %d keeps %d rows, want %d", i, b.keep, tt.wantKeep[i])
				}
				total += b.size()
				var sb strings.Builder
				b.write(&sb)
				if sb.Len() != b.size() {
					t.Errorf("block %d writes %d bytes, size says %d", i, sb.Len(), b.size())
				}
			}
			if total > tt.limit && tt.wantKeep[len(tt.wantKeep)-1] != 0 {
				t.Errorf("%d bytes over the limit %d", total, tt.limit)
			}
		})
	}
}

func TestHeadline(t *testing.T) {
	done, cancelled, interrupted := record.Meta{Finished: true}, record.Meta{Finished: true, Cancelled: true}, record.Meta{}
	tests := []struct {
		name string
		m    record.Meta
		s    Stats
		want []string
		not  []string
	}{
		{"passed", done, Stats{Items: 80, GPUs: 4, Passed: true, Wall: 2640, Utilisation: 0.994, AboveBound: 0.006},
			[]string{"## ✓ sgpu-queue: all 80 items passed\n", "**wall 44m00s** · 80 items on 4 GPUs · 0 failed · utilisation 99.4 % · 0.6 % above the lower bound"},
			[]string{"[!WARNING]"}},
		{"failed", done, Stats{Items: 80, Failed: 3, GPUs: 4}, []string{"## ✗ sgpu-queue: 3 of 80 items failed\n"}, []string{"[!WARNING]"}},
		{"cancelled", cancelled, Stats{Items: 80, Finished: 14, Failed: 70, Wall: 1501.5,
			Missing: []verdict.Item{{ItemID: record.ItemID{Label: "s", Tag: "a|b"}}, {ItemID: record.ItemID{Label: "s", Tag: "<c>"}}}},
			[]string{"## ✗ sgpu-queue: cancelled, 14 of 80 items finished, 70 failed", "**The run was cancelled** at t+25:01",
				"**2 queued item(s) produced no timing row** (did not run before the cancel; counted as failed): `s/a|b`, `s/<c>`.\n"},
			[]string{"never ended"}},
		{"interrupted", interrupted, Stats{Items: 3, Finished: 1, Failed: 2, Missing: []verdict.Item{{ItemID: record.ItemID{Label: "x"}}, {ItemID: record.ItemID{Label: "y"}}}},
			[]string{"## ✗ sgpu-queue: interrupted, 1 of 3 items finished", "**The item phase never ended**", "(never finished; counted as failed): `x`, `y`."},
			nil},
		{"many missing: ten named", done, Stats{Items: 30, Missing: make([]verdict.Item, 30)},
			[]string{"and 20 more (see *Items that never finished*)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &record.Run{Meta: tt.m}
			h := headline(r, tt.s, Options{}) + itemsLine(r, tt.s, Options{})
			for _, w := range tt.want {
				if !strings.Contains(h, w) {
					t.Errorf("headline lacks %q:\n%s", w, h)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(h, n) {
					t.Errorf("headline has %q:\n%s", n, h)
				}
			}
		})
	}
}

// A run with multi-GPU items: work, bound and utilisation in GPU-seconds; a block
// counts on each of its GPUs (busy, items, gaps); the hindsight replays blocks.
func TestComputeMultiGPU(t *testing.T) {
	r := &record.Run{
		Meta: record.Meta{GPUs: []string{"0", "1", "2", "3"}, Finished: true, Suites: []record.MetaSuite{{Label: "m", LogFile: "m.log", Mode: "list"}}},
		Attempts: []record.Attempt{
			{ItemID: record.ItemID{Label: "m", Tag: "all"}, GPUs: []string{"0", "1", "2", "3"}, Secs: 10, StartOff: 0, EndOff: 10, Outcome: outcome.OK},
			{ItemID: record.ItemID{Label: "m", Tag: "pair"}, GPUs: []string{"2", "3"}, Secs: 4, StartOff: 10.5, EndOff: 14.5, Outcome: outcome.OK},
			{ItemID: record.ItemID{Label: "m", Tag: "one"}, GPUs: []string{"0"}, Secs: 6, StartOff: 10.25, EndOff: 16.25, Outcome: outcome.OK},
		},
	}
	s := Compute(r, verdict.Decide(r))
	if !s.Mixed || s.Work != 40+8+6 || s.Largest.Secs != 10 || s.Wall != 16.25 {
		t.Fatalf("mixed %v work %v largest %v wall %v", s.Mixed, s.Work, s.Largest.Secs, s.Wall)
	}
	if want := 54.0 / 4; s.Bound != want || math.Abs(s.Utilisation-54/(16.25*4)) > 1e-9 {
		t.Errorf("bound %v (want %v), utilisation %v", s.Bound, want, s.Utilisation)
	}
	busy := map[string]float64{}
	items := map[string]int{}
	for _, g := range s.PerGPU {
		busy[g.GPU], items[g.GPU] = g.Busy, len(g.Rows)
	}
	if busy["0"] != 16 || busy["1"] != 10 || busy["2"] != 14 || busy["3"] != 14 || items["2"] != 2 || len(s.PerGPU) != 4 {
		t.Errorf("per GPU %+v", s.PerGPU)
	}
	// Gaps: gpu0 10 → 10.25, gpu2 and gpu3 10 → 10.5.
	if s.Gaps.Count != 3 || math.Abs(s.Gaps.Total-1.25) > 1e-9 {
		t.Errorf("gaps %+v", s.Gaps)
	}
	// The 4-GPU item first, then the pair and the single side by side: 16 s.
	if s.Split.Before != 16 {
		t.Errorf("hindsight %v, want 16", s.Split.Before)
	}
}
