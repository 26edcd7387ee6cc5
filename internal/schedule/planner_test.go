package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
)

func known(ws ...float64) []Item {
	items := make([]Item, len(ws))
	for i, w := range ws {
		items[i] = Item{ItemID: record.ItemID{Label: "s", Tag: fmt.Sprint(i)}, Weight: w, Known: true, Seq: i}
	}
	return items
}

func weightsOf(items []Item) []float64 {
	w := make([]float64, len(items))
	for i, it := range items {
		w[i] = it.Weight
	}
	return w
}

// optimum is the best makespan of ws on slots GPUs, by exhaustive search.
func optimum(ws []float64, slots int) float64 {
	loads := make([]float64, slots)
	best := math.Inf(1)
	var rec func(k int)
	rec = func(k int) {
		if k == len(ws) {
			best = min(best, slices.Max(loads))
			return
		}
		for s := range loads {
			loads[s] += ws[k]
			if loads[s] < best {
				rec(k + 1)
			}
			loads[s] -= ws[k]
			if loads[s] == 0 {
				break // the other empty slots are the same
			}
		}
	}
	rec(0)
	return best
}

func TestLPTOrderIsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		items := make([]Item, rng.IntN(30))
		for i := range items {
			items[i] = Item{ItemID: record.ItemID{Tag: fmt.Sprint(i)}, Weight: float64(rng.IntN(5)), Known: rng.IntN(4) > 0, Seq: rng.IntN(10)}
		}
		sorted := slices.Clone(items)
		Order(sorted)
		var got []Item
		for _, i := range LPTOrder(items) {
			got = append(got, items[i])
		}
		if !slices.Equal(got, sorted) && len(items) > 0 {
			t.Fatalf("LPTOrder %v\nOrder    %v", got, sorted)
		}
	}
}

func TestNewQueue(t *testing.T) {
	items := known(5, 3, 1)
	for _, p := range append(Policies(), "") {
		q, err := NewQueue(p, items, 2)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		tl, err := Replay(q, weightsOf(items), 2)
		if err != nil || tl.Wall != 5 {
			t.Errorf("%q: wall %v (%v), want 5", p, tl, err)
		}
	}
	_, err := NewQueue("fifo", items, 2)
	if err == nil || !strings.Contains(err.Error(), `"fifo"`) || !strings.Contains(err.Error(), "planned or lpt") {
		t.Errorf("unknown policy: %v", err)
	}
	if Policies()[0] != DefaultPolicy {
		t.Errorf("Policies()[0] = %q, want the default %q", Policies()[0], DefaultPolicy)
	}
}

// TestPlanOptimum: tables where LPT is known to miss the optimum (Graham's worst
// cases); the planned queue, replayed with exact weights, finishes at the optimum.
func TestPlanOptimum(t *testing.T) {
	tests := []struct {
		name    string
		w       []float64
		slots   int
		lpt     float64
		optimum float64
	}{
		{"2 GPUs", []float64{3, 3, 2, 2, 2}, 2, 7, 6},
		{"3 GPUs, Graham", []float64{5, 5, 4, 4, 3, 3, 3}, 3, 11, 9},
		{"4 GPUs, Graham", []float64{7, 7, 6, 6, 5, 5, 4, 4, 4}, 4, 15, 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := known(tc.w...)
			if o := optimum(tc.w, tc.slots); o != tc.optimum {
				t.Fatalf("test table: optimum %g, not %g", o, tc.optimum)
			}
			p := NewPlan(items, tc.slots)
			if !p.Use || p.LPTMakespan != tc.lpt || p.Makespan != tc.optimum {
				t.Fatalf("plan: use %v, %g (LPT %g), want use, %g (LPT %g): %s", p.Use, p.Makespan, p.LPTMakespan, tc.optimum, tc.lpt, p.Note)
			}
			for _, policy := range []struct {
				name string
				want float64
			}{{PolicyPlanned, tc.optimum}, {PolicyLPT, tc.lpt}} {
				q, _ := NewQueue(policy.name, items, tc.slots)
				tl, err := Replay(q, tc.w, tc.slots)
				if err != nil || tl.Wall != policy.want {
					t.Errorf("%s: wall %v (%v), want %g", policy.name, tl.Wall, err, policy.want)
				}
			}
		})
	}
}

// TestPlanNeverWorse: on random small tables the plan is never worse than LPT and
// never better than the optimum, and the planned queue's exact replay matches the
// plan it reports.
func TestPlanNeverWorse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	hits := 0
	const trials = 300
	for trial := 0; trial < trials; trial++ {
		slots := 2 + rng.IntN(2)
		ws := make([]float64, 2+rng.IntN(8))
		for i := range ws {
			ws[i] = float64(1 + rng.IntN(20))
		}
		items := known(ws...)
		p := NewPlan(items, slots)
		opt := optimum(ws, slots)
		planLoad := slices.Max(p.Loads)
		if planLoad > p.LPTMakespan || planLoad < opt {
			t.Fatalf("%v on %d: plan %g, LPT %g, optimum %g", ws, slots, planLoad, p.LPTMakespan, opt)
		}
		if planLoad == opt {
			hits++
		}
		tl, err := Replay(p.Queue(items), ws, slots)
		if err != nil {
			t.Fatal(err)
		}
		if tl.Wall != p.Makespan || tl.Wall > p.LPTMakespan {
			t.Fatalf("%v on %d: replayed %g, plan says %g (LPT %g)", ws, slots, tl.Wall, p.Makespan, p.LPTMakespan)
		}
	}
	// The local search is a heuristic; on tables this small it nearly always
	// finds the optimum.
	if hits < trials*95/100 {
		t.Errorf("plan optimal in %d of %d small tables, want at least 95 %%", hits, trials)
	}
}

func TestPlanDecision(t *testing.T) {
	withUnknown := known(7, 7, 6, 6, 5, 5, 4, 4, 4)
	withUnknown[3].Known, withUnknown[3].Weight = false, DefaultWeight
	tests := []struct {
		name  string
		items []Item
		slots int
		use   bool
		note  string
	}{
		{"LPT is optimal", known(4, 3, 3, 2), 2, false, "within 0.1 %"},
		{"one GPU", known(4, 3, 3, 2), 1, false, "within 0.1 %"},
		{"more GPUs than items", known(4, 3), 3, false, "within 0.1 %"},
		{"no items", nil, 4, false, "within 0.1 %"},
		{"unknown item", withUnknown, 4, false, "1 item(s) without a weight"},
		// Optimal 15 (8+7, 6+5+4) against LPT's 17, but with 5 items the plan's
		// order is fragile: with ±50 % noise it loses to longest-first.
		{"fragile", known(8, 7, 6, 5, 4), 2, false, "not with ±50 % noise"},
		{"planned", known(7, 7, 6, 6, 5, 5, 4, 4, 4), 4, true, "follows a plan: 12 s on the weights where LPT takes 15 s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlan(tc.items, tc.slots)
			if p.Use != tc.use || !strings.Contains(p.Note, tc.note) {
				t.Errorf("use %v, note %q; want %v, %q", p.Use, p.Note, tc.use, tc.note)
			}
			again := NewPlan(tc.items, tc.slots)
			if again.Use != p.Use || !slices.Equal(again.Order, p.Order) {
				t.Error("same table, different plan")
			}
		})
	}
}

// TestPlanUnknownFirst: with unknown items the planned queue is LPT's: unknown
// items first in listing order, then longest first.
func TestPlanUnknownFirst(t *testing.T) {
	items := known(1, 9, 5, 2)
	items[0].Known, items[0].Weight = false, DefaultWeight
	items[3].Known, items[3].Weight = false, DefaultWeight
	q := NewPlanned(items, 2)
	var got []int
	for q.Len() > 0 {
		i, _ := q.Next(len(got) % 2)
		got = append(got, i)
	}
	if want := []int{0, 3, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// graham4 is Graham's table on 4 GPUs: LPT 15, plan 12.
func graham4() (Plan, []Item) {
	items := known(7, 7, 6, 6, 5, 5, 4, 4, 4)
	return NewPlan(items, 4), items
}

// TestPlannedFollowsPlan: with exact weights every item starts at its planned time.
func TestPlannedFollowsPlan(t *testing.T) {
	p, items := graham4()
	tl, err := Replay(p.Queue(items), weightsOf(items), 4)
	if err != nil {
		t.Fatal(err)
	}
	for s, list := range p.Slots {
		at := 0.0
		for _, i := range list {
			if tl.Start[i] != at {
				t.Errorf("item %d (slot %d) started at %g, planned %g", i, s, tl.Start[i], at)
			}
			at += items[i].Weight
		}
	}
}

// TestPlannedFallsBack: once a GPU asks far from its planned turn (here the first
// 7 s item takes 10× longer), the rest goes longest first.
func TestPlannedFallsBack(t *testing.T) {
	p, items := graham4()
	dur := weightsOf(items)
	first := p.Order[0]
	dur[first] *= 10
	q := p.planned()
	tl, err := Replay(q, dur, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !q.fell {
		t.Fatal("did not fall back to LPT's order")
	}
	if tl.Wall != dur[first] {
		t.Errorf("wall %g, want the slow item's %g", tl.Wall, dur[first])
	}
}

// TestPlannedSwapsOnTies: two GPUs free at once may ask in either order; the queue
// swaps which plan each follows rather than falling back.
func TestPlannedSwapsOnTies(t *testing.T) {
	p, items := graham4()
	q := p.planned()
	// All four are free at t=0; ask in reverse.
	for s := 3; s >= 0; s-- {
		if _, ok := q.Next(s); !ok {
			t.Fatal("nothing handed out")
		}
	}
	if q.fell {
		t.Error("fell back on a tie")
	}
	_ = items
}

// TestRequeueAvoid drives both policies by hand: a retry goes after everything
// else, is not handed to the GPU it avoids while that GPU could wait for another,
// and Next(AnySlot) hands it out all the same.
func TestRequeueAvoid(t *testing.T) {
	p, items := graham4()
	queues := map[string]Queue{
		PolicyLPT:     NewPull(LPTOrder(items)),
		PolicyPlanned: p.Queue(items),
	}
	for name, q := range queues {
		t.Run(name, func(t *testing.T) {
			first, _ := q.Next(0)
			q.Requeue(first, 0)
			if q.Len() != len(items) {
				t.Fatalf("Len %d after a requeue, want %d", q.Len(), len(items))
			}
			seen := map[int]int{}
			for k := 0; k < len(items)-1; k++ {
				i, ok := q.Next(k % 4)
				if !ok {
					t.Fatalf("Next %d: nothing", k)
				}
				seen[i]++
			}
			if seen[first] != 0 {
				t.Fatalf("retry of %d handed out before the rest", first)
			}
			if i, ok := q.Next(0); ok {
				t.Fatalf("GPU 0 got item %d, which avoids it", i)
			}
			i, ok := q.Next(1)
			if !ok || i != first {
				t.Fatalf("GPU 1 got %d %v, want the retry %d", i, ok, first)
			}
			q.Requeue(first, 1)
			if _, ok := q.Next(1); ok {
				t.Fatal("GPU 1 got the retry that avoids it")
			}
			if i, ok := q.Next(AnySlot); !ok || i != first {
				t.Fatalf("Next(AnySlot) = %d %v, want %d", i, ok, first)
			}
			if q.Len() != 0 {
				t.Fatalf("Len %d at the end", q.Len())
			}
			if _, ok := q.Next(2); ok {
				t.Fatal("an empty queue handed something out")
			}
		})
	}
}

// TestEveryItemOnce is a property test: on random tables (unknown items, ties,
// zero weights), random GPU counts, noisy durations and random failures that are
// requeued away from their GPU, every policy hands out every item exactly once
// plus once per retry, and never stalls.
func TestEveryItemOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		n := rng.IntN(60)
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{ItemID: record.ItemID{Tag: fmt.Sprint(i)}, Weight: float64(rng.IntN(50)), Known: rng.IntN(10) > 0, Seq: i}
			if !items[i].Known {
				items[i].Weight = DefaultWeight
			}
		}
		slots := 1 + rng.IntN(6)
		noise := rng.Float64()
		for _, policy := range Policies() {
			q, err := NewQueue(policy, items, slots)
			if err != nil {
				t.Fatal(err)
			}
			handed := make([]int, n)
			retries := make([]int, n)
			drive(t, rng, q, items, slots, noise, handed, retries)
			for i := range items {
				if handed[i] != 1+retries[i] {
					t.Fatalf("%s, trial %d: item %d handed out %d times, retried %d", policy, trial, i, handed[i], retries[i])
				}
			}
		}
	}
}

// drive runs q like the dispatcher, with an item failing (and requeued away from its
// GPU) now and then.
func drive(t *testing.T, rng *rand.Rand, q Queue, items []Item, slots int, noise float64, handed, retries []int) {
	t.Helper()
	type running struct {
		item, slot int
		end        float64
	}
	var run []running
	idle := make([]int, slots)
	for i := range idle {
		idle[i] = i
	}
	for steps := 0; ; steps++ {
		if steps > 100000 {
			t.Fatal("no end")
		}
		var still []int
		for _, s := range idle {
			if i, ok := q.Next(s); ok {
				handed[i]++
				w := items[i].Weight
				if !items[i].Known {
					w = 10
				}
				run = append(run, running{i, s, w * (1 + noise*(2*rng.Float64()-1))})
			} else {
				still = append(still, s)
			}
		}
		idle = still
		if len(run) == 0 && len(idle) > 0 && q.Len() > 0 {
			i, ok := q.Next(AnySlot)
			if !ok {
				t.Fatalf("stalled with %d items", q.Len())
			}
			handed[i]++
			run = append(run, running{i, idle[0], 1})
			idle = idle[1:]
		}
		if len(run) == 0 {
			if q.Len() != 0 {
				t.Fatalf("Len %d with nothing running", q.Len())
			}
			return
		}
		k := 0
		for j := range run {
			if run[j].end < run[k].end {
				k = j
			}
		}
		r := run[k]
		run = append(run[:k], run[k+1:]...)
		for j := range run {
			run[j].end -= r.end
		}
		if retries[r.item] < 2 && rng.IntN(8) == 0 {
			retries[r.item]++
			avoid := r.slot
			if slots == 1 {
				avoid = -1
			}
			q.Requeue(r.item, avoid)
		}
		idle = append(idle, r.slot)
	}
}
